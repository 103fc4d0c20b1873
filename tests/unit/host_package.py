# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's boot-time script as the host runs it: the zip application inferops.node.boot_package installs
(the script as ``__main__.py``, the module_utils files it imports as the package ``inferops``), built by
the same code (module_utils/common/boot_package.py).

* ``write_package(role, script, lib)`` - that zip, written to ``lib/<script stem>.pyz`` (``lib`` a
  pathlib.Path); run it with ``python3 -ES`` as the role's wrapper does;
* ``installed_script(role, script, lib)`` - the script loaded from that zip in this process, with the zip
  first on sys.path as ``python3 file.pyz`` puts it, and no ``inferops`` module left loaded after;
* ``older_package(data)`` - that zip as an earlier release would have shipped it, to diff against.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import types
import zipfile

from ansible_collections.inferops.node.plugins.module_utils.common import boot_package

__all__ = ['MODULE_UTILS', 'role_script', 'write_package', 'installed_script', 'older_package', 'OLDER_LINE']

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODULE_UTILS = os.path.join(COLLECTION, 'plugins', 'module_utils')


def role_script(role, script):
    """Path of the boot script ``roles/<role>/files/<script>``."""
    return os.path.join(COLLECTION, 'roles', role, 'files', script)


def write_package(role, script, lib):
    """Path of the zip application of ``roles/<role>/files/<script>``, written under ``lib``."""
    data, dummy = boot_package.build(role_script(role, script), MODULE_UTILS)
    lib.mkdir(parents=True, exist_ok=True)
    path = lib / (os.path.splitext(script)[0] + '.pyz')
    path.write_bytes(data)
    return path


# What older_package() changes: a line in nvmet.py, sysfs.py not shipped yet, a file shipped then and no more.
OLDER_LINE = '# inferops.node 0.1: restored subsystems are logged one per line\n'


def older_package(data):
    """The package ``data`` (zip bytes of the nvmeof_target role's script) as an earlier release shipped it:
    ``inferops/fabric/nvmet.py`` with one line more (OLDER_LINE, after its first line), no
    ``inferops/common/sysfs.py``, and an ``inferops/configfs.py`` since folded into nvmet.py. Same zip
    layout as build() writes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as new, zipfile.ZipFile(buffer, 'w') as old:
        old.comment = new.comment
        for info in new.infolist():
            content = new.read(info)
            if info.filename == 'inferops/common/sysfs.py':
                continue
            if info.filename == 'inferops/fabric/nvmet.py':
                first, rest = content.split(b'\n', 1)
                content = first + b'\n' + OLDER_LINE.encode() + rest
            old.writestr(info, content)
        gone = zipfile.ZipInfo('inferops/configfs.py', date_time=boot_package.EPOCH)
        gone.external_attr = 0o100644 << 16
        old.writestr(gone, b'CONFIGFS = "/sys/kernel/config"\n')
    return buffer.getvalue()


def _host_modules():
    return [m for m in sys.modules if m == 'inferops' or m.startswith('inferops.')]


@contextlib.contextmanager
def installed_script(role, script, lib):
    """The script of ``roles/<role>/files/<script>``, run from its zip application under ``lib`` as a module
    (not as ``__main__``, so its main() is not called): it imports the package ``inferops`` from the zip.

    sys.path is restored and every ``inferops`` module unloaded afterwards, so the next test imports the
    package afresh.
    """
    path = str(write_package(role, script, lib))
    with zipfile.ZipFile(path) as archive:
        source = archive.read('__main__.py')
    assert not _host_modules()
    saved_path = sys.path
    sys.path = [path] + list(saved_path)
    module = types.ModuleType(os.path.splitext(script)[0] + '_script')
    module.__file__ = path + '/__main__.py'
    try:
        exec(compile(source, module.__file__, 'exec'), module.__dict__)  # pylint: disable=exec-used
        yield module
    finally:
        sys.path = saved_path
        for name in _host_modules():
            del sys.modules[name]
