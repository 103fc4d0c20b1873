# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's boot-time script and the module_utils files it runs, as one Python zip application.

The boot scripts (``inferops-irq-pin``, ``inferops-nic-queues``, ``inferops-nvmf-connect``,
``inferops-nvmet-restore``) run the modules' own code at boot, outside Ansible, with
``python3 -ES``. One file carries it: the script as ``__main__.py`` and the module_utils files
it needs as the package ``inferops``, which Python imports from the zip (``python3 file.pyz``
puts the file first on ``sys.path``). The package keeps module_utils' layout: ``inferops/common/sysfs.py``,
``inferops/interrupts/irq.py``, an empty ``__init__.py`` per package; the scripts import
``from inferops.interrupts import irq`` and the files each other by relative imports, within their package
(``from . import irq_devices``) and across (``from ..common import sysfs``), which is how closure() finds them.
One file is one copy per run (it was one per file, 10 to 26 s each in a lab guest) and is replaced
atomically, so a boot never runs a half-written package.

``build()`` is deterministic: the same sources give the same bytes on any controller (entries
sorted, stored uncompressed, fixed times and modes), so the copy is idempotent by checksum.
``diff()`` is what ``--diff`` shows of replacing one installed package with another.

Controller-side only (the action plugin inferops.node.boot_package and the unit tests).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import sys
import zipfile

__all__ = ['BootPackageError', 'requested', 'closure', 'build', 'diff']

PACKAGE = 'inferops'
COMMENT = (b'inferops.node boot package: a boot script and the collection module_utils it runs '
           b'(plugins/module_utils). Managed by Ansible; local changes are overwritten.')
# The zip format's earliest time: no controller clock or checkout time in the file.
EPOCH = (1980, 1, 1, 0, 0, 0)


class BootPackageError(Exception):
    """A file cannot run as part of the package; the message names the file and the import."""


def _optional_imports(tree):
    """Import nodes inside ``try: ... except ImportError`` (the code works without them)."""
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ('ImportError', 'ModuleNotFoundError')
                for h in node.handlers):
            for stmt in node.body:
                optional.update(id(n) for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return optional


def requested(script_source):
    """The module_utils modules a script imports from the package, as dotted names below it:
    ``from inferops.interrupts import irq, nic_queues`` asks for ``interrupts.irq`` and ``interrupts.nic_queues``."""
    names = []
    for node in ast.walk(ast.parse(script_source)):
        if isinstance(node, ast.ImportFrom) and not node.level and (
                node.module == PACKAGE or (node.module or '').startswith(PACKAGE + '.')):
            prefix = node.module[len(PACKAGE) + 1:]
            for alias in node.names:
                name = prefix + '.' + alias.name if prefix else alias.name
                if name not in names:
                    names.append(name)
    return names


def _path(name, module_utils_dir):
    return os.path.join(module_utils_dir, *name.split('.')) + '.py'


def _relative(name, node, module_utils_dir):
    """The modules a relative import of the module ``name`` (dotted, below module_utils) loads: level 1 is
    its own package (``from . import sysfs``), level 2 the one above (``from ..common import sysfs``,
    ``from ..common.cpulist import to_cpus``)."""
    where = '%s.py (%s)' % (name.replace('.', '/'), ast.unparse(node))
    base = name.split('.')[:-1]
    if node.level - 1 > len(base):
        raise BootPackageError('%s: the import goes above module_utils' % where)
    base = base[:len(base) - (node.level - 1)] + (node.module.split('.') if node.module else [])
    if base and os.path.isfile(_path('.'.join(base), module_utils_dir)):
        return ['.'.join(base)]  # from .module import names
    # from .package import modules: each name a module file (the packages' __init__.py are empty)
    return ['.'.join(base + [alias.name]) for alias in node.names]


def closure(names, module_utils_dir):
    """``names`` and every module they import (relative imports, within and across module_utils' packages),
    sorted: the files the package needs, as dotted names below module_utils (``common.sysfs``).

    Raises BootPackageError for a missing file or an import a host without Ansible cannot satisfy
    (neither the standard library, nor a module_utils file, nor inside ``try/except ImportError``)."""
    wanted, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        path = _path(name, module_utils_dir)
        try:
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
        except (IOError, OSError) as exc:
            raise BootPackageError('%s.py: not in %s (%s)' % (name.replace('.', '/'), module_utils_dir, exc))
        wanted.add(name)
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                todo.extend(_relative(name, node, module_utils_dir))
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in optional:
                modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
                for module in modules:
                    if module.split('.')[0] not in sys.stdlib_module_names and module != '__future__':
                        raise BootPackageError(
                            '%s.py imports %s, which a host without Ansible lacks: a boot script may only '
                            'use the standard library and module_utils files (relative imports)'
                            % (name.replace('.', '/'), module))
    return sorted(wanted)


def _entry(name, data):
    info = zipfile.ZipInfo(name, date_time=EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = 3  # Unix, so that the mode below is read as one
    info.external_attr = 0o100644 << 16
    return info, data


def build(script_path, module_utils_dir):
    """(zip bytes, module_utils modules in it as dotted names) of the script at ``script_path``.

    The zip: ``__main__.py``, then ``inferops/__init__.py`` and each module at ``inferops/<package>/<file>.py``
    with an empty ``__init__.py`` per package, as module_utils lays them out; entries sorted by name."""
    with open(script_path, 'rb') as handle:
        script = handle.read()
    names = closure(requested(script.decode('utf-8')), module_utils_dir)
    files = {PACKAGE + '/__init__.py': b''}
    for name in names:
        parts = name.split('.')
        for depth in range(1, len(parts)):
            files.setdefault('/'.join([PACKAGE] + parts[:depth] + ['__init__.py']), b'')
        with open(_path(name, module_utils_dir), 'rb') as handle:
            files['/'.join([PACKAGE] + parts) + '.py'] = handle.read()
    entries = [_entry('__main__.py', script)] + [_entry(name, files[name]) for name in sorted(files)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        archive.comment = COMMENT
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue(), names


def _members(data):
    """{name: bytes} of the zip ``data``; raises zipfile.BadZipFile (or another error) if it is not one."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return dict((name, archive.read(name)) for name in archive.namelist())


def _listing(dest, data, members):
    """One line for the whole file (its sha1 is what ansible.builtin.copy returns as ``checksum``), then
    ``sha1  size  name`` per file in it, as ``unzip -p <dest> <name> | sha1sum`` gives it."""
    lines = ['%s: sha1 %s, %d bytes' % (dest, hashlib.sha1(data).hexdigest(), len(data))]
    lines.extend('%s  %6d  %s' % (hashlib.sha1(content).hexdigest(), len(content), name)
                 for name, content in sorted(members.items()))
    return '\n'.join(lines) + '\n'


def _side(diff, side, content, max_size):
    """Set ``before``/``after`` of one packaged file, or copy's marker when the callback would not show it."""
    prefix = 'dst' if side == 'before' else 'src'
    if max_size > 0 and len(content) > max_size:
        diff[prefix + '_larger'] = max_size
        return
    try:
        diff[side] = content.decode('utf-8')
    except UnicodeDecodeError:
        diff[prefix + '_binary'] = 1


def diff(dest, before, after, max_size, unread=None):
    """Ansible diff entries (a list, in the callback's format) of installing the package ``after`` (bytes)
    at ``dest`` over ``before`` (bytes, or None when nothing could be read: ``unread`` says why).

    What an operator reviewing ``--check --diff`` needs to see is which boot-time code changes and how; the
    zip itself is binary, so ansible.builtin.copy could only say "diff skipped". The entries are:

    * a listing of the files in the package, with their sha1 and size, before and after: always there when
      the file changes, short, and it names every file that is added, removed or changed (and the zip's own
      sha1, so a zip rebuilt with the same files still shows a line that changes);
    * a text diff of each file in the package that is added, removed or changed, named
      ``<dest>/<file>`` as Python's zipimport names it - but only when an earlier package is installed.
      A first install (no file, or one that is not a zip) lists its files and does not print them: they are
      the collection's own module_utils at this version, thousands of lines per role and host, which would
      bury the rest of the run's diff. A file larger than ``max_size`` (the callback's
      MAX_FILE_SIZE_FOR_DIFF, 0 for no limit) or not UTF-8 gets ansible.builtin.copy's "diff skipped" marker.

    Nothing (an empty list) when the bytes are the same.
    """
    if before == after:
        return []
    new = _members(after)
    listing = {'after_header': dest, 'after': _listing(dest, after, new)}
    if before is None:
        listing.update(before_header='%s (%s)' % (dest, unread or 'not read'), before='')
        return [listing]
    try:
        old = _members(before)
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:  # not a zip, or a truncated one
        listing.update(before_header='%s (not a zip application: %s)' % (dest, exc), before=_listing(dest, before, {}))
        return [listing]
    listing.update(before_header=dest, before=_listing(dest, before, old))
    entries = [listing]
    for name in sorted(set(old) | set(new)):
        if old.get(name) == new.get(name):
            continue
        path = '%s/%s' % (dest, name)
        entry = {'before_header': path if name in old else path + ' (absent)',
                 'after_header': path if name in new else path + ' (removed)'}
        _side(entry, 'before', old.get(name, b''), max_size)
        _side(entry, 'after', new.get(name, b''), max_size)
        entries.append(entry)
    return entries
