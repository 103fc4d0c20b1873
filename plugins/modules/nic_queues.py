#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nic_queues
short_description: Steer a NIC's receive/transmit queues (RPS, XPS) and queue IRQs to CPU groups
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - For one or more network interfaces in one call - each chosen by name, MAC address or PCI address -
    splits the interface's queues over CPU groups (the CPU sets of the serving instances) and sets, per
    queue, C(/sys/class/net/<if>/queues/rx-N/rps_cpus) (RPS), C(/sys/class/net/<if>/queues/tx-N/xps_cpus)
    (XPS) and the C(smp_affinity_list) of the MSI-X vector serving the queue.
  - The queues go to the groups in contiguous blocks (with 8 queues and 2 groups, queues 0-3 to the first
    group, 4-7 to the second). A receive queue's RPS mask is its whole group; its group's CPUs are shared
    out over the group's transmit queues for XPS (each CPU transmits on one queue of its group); the IRQ of
    queue N goes to the CPU that owns transmit queue N.
  - A vector serves a queue when its name ends in a queue number after C(input), C(output), C(rx), C(tx),
    C(TxRx), C(comp), C(fp) or C(queue) (virtio C(virtio2-input.0), Intel C(ens1f0-TxRx-3), mlx5
    C(mlx5_comp3@pci:...)); other vectors (configuration, async events, link) are left alone.
  - Every entry is checked - selectors, CPU lists, online CPUs, that each selector finds exactly one
    interface - before anything is written; all problems are reported at once.
  - Kernel-managed vectors refuse affinity writes (EIO); they are reported with status V(managed), not as
    errors. The IRQ writes are those of the C(irq_pin) module (C(plugins/module_utils/interrupts/irq.py)).
  - Runtime only; the C(inferops.node.nic_queues) role persists the settings with a boot-time unit that runs
    the same code.
options:
  interfaces:
    description:
      - The interfaces to steer.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - Interface name (C(ens1f0np0)). Give exactly one of O(interfaces[].name), O(interfaces[].mac),
            O(interfaces[].pci_address).
        type: str
      mac:
        description:
          - Permanent-looking MAC address as C(ip link) shows it (C(aa:bb:cc:dd:ee:ff)).
        type: str
      pci_address:
        description:
          - PCI address of the NIC function (C(0000:41:00.0), C(ethtool -i <if>) bus-info; the domain may be
            left out).
        type: str
      cpu_groups:
        description:
          - CPU groups for this interface's queues, each a CPU list (V(0-31), V(0-15:2/4), a list of numbers);
            only online CPUs. Default O(cpu_groups).
        type: raw
      rps:
        description: Set the RPS mask of every receive queue.
        type: bool
        default: true
      xps:
        description: Set the XPS mask of every transmit queue.
        type: bool
        default: true
      irqs:
        description: Pin the vector of every queue.
        type: bool
        default: true
  cpu_groups:
    description:
      - CPU groups for every interface without its own, typically the CPU sets of the serving instances
        (one Triton instance per group).
    type: raw
  irqbalance_ban:
    description:
      - Before pinning, tell a running irqbalance (its socket in C(/run/irqbalance)) to leave the pinned
        vectors alone (C(settings ban irqs)); irqbalance would otherwise move them back within seconds. The
        ban lasts until irqbalance exits; the C(inferops.node.nic_queues) role re-applies it when irqbalance
        restarts. Without a running irqbalance nothing happens.
      - An irqbalance that has just started opens its socket only after its first read of the IRQs (it runs
        its policy script once per IRQ); the module waits up to 300 seconds for it, and fails without
        changing anything when the daemon runs but never opens it (the pins would not last).
    type: bool
    default: true
attributes:
  check_mode:
    description: Nothing is written; RV(queues[].after) and RV(irqs[].after) are what would be set.
    support: full
  diff_mode:
    description: Shows each queue's mask and each vector's affinity before and after.
    support: full
  platform:
    description: Linux with sysfs (CONFIG_RPS, CONFIG_XPS) and MSI-X NICs.
    support: full
    platforms: posix
notes:
  - RPS and XPS are per-queue software steering (Documentation/networking/scaling.rst); with as many
    hardware queues as CPUs, RPS adds little - its use is a NIC with fewer queues than CPUs.
  - A running irqbalance moves IRQs it was not told to leave alone; see O(irqbalance_ban).
  - Changing the channel count (C(ethtool -L)) re-creates queues and resets their masks; run the module
    afterwards.
seealso:
  - module: inferops.node.nic_info
  - module: inferops.node.irq_pin
  - name: Scaling in the Linux networking stack
    description: RPS, RFS and XPS.
    link: https://docs.kernel.org/networking/scaling.html
'''

EXAMPLES = r'''
- name: Queues of the 25GbE NIC to the two Triton instances' CPU groups
  inferops.node.nic_queues:
    interfaces:
      - pci_address: "0000:41:00.0"
    cpu_groups: ["0-31", "32-63"]

- name: By MAC, RPS only, the CPU groups of the serving instances
  inferops.node.nic_queues:
    interfaces:
      - mac: "52:54:00:88:00:01"
        xps: false
        irqs: false
    cpu_groups: "{{ triton_compose_instances | map(attribute='cpuset') | list }}"
'''

RETURN = r'''
interfaces:
  description: The interfaces chosen, in request order.
  returned: always
  type: list
  elements: dict
  contains:
    index:
      description: Position in O(interfaces).
      type: int
    name:
      description: Interface name.
      type: str
      sample: enp0s17
    mac:
      description: MAC address.
      type: str
      sample: "52:54:00:88:00:01"
    pci_address:
      description: PCI function.
      type: str
      sample: "0000:00:11.0"
    cpu_groups:
      description: The CPU groups, as cpulists.
      type: list
      elements: str
      sample: ["1", "0"]
queues:
  description: One entry per rx queue (RPS) and tx queue (XPS) set.
  returned: always
  type: list
  elements: dict
  contains:
    interface:
      description: Interface name.
      type: str
    queue:
      description: C(rx-N) or C(tx-N).
      type: str
      sample: rx-0
    cpus:
      description: The queue's CPUs (cpulist).
      type: str
      sample: "0-31"
    before:
      description: The mask before.
      type: str
      sample: "0"
    target:
      description: The mask wanted.
      type: str
      sample: "ffffffff"
    after:
      description: The mask after (read back; the wanted one in check mode).
      type: str
    status:
      description: V(changed), V(unchanged) or V(failed).
      type: str
    msg:
      description: Why it failed.
      type: str
irqs:
  description: One entry per queue vector pinned, as the C(irq_pin) module returns them.
  returned: always
  type: list
  elements: dict
  contains:
    irq:
      description: IRQ number (this boot's).
      type: int
      sample: 32
    name:
      description: Action name of the vector.
      type: str
      sample: virtio2-input.0
    rule:
      description: Index of the interface in O(interfaces).
      type: int
    before:
      description: C(smp_affinity_list) before.
      type: str
      sample: "0"
    target:
      description: The CPU of the vector's queue.
      type: str
      sample: "1"
    after:
      description: C(smp_affinity_list) after (read back; the target in check mode).
      type: str
      sample: "1"
    status:
      description: V(changed), V(unchanged), V(managed) (kernel-managed, cannot move) or V(failed).
      type: str
    msg:
      description: Why, when there is something to say.
      type: str
managed_irqs:
  description: Vectors that are kernel-managed (their affinity cannot be set).
  returned: always
  type: list
  elements: int
irqbalance_socket:
  description: The irqbalance socket the ban was sent to; null when no irqbalance runs, in check mode, or
    with O(irqbalance_ban=false).
  returned: always
  type: str
  sample: /run/irqbalance/irqbalance474.sock
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.interrupts import nic_queues
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import format_cpulist


def main():
    module = AnsibleModule(
        argument_spec=dict(
            interfaces=dict(type='list', elements='dict', required=True, options=dict(
                name=dict(type='str'),
                mac=dict(type='str'),
                pci_address=dict(type='str'),
                cpu_groups=dict(type='raw'),
                rps=dict(type='bool', default=True),
                xps=dict(type='bool', default=True),
                irqs=dict(type='bool', default=True),
            ), required_one_of=[['name', 'mac', 'pci_address']],
                mutually_exclusive=[['name', 'mac', 'pci_address']]),
            cpu_groups=dict(type='raw'),
            irqbalance_ban=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = dict(changed=False, interfaces=[], queues=[], irqs=[], managed_irqs=[], irqbalance_socket=None)

    # ---- select and validate every interface before reading or writing any queue
    try:
        online = irq.online_cpus()
    except irq.IrqError as exc:
        module.fail_json(msg=to_native(exc), **result)
    entries = [dict((k, v) for k, v in item.items() if v is not None) for item in params['interfaces']]
    wanted, errors = nic_queues.select(entries, 'interfaces', params['cpu_groups'], online)
    if errors:
        module.fail_json(msg='nothing was changed: %s' % '; '.join(errors), **result)
    result['interfaces'] = [dict(index=w['index'], name=w['interface']['name'], mac=w['interface']['mac'],
                                 pci_address=w['interface']['pci_address'],
                                 cpu_groups=[format_cpulist(g) for g in w['groups']]) for w in wanted]

    # ---- plan, then apply (check mode only plans)
    planned = nic_queues.plan(wanted)
    queues = planned['queues']
    vectors = nic_queues.irq_plan(planned, online)
    if module.check_mode:
        irq.predict_managed(vectors, irq.load_record(sysfs.read_attr(irq.RECORD), irq.boot_id()))
        for entry in queues:
            if entry['status'] == 'changed':
                entry['after'] = entry['target']
    else:
        if params['irqbalance_ban'] and vectors:
            try:
                result['irqbalance_socket'] = nic_queues.irqbalance_ban([e['irq'] for e in vectors],
                                                                        wait=nic_queues.IRQBALANCE_WAIT)
            except nic_queues.NicError as exc:
                module.fail_json(msg='nothing was changed: %s' % to_native(exc), **result)
        nic_queues.apply(queues)
        irq.apply(vectors)
        irq.mark_pending(vectors)
    result['queues'] = [dict((k, v) for k, v in q.items() if k != 'attr') for q in queues]
    result['irqs'] = vectors
    result['managed_irqs'] = [e['irq'] for e in vectors if e['status'] == 'managed']
    result['changed'] = nic_queues.changed(queues, vectors)
    if module._diff:
        result['diff'] = dict(
            before_header='rps_cpus / xps_cpus / smp_affinity_list', after_header='rps_cpus / xps_cpus / smp_affinity_list',
            before=''.join('%s %s: %s\n' % (q['interface'], q['queue'], q['before']) for q in queues)
            + ''.join('IRQ %s: %s\n' % (e['name'], e['before']) for e in vectors),
            after=''.join('%s %s: %s\n' % (q['interface'], q['queue'], q['after']) for q in queues)
            + ''.join('IRQ %s: %s\n' % (e['name'], e['after']) for e in vectors),
        )
    failed = ['%s %s: %s' % (q['interface'], q['queue'], q['msg']) for q in queues if q['status'] == 'failed']
    failed += ['IRQ %d (%s): %s' % (e['irq'], e['name'], e['msg']) for e in vectors if e['status'] == 'failed']
    if failed:
        module.fail_json(msg='could not steer %d queue(s)/IRQ(s): %s' % (len(failed), '; '.join(failed)), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
