# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The package /usr/local/lib/inferops as a role installs it for its boot-time script (plain copies of
module_utils files, run with ``python3 -ES``: no Ansible, no site-packages).

* ``role_package(role)`` - the module_utils file names the role installs, in the order it writes them
  (read from the role's ``vars/main.yml``, so a test sees a file the role forgets);
* ``import_problems(names)`` - what keeps those files from running as that package: an import that is
  neither the standard library nor a sibling written before it;
* ``installed_script(role, script, installed_as, lib)`` - the role's script run from a copy of that layout
  (the package in ``lib/inferops``, the script beside it), with no ``inferops`` module left loaded after.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import re
import shutil
import sys

import yaml

__all__ = ['COLLECTION', 'MODULE_UTILS', 'role_package', 'import_problems', 'installed_script']

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODULE_UTILS = os.path.join(COLLECTION, 'plugins', 'module_utils')
LIB = '/usr/local/lib/inferops/'
# Imported inside try/except ImportError (nvme_common: the NQN/address rules work without it).
OPTIONAL = ('netaddr',)


def role_package(role):
    """``['sysfs.py', ...]``: the files of /usr/local/lib/inferops the role writes, in its order."""
    with open(os.path.join(COLLECTION, 'roles', role, 'vars', 'main.yml')) as handle:
        role_vars = yaml.safe_load(handle)
    if role == 'irq_affinity':
        return [os.path.basename(f['path']) for f in role_vars['__irq_affinity_files'] if f['path'].startswith(LIB)]
    if role == 'nic_queues':
        names = role_vars['__nic_queues_package'].split('|')[0]
        return ['%s.py' % name for name in re.findall(r"'(\w+)'", names)]
    if role == 'nvmeof_initiator':
        return [os.path.basename(f['dest']) for f in role_vars['__nvmeof_initiator_boot_files']
                if f['dest'].startswith('{{ __nvmeof_initiator_lib_dir }}/')]
    raise ValueError(role)


def _stdlib(module):
    return module in sys.stdlib_module_names


def import_problems(names):
    """Every import of the files ``names`` that the installed package cannot satisfy, as text."""
    problems = []
    for at, name in enumerate(names):
        with open(os.path.join(MODULE_UTILS, name)) as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                siblings = [node.module] if node.module else [alias.name for alias in node.names]
                for sibling in siblings:
                    if '%s.py' % sibling not in names[:at]:
                        problems.append('%s imports %s, not written before it' % (name, sibling))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for module in [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]:
                    top = module.split('.')[0]
                    if not _stdlib(top) and top not in OPTIONAL:
                        problems.append('%s imports %s' % (name, module))
    return problems


def _host_modules():
    return [m for m in sys.modules if m == 'inferops' or m.startswith('inferops.')]


@contextlib.contextmanager
def installed_script(role, script, installed_as, lib):
    """The script ``roles/<role>/files/<script>``, loaded from ``lib/<installed_as>`` beside the package
    ``lib/inferops`` (the files of ``role_package(role)``), as the host runs it; ``lib`` is a pathlib.Path.

    The script puts ``lib`` first on sys.path and imports the package: sys.path is restored and every
    ``inferops`` module unloaded afterwards, so the next test imports the package afresh.
    """
    (lib / 'inferops').mkdir(parents=True)
    for name in role_package(role):
        shutil.copy(os.path.join(MODULE_UTILS, name), str(lib / 'inferops' / name))
    shutil.copy(os.path.join(COLLECTION, 'roles', role, 'files', script), str(lib / installed_as))
    assert not _host_modules()
    saved_path = sys.path
    sys.path = list(saved_path)
    spec = importlib.util.spec_from_file_location(os.path.splitext(script)[0] + '_script', str(lib / installed_as))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path = saved_path
        for name in _host_modules():
            del sys.modules[name]
