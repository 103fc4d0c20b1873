# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Variables that carry a role's prefix but are not among its documented options."""

from __future__ import annotations

DOCUMENTATION = r"""
name: unknown_role_vars
author:
  - inferops.node maintainers (@inferops)
short_description: Variables named like a role's options that the role does not know
version_added: 0.1.0
description:
  - Returns one message per variable that starts with C(<prefix>_) but is neither an option of
    the role's C(meta/argument_specs.yml) (any entry point) nor one of O(outputs).
  - Ansible's role argument validation ignores variables it does not know, so an inventory
    typo such as C(kernel_tuning_sysctl) for C(kernel_tuning_sysctl_extra) would silently
    change nothing. The roles fail on these before any change.
  - Each message names the variable and the closest known option names.
  - A variable of the inventory's own that merely shares the prefix (for example
    C(triton_compose_image_tag), used to build C(triton_compose_image)) is allowed by listing it
    in the variable C(inferops_allowed_extra_vars).
options:
  _terms:
    description: The role's variable prefix, without the trailing underscore.
    required: true
    type: list
    elements: str
  role_path:
    description: The role's directory; defaults to the C(role_path) of the calling task.
    type: path
  outputs:
    description: Variables the role itself sets (registered results, facts) that carry the prefix.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Refuse variables the role does not know (an inventory typo would change nothing)
  ansible.builtin.assert:
    that: lookup('inferops.node.unknown_role_vars', 'md_raid_xfs', outputs=['md_raid_xfs_report'], wantlist=true) == []
    fail_msg: >-
      md_raid_xfs: invalid input, nothing was changed:
      {{ lookup('inferops.node.unknown_role_vars', 'md_raid_xfs', outputs=['md_raid_xfs_report'], wantlist=true) | join('; ') }}
    quiet: true
"""

RETURN = r"""
_raw:
  description: One message per unknown variable, e.g. C(kernel_tuning_sysctl is not a variable of
    role kernel_tuning (did you mean kernel_tuning_sysctl_host, kernel_tuning_sysctl_extra?)).
  type: list
  elements: str
"""

import difflib

from ansible.errors import AnsibleError, AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.node.plugins.plugin_utils import role_specs

ALLOW_VAR = 'inferops_allowed_extra_vars'


def unknown(prefix, present, options, outputs=()):
    """Messages for the names in ``present`` that carry the role's prefix but are neither options nor outputs."""
    messages = []
    known = set(options) | set(outputs)
    for name in sorted(n for n in present if n.startswith(prefix + '_') and n not in known):
        # Compare what follows the prefix: the shared prefix would make every option look close.
        tail = len(prefix) + 1
        close = difflib.get_close_matches(name[tail:], sorted(o[tail:] for o in options), n=3, cutoff=0.6)
        if close:
            hint = 'did you mean %s?' % ', '.join(prefix + '_' + c for c in close)
        else:
            hint = 'if it is your own, list it in %s' % ALLOW_VAR
        messages.append('%s is not a variable of role %s (%s)' % (name, prefix, hint))
    return messages


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        role_path = self.get_option('role_path') or variables.get('role_path')
        if not role_path:
            raise AnsibleLookupError('unknown_role_vars: no role_path (call it from a role task or pass role_path)')
        try:
            options = role_specs.role_options(role_path)
        except AnsibleError as exc:
            raise AnsibleLookupError('unknown_role_vars: %s' % exc)
        allowed = variables.get(ALLOW_VAR) or []
        if not isinstance(allowed, list) or not all(isinstance(name, str) for name in allowed):
            raise AnsibleLookupError('%s = %r: must be a list of variable names' % (ALLOW_VAR, allowed))
        messages = []
        for prefix in terms:
            messages.extend(unknown(prefix, variables, options, list(self.get_option('outputs') or []) + allowed))
        return messages
