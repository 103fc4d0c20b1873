# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC queue filters: the checks of module_utils/interrupts/nic_queues.py (the nic_queues module's) for the role and
the preflight.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import CpuListError, parse_cpulist
from ansible_collections.inferops.node.plugins.module_utils.interrupts.nic_queues import select


def nic_queues_errors(interfaces, host=None, name='interfaces', cpu_groups=None, cpu_groups_name='cpu_groups'):
    """Every problem of the wanted interfaces (empty list = valid): the input alone, or with ``host`` (the
    result of ``nic_info``) also against the host's interfaces and online CPUs."""
    online = None
    if host is not None:
        if not isinstance(host, dict) or 'interfaces' not in host:
            raise AnsibleFilterError('nic_queues_errors: host must be the registered result of inferops.node.nic_info')
        try:
            online = parse_cpulist(host.get('online_cpus') or '')
        except CpuListError as exc:
            raise AnsibleFilterError('nic_queues_errors: online_cpus of nic_info: %s' % exc)
    entries = interfaces
    if isinstance(interfaces, list):
        # Unset optional keys (null in the role's normalized input) are left out, as the module does.
        entries = [dict((k, v) for k, v in item.items() if v is not None) if isinstance(item, dict) else item
                   for item in interfaces]
    errors = select(entries, name, cpu_groups, online, host['interfaces'] if host is not None else [])[1]
    if host is None:
        # Without the host every selector "matches nothing": keep the input problems only.
        errors = [e for e in errors if ': no interface on this host' not in e]
    return [e.replace('cpu_groups = ', '%s = ' % cpu_groups_name, 1) if e.startswith('cpu_groups = ') else e
            for e in errors]


class FilterModule(object):
    """NIC queue filters."""

    def filters(self):
        return {
            'nic_queues_errors': nic_queues_errors,
        }
