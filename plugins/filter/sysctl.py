# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel parameter filter: the kernel_tuning role's plan, the rule of module_utils/kernel/sysctl.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.kernel.sysctl import THP_MODES, plan


def sysctl_plan(layers, info=None, thp=None, cpu_affinity=None):
    """Merged entries, keys to read, wanted and runtime values, errors and drift (see module_utils/kernel/sysctl)."""
    if not isinstance(layers, list) or not all(isinstance(layer, dict) and 'name' in layer for layer in layers):
        raise AnsibleFilterError('sysctl_plan: the input must be a list of layers {name, keyed, settings}, got %r'
                                 % (layers,))
    if info is not None and not (isinstance(info, dict) and isinstance(info.get('parameters'), dict)):
        raise AnsibleFilterError('sysctl_plan: info must be the result of inferops.node.sysctl_info, got %r' % (info,))
    if thp is not None and thp not in THP_MODES:
        raise AnsibleFilterError('sysctl_plan: thp must be one of %s or null, got %r' % (', '.join(THP_MODES), thp))
    return plan(layers, info, thp, cpu_affinity)


class FilterModule(object):
    """Kernel parameter filters."""

    def filters(self):
        return {
            'sysctl_plan': sysctl_plan,
        }
