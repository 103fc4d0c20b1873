# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role input filters shared by playbooks/preflight.yml and the roles' validation.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.common.role_arguments import argument_errors, is_boolean


def role_argument_errors(provided, options):
    """Short messages for the variables in ``provided`` against a role's argument spec ``options``."""
    if not isinstance(provided, dict) or not isinstance(options, dict):
        raise AnsibleFilterError('role_argument_errors: expects a mapping of variables and a mapping of options')
    return argument_errors(options, provided)


def boolean_errors(names_values):
    """'<name> = <value>: must be a boolean ...' for each value Ansible's bool conversion refuses."""
    if not isinstance(names_values, dict):
        raise AnsibleFilterError('boolean_errors: expects a mapping of variable names to values')
    return ['%s = %s: must be a boolean (true/false, yes/no, on/off, 1/0)' % (name, json.dumps(value, default=str))
            for name, value in names_values.items() if not is_boolean(value)]


class FilterModule(object):

    def filters(self):
        return {
            'role_argument_errors': role_argument_errors,
            'boolean_errors': boolean_errors,
        }
