# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check's zip application: the checker script, the collection's info modules and the code
they and the audit's catalogue import, at the paths they have on the controller.

The boot packages (``boot_package.py``) hold module_utils files that import only the standard library and
each other (relative imports). The health check runs more: the audit's info modules themselves (their
``main()``, in check mode) and ``audit_catalogue``, which import ``ansible.module_utils`` and each other by
their collection name. Rewriting them would be a second copy of the audit; so the package keeps them as they
are, at ``ansible_collections/inferops/node/plugins/...``, with the ``ansible/module_utils`` files they import
from the controller's ansible-core - what AnsiballZ sends with every module it runs.

* ``closure(names, roots)`` - the files of the modules ``names`` and of everything they import, through the
  imports Python would follow (absolute and relative), under the roots; a module outside the roots must be
  of the standard library, or imported inside ``try/except ImportError``.
* ``build(script_path, modules, roots)`` - (zip bytes, module names in it): the script's imports and the
  modules ``modules`` it runs by name (importlib), deterministic as ``boot_package.build`` (its entries:
  sorted, stored, fixed times and modes), so a copy is idempotent.

Controller-side only (the action plugin inferops.node.health_package and the unit tests).
"""

from __future__ import annotations

import ast
import io
import os
import sys
import zipfile

from ansible_collections.inferops.node.plugins.module_utils.common.boot_package import BootPackageError, _entry

__all__ = ['COLLECTION', 'EXTRA', 'build', 'closure', 'module_file']

COLLECTION = 'ansible_collections.inferops.node'
COMMENT = (b'inferops.node node health check: the checker, the audit\'s info modules and the code they import '
           b'(the collection\'s and ansible.module_utils). Managed by Ansible; local changes are overwritten.')
# Imported by name at run time (importlib), which no import statement shows: ansible-core 2.19+ loads the JSON
# profile of the module's arguments and result this way. A package listed here is shipped whole, if it exists.
EXTRA = ('ansible.module_utils._internal._json._profiles',)
# Packages whose __init__.py is empty in the zip, as AnsiballZ sends it: the controller's ``ansible/__init__.py``
# imports the controller.
EMPTY = ('ansible',)


# An import inside ``try`` with one of these handlers is optional: ansible.module_utils guards its optional
# dependencies with ``except ImportError`` but also ``except Exception`` (compat/typing.py).
_CAUGHT = ('ImportError', 'ModuleNotFoundError', 'Exception', 'BaseException')


def _handler_names(handler):
    if handler.type is None:
        return ['BaseException']
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [getattr(t, 'id', getattr(t, 'attr', None)) for t in types]


def _optional_imports(tree):
    """ids of the import nodes that never run or may fail: inside ``try`` with a handler of ``_CAUGHT``, or
    under ``if TYPE_CHECKING`` (``t.TYPE_CHECKING``)."""
    optional = set()
    for node in ast.walk(tree):
        body = []
        if isinstance(node, ast.Try) and any(set(_handler_names(h)) & set(_CAUGHT) for h in node.handlers):
            body = node.body
        elif isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.dump(node.test):
            body = node.body
        for stmt in body:
            optional.update(id(n) for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return optional


def module_file(name, roots):
    """(path, is_package) of the module ``name`` below ``roots`` (``{top-level package: directory holding
    it}``), or None when no root holds it."""
    parts = name.split('.')
    if any(top.split('.')[:len(parts)] == parts and top != name for top in roots):
        return None, True  # above a root (ansible_collections, ansible_collections.inferops): an empty package
    for top, base in roots.items():
        top_parts = top.split('.')
        if parts[:len(top_parts)] != top_parts:
            continue
        path = os.path.join(base, *parts[len(top_parts):])
        if os.path.isfile(os.path.join(path, '__init__.py')):
            return os.path.join(path, '__init__.py'), True
        if os.path.isfile(path + '.py'):
            return path + '.py', False
        if os.path.isdir(path):
            return None, True  # a namespace package (the collection's folders): an empty __init__.py in the zip
        return None
    return None


def _ours(name, roots):
    return any(name == top or name.startswith(top + '.') for top in roots)


def _imported(node, name, is_package):
    """The absolute module names an import node may load: the module, and for ``from M import a`` also
    ``M.a`` (a submodule, when one exists)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = name.split('.') if is_package else name.split('.')[:-1]
        base = base[:len(base) - (node.level - 1)]
        module = '.'.join(base + ([node.module] if node.module else []))
    else:
        module = node.module
    return [module] + ['%s.%s' % (module, alias.name) for alias in node.names if alias.name != '*']


def _imports(tree, name, is_package, path, roots):
    """The module names below ``roots`` that ``tree`` (the module ``name`` at ``path``) may import; raises
    BootPackageError for an import a host without Ansible lacks, in the collection's own files."""
    optional = _optional_imports(tree)
    ours = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        modules = _imported(node, name, is_package)
        if _ours(modules[0], roots):
            ours.extend(modules)
        elif (not name.startswith('ansible.') and id(node) not in optional
              and modules[0].split('.')[0] not in sys.stdlib_module_names
              and modules[0] not in ('__future__', '__main__')):
            # The collection's own files (and the script) only: ansible.module_utils guards its optional imports
            # in ways (Python 2 branches of six, ``except Exception``) a reading of the tree cannot follow, and
            # AnsiballZ sends it as it is to every host.
            raise BootPackageError('%s imports %s, which a host without Ansible lacks (neither the standard '
                                   'library, nor below %s)' % (path, modules[0], ', '.join(sorted(roots))))
    return ours


def closure(names, roots):
    """``{module name: (path or None for an empty package, is_package)}`` of ``names``, their parent packages
    and everything they import below ``roots``."""
    found, todo = {}, list(names)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        where = module_file(name, roots)
        if where is None:
            # ``from M import a``: ``a`` is often no module of its own; ``six.moves`` is made at run time.
            continue
        found[name] = where
        parents = name.split('.')
        todo.extend('.'.join(parents[:i]) for i in range(1, len(parents)))
        path, is_package = where
        if path is None or name in EMPTY:
            continue
        with open(path) as handle:
            todo.extend(_imports(ast.parse(handle.read(), path), name, is_package, path, roots))
    return found


def _extra(roots):
    """The modules of the packages of EXTRA that exist under ``roots``."""
    names = []
    for package in EXTRA:
        where = module_file(package, roots)
        if where is None or not where[1] or where[0] is None:
            continue
        directory = os.path.dirname(where[0])
        names.append(package)
        names.extend('%s.%s' % (package, entry[:-3]) for entry in sorted(os.listdir(directory))
                     if entry.endswith('.py') and entry != '__init__.py')
    return names


def build(script_path, modules, roots):
    """(zip bytes, sorted module names in it) of the script at ``script_path`` as ``__main__.py`` and the
    modules ``modules`` (dotted names) with what they import."""
    with open(script_path, 'rb') as handle:
        script = handle.read()
    imported = _imports(ast.parse(script, script_path), '__main__', False, script_path, roots)
    found = closure(imported + list(modules) + _extra(roots), roots)
    entries = [_entry('__main__.py', script)]
    for name in sorted(found):
        path, is_package = found[name]
        member = name.replace('.', '/') + ('/__init__.py' if is_package else '.py')
        data = b''
        if path is not None and name not in EMPTY:
            with open(path, 'rb') as handle:
                data = handle.read()
        entries.append(_entry(member, data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as archive:
        archive.comment = COMMENT
        for info, data in sorted(entries, key=lambda entry: entry[0].filename):
            archive.writestr(info, data)
    return buffer.getvalue(), sorted(found)
