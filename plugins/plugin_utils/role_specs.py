# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's declared variables, read on the controller from its meta/argument_specs.yml.

The one reader of a role's variables: the lookup that loads a role's settings for its rules
(``inferops.node.role_settings``), the lookup that refuses variables a role does not know
(``inferops.node.unknown_role_vars``) and the audit's action, which finds the role that declares
each variable a check compares with. A variable is declared once, in the role's argument spec and
its default; nothing else lists it.
"""

from __future__ import annotations

import os

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.common.role_arguments import is_boolean

# This collection's roles: plugins/plugin_utils/../../roles.
ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'roles')


def role_path(role):
    """The directory of this collection's role ``role``."""
    path = os.path.join(ROLES, role)
    if not os.path.isdir(path):
        raise AnsibleError('no role %s in this collection (roles: %s)' % (role, ', '.join(sorted(os.listdir(ROLES)))))
    return path


def role_options(path):
    """``{name: option}`` of every entry point of the role's meta/argument_specs.yml (the first entry point
    that declares a name wins). Every role of the collection has the file."""
    spec_file = os.path.join(path, 'meta', 'argument_specs.yml')
    try:
        with open(spec_file) as handle:
            specs = (yaml.safe_load(handle) or {}).get('argument_specs') or {}
    except (OSError, yaml.YAMLError) as exc:
        raise AnsibleError('cannot read %s: %s' % (spec_file, exc))
    options = {}
    for entry in specs.values():
        for name, option in ((entry or {}).get('options') or {}).items():
            options.setdefault(name, option or {})
    return options


def settings(path, variables, template, strip_prefix=None):
    """``{name: value}`` of every variable the role at ``path`` declares, each templated with ``template``
    from ``variables`` (a role task's variables hold the role's defaults). A value of a ``type: bool`` option
    that Ansible's conversion accepts ("true", "yes", 1) becomes a bool; one it does not accept is left as
    given, for the role's validation to name. ``strip_prefix`` (``nvme_sched_``) is taken off each name.

    A declared variable with no value is an error naming it: every option has its default in the role.
    """
    out = {}
    for name, option in sorted(role_options(path).items()):
        if name not in variables:
            raise AnsibleError('%s: declared in %s/meta/argument_specs.yml but has no value (give it a default in '
                               'the role\'s defaults/main.yml)' % (name, os.path.basename(os.path.normpath(path))))
        value = template(variables[name])
        if option.get('type') == 'bool' and is_boolean(value):
            value = boolean(value, strict=True)
        if strip_prefix and name.startswith(strip_prefix):
            name = name[len(strip_prefix):]
        out[name] = value
    return out
