# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's boot-time script as the host runs it: the zip application inferops.node.boot_package installs
(the script as ``__main__.py``, the module_utils files it imports as the package ``inferops``), built by
the same code (module_utils/boot_package.py).

* ``write_package(role, script, lib)`` - that zip, written to ``lib/<script stem>.pyz`` (``lib`` a
  pathlib.Path); run it with ``python3 -ES`` as the role's wrapper does;
* ``installed_script(role, script, lib)`` - the script loaded from that zip in this process, with the zip
  first on sys.path as ``python3 file.pyz`` puts it, and no ``inferops`` module left loaded after.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import zipfile

from ansible_collections.inferops.node.plugins.module_utils import boot_package

__all__ = ['MODULE_UTILS', 'role_script', 'write_package', 'installed_script']

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
