# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's variables by name, as its rules in Python take them."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_settings
author:
  - inferops.node maintainers (@inferops)
short_description: Every variable a role declares, by name, for the role's rules
version_added: 0.3.0
description:
  - Returns one mapping of every option of the role's C(meta/argument_specs.yml) (all entry points) to its
    value for the host, templated; the role's defaults supply what the inventory does not set.
  - The roles hand this mapping to their filters (the rules in C(plugins/module_utils)), so a new variable is
    declared in the argument spec and the default and read by the Python that uses it - no list of the role's
    variables is kept anywhere else.
  - A value of a boolean option that Ansible's conversion accepts (C(true), C("yes"), C(1)) is returned as a bool;
    any other value is returned as given, for the role's validation to name.
options:
  _terms:
    description: The name of one of this collection's roles.
    required: true
    type: list
    elements: str
  strip_prefix:
    description: Taken off the start of each name (V(nvme_sched_) gives C(scheduler) for C(nvme_sched_scheduler)).
    type: str
"""

EXAMPLES = r"""
- name: Validate the role's variables with its rules
  ansible.builtin.assert:
    that: lookup('inferops.node.role_settings', 'docker_engine') | inferops.node.docker_engine_errors == []
"""

RETURN = r"""
_raw:
  description: One mapping, variable name (less O(strip_prefix)) to value.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleError, AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible.template import Templar

from ansible_collections.inferops.node.plugins.plugin_utils import role_specs


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if len(terms) != 1:
            raise AnsibleLookupError('role_settings: give one role name, got %r' % (terms,))
        variables = variables or {}
        templar = Templar(loader=self._loader, variables=variables)
        try:
            return [role_specs.settings(role_specs.role_path(terms[0]), variables, templar.template,
                                        self.get_option('strip_prefix'))]
        except AnsibleError as exc:
            raise AnsibleLookupError('role_settings: %s' % exc)
