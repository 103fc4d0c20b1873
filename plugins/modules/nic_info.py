#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nic_info
short_description: Report network interfaces, their queues' RPS/XPS masks and their queue IRQs
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads every interface of C(/sys/class/net) (or those of O(names)) - MAC address, the PCI function it
    belongs to (a virtio NIC's C(virtioN) device sits below one), driver, NUMA node, operational state, MTU,
    link speed - and per receive queue its RPS mask (C(rps_cpus)) and flow count, per transmit queue its XPS
    mask (C(xps_cpus)) and rate limit.
  - Lists the MSI(-X) vectors of the interface's PCI function with their names, affinities and, where the
    name tells, the queue each serves - the vectors M(inferops.node.nic_queues) pins.
  - Reports the online CPUs, the kernel's mask width (C(nr_cpu_ids)) and whether irqbalance runs and
    listens on its socket (a running irqbalance moves IRQs it was not told to leave alone).
  - With O(units), also what systemd says of those units (one C(systemctl show), C locale) - the boot-time unit
    of M(inferops.node.nic_queues)'s role, so that the role enables it only when it is not.
  - Never changes anything.
options:
  names:
    description:
      - Only these interfaces (default every one, C(lo) included).
    type: list
    elements: str
  units:
    description:
      - systemd units to read as well; empty - systemd is not asked.
    type: list
    elements: str
    default: []
    version_added: 0.3.0
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux sysfs/procfs.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.nic_queues
  - module: inferops.node.irq_info
'''

EXAMPLES = r'''
- name: Read the NICs
  inferops.node.nic_info:
  register: nics

- name: Show the RPS masks of one interface
  ansible.builtin.debug:
    msg: "{{ (nics.interfaces | selectattr('name', 'eq', 'enp0s17') | first).rx | map(attribute='rps_cpus') }}"
'''

RETURN = r'''
units:
  description: Per unit of O(units) - C(enabled) (the UnitFileState, C(not-found) for a unit systemd does not
    know), C(active) (the ActiveState), C(load) (the LoadState).
  returned: always
  type: dict
  sample: {inferops-nic-queues.service: {enabled: enabled, active: inactive, load: loaded}}
interfaces:
  description: One entry per interface, in name order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Interface name.
      type: str
      sample: enp0s17
    mac:
      description: MAC address.
      type: str
      sample: "52:54:00:88:00:01"
    pci_address:
      description: PCI function of the NIC; null for virtual interfaces.
      type: str
      sample: "0000:00:11.0"
    driver:
      description: Driver of the device the interface belongs to.
      type: str
      sample: virtio_net
    numa_node:
      description: NUMA node of the PCI function; null when the firmware does not tell.
      type: int
    operstate:
      description: C(up), C(down), ...
      type: str
    mtu:
      description: MTU.
      type: int
    speed_mbps:
      description: Link speed in Mb/s; null when unknown (link down, virtual).
      type: int
    rx_queues:
      description: Number of receive queues.
      type: int
      sample: 2
    tx_queues:
      description: Number of transmit queues.
      type: int
      sample: 2
    rx:
      description: Per receive queue - C(queue), C(rps_cpus) (the mask as the kernel prints it),
        C(rps_cpulist), C(rps_flow_cnt).
      type: list
      elements: dict
      sample: [{"queue": 0, "rps_cpus": "2", "rps_cpulist": "1", "rps_flow_cnt": 0}]
    tx:
      description: Per transmit queue - C(queue), C(xps_cpus), C(xps_cpulist), C(tx_maxrate).
      type: list
      elements: dict
      sample: [{"queue": 0, "xps_cpus": "2", "xps_cpulist": "1", "tx_maxrate": 0}]
    irqs:
      description: The MSI(-X) vectors of the PCI function - C(irq), C(name), C(direction) (V(rx), V(tx),
        V(both), null for vectors serving no queue), C(queue), C(smp_affinity_list),
        C(effective_affinity_list).
      type: list
      elements: dict
      sample: [{"irq": 32, "name": "virtio2-input.0", "direction": "rx", "queue": 0,
                "smp_affinity_list": "1", "effective_affinity_list": "1"}]
online_cpus:
  description: The online CPUs.
  returned: always
  type: str
  sample: "0-1"
nr_cpu_ids:
  description: Width of the kernel's CPU masks (highest possible CPU + 1).
  returned: always
  type: int
  sample: 2
irqbalance_pid:
  description: The PID of the running irqbalance, null when none runs.
  returned: always
  type: int
  sample: 474
  version_added: 0.2.0
irqbalance_socket:
  description: The socket of the running irqbalance (named after its PID, so never one left by an earlier
    daemon); null when none runs, or it has not opened its socket (yet).
  returned: always
  type: str
  sample: /run/irqbalance/irqbalance474.sock
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.interrupts import nic_queues
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import format_cpulist
from ansible_collections.inferops.node.plugins.module_utils.common.systemd_units import read_units


def main():
    module = AnsibleModule(argument_spec=dict(names=dict(type='list', elements='str'),
                                              units=dict(type='list', elements='str', default=[])),
                           supports_check_mode=True)
    result = dict(changed=False)
    try:
        result['online_cpus'] = format_cpulist(irq.online_cpus())
    except irq.IrqError as exc:
        module.fail_json(msg=to_native(exc), **result)
    result['nr_cpu_ids'] = nic_queues.nr_cpu_ids()
    result['interfaces'] = nic_queues.interfaces(module.params['names'])
    result['irqbalance_pid'], result['irqbalance_socket'] = nic_queues.irqbalance_socket()
    result['units'] = read_units(CommandRunner(module), module.params['units'], 'nic_info')
    module.exit_json(**result)


if __name__ == '__main__':
    main()
