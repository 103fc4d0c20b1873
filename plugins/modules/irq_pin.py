#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: irq_pin
short_description: Pin the IRQs whose names match selectors to CPUs
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - In one call, sets C(/proc/irq/N/smp_affinity_list) of every IRQ a rule selects - by name (O(rules[].selector),
    a Python regular expression searched in the IRQ's action names, for example V(nvme\\d+q\\d+) or
    V(mlx5_comp)), or by device identity (O(rules[].serial), O(rules[].by_id), O(rules[].pci_address),
    O(rules[].md_array)), which holds whatever kernel names (C(nvme0), C(md127)) the devices got at this boot.
  - A device selector is resolved when the module runs - NVMe serial or C(/dev/disk/by-id) link -> namespace
    -> controller -> PCI function; md array name -> its member drives -> their controllers; or the PCI address
    itself (NICs included) - and selects every MSI/MSI-X vector of those PCI functions
    (C(/sys/bus/pci/devices/<address>/msi_irqs)). RV(devices) reports, per device, its vectors and which are
    kernel-managed.
  - IRQ names come from C(/sys/kernel/irq/N/actions), or from the last column of C(/proc/interrupts)
    on kernels without it.
  - Rules are tried in order; an IRQ belongs to the first rule that matches it.
  - Policies - V(cpus) gives every matched IRQ the whole CPU list; V(spread) gives the matched IRQs one
    CPU each, round-robin over the CPU list in IRQ number order; V(local) gives each IRQ the CPUs of
    its device's NUMA node (C(/proc/irq/N/node), else the node of the PCI device listing the IRQ in
    C(msi_irqs)), restricted to the rule's CPU list when one is given.
  - Kernel-managed IRQs (for example NVMe I/O queue vectors) refuse affinity changes with EIO (EPERM on
    Linux 6.12, Debian 13); they are reported with RV(irqs[].status=managed) and are not an error.
  - A real run records, per IRQ action name, whether the kernel accepted or refused (EIO, EPERM) its write in
    C(/run/inferops/irq-managed.json) together with the boot id (C(/proc/sys/kernel/random/boot_id)); the
    C(inferops.node.irq_affinity) role's boot-time script records the same at every boot. The file is on
    tmpfs and a record of another boot is ignored, since IRQ numbers and device names are handed out anew
    at every boot. Writing it does not count as a change.
  - Check mode and O(list_only=true) write nothing and predict the real run - see the C(check_mode)
    attribute.
  - Every rule is validated before any write - one selector per rule, the regex must compile, every device
    selector must name a device present on the host, the CPU list must parse and contain only online CPUs
    (C(/sys/devices/system/cpu/online)).
options:
  rules:
    description:
      - The pinning rules.
    type: list
    elements: dict
    required: true
    suboptions:
      selector:
        description:
          - Regular expression searched (C(re.search)) in the IRQ name; anchor it (V(^nvme\\d+q\\d+$)) to
            match whole names.
          - A rule has exactly one of O(rules[].selector), O(rules[].serial), O(rules[].by_id),
            O(rules[].pci_address), O(rules[].md_array).
        type: str
      serial:
        description:
          - NVMe controller serials (C(cat /sys/class/nvme/*/serial)); selects the vectors of their PCI functions.
        type: list
        elements: str
      by_id:
        description:
          - C(/dev/disk/by-id/...) links of NVMe namespaces (or their partitions); selects the vectors of their
            controllers' PCI functions.
        type: list
        elements: str
      pci_address:
        description:
          - PCI functions (V(0000:41:00.0), as in C(/sys/bus/pci/devices)), any device with MSI/MSI-X vectors.
        type: list
        elements: str
      md_array:
        description:
          - Names of running md arrays (C(/dev/md/<name>)); selects the vectors of their member drives'
            controllers. The array must be assembled when the module runs.
        type: list
        elements: str
      policy:
        description:
          - V(cpus), V(spread) or V(local), see the description.
        type: str
        choices: [cpus, spread, local]
        default: cpus
      cpus:
        description:
          - CPU list (V(0-3,8), kernel cpulist syntax) or list of CPU numbers.
          - Required for V(cpus) and V(spread); for V(local) it restricts the node's CPUs. An IRQ whose
            node has none of these CPUs, or whose node is unknown, gets this whole list.
        type: raw
  list_only:
    description:
      - Only match and report (RV(matched_irqs), RV(irqs) with the planned targets); never write.
        Use it to feed C(IRQBALANCE_BANNED_IRQS) / C(--banirq) before pinning.
    type: bool
    default: false
  fail_on_no_match:
    description:
      - Fail when a rule matches no IRQ (after validation, before any write).
    type: bool
    default: false
attributes:
  check_mode:
    description: >-
      Nothing is written (neither the affinities nor the record). Check mode predicts the real run, so that
      C(--check) can serve as a drift gate: an IRQ whose affinity differs is predicted V(managed) - not a
      change - when, in this order, debugfs C(irq/irqs/N) shows C(IRQD_AFFINITY_MANAGED) (kernels with
      CONFIG_GENERIC_IRQ_DEBUGFS and debugfs already mounted; it is never mounted by the module), or the
      record of this boot says the kernel refused its write, or it is an NVMe I/O queue vector
      (V(nvme<N>q<M>), M >= 1, which the nvme driver always allocates kernel-managed); a recorded accepted
      write predicts V(changed). When none of these tells, the IRQ is predicted V(changed) (most IRQs accept
      the write) with RV(irqs[].managed_unknown=true), it is listed in RV(unknown_managed) and a warning
      names it. On a converged node - after one real run in this boot, or after the boot-time script ran -
      check mode reports no change.
    support: full
  diff_mode:
    description: Shows C(smp_affinity_list) of the matched IRQs before and after.
    support: full
  platform:
    description: Linux procfs/sysfs.
    support: full
    platforms: posix
notes:
  - irqbalance rewrites affinities it does not know to leave alone; ban the returned RV(matched_irqs)
    (or stop irqbalance) before relying on the pinning.
  - RV(irqs[].after) is the requested affinity mask; RV(irqs[].effective) is where the kernel actually
    delivers the interrupt (C(effective_affinity_list)), usually a single CPU of the mask.
  - Whether an IRQ is kernel-managed shows in C(/proc) and C(/sys) only when its affinity is written
    (the kernel answers EIO); without writing only debugfs tells (Debian 12's kernel is built without
    CONFIG_GENERIC_IRQ_DEBUGFS). Check mode and O(list_only=true) therefore use the record of this boot and
    the NVMe driver rule, and report RV(irqs[].managed_source) and RV(unknown_managed). No write is made
    to find out.
  - RV(irqs[].after) is what the kernel will use for the next interrupt; RV(irqs[].effective) may still
    name the old CPU until that interrupt arrives (x86 moves a vector at its next interrupt, a quiet NVMe
    admin queue can keep the old CPU for long). Such IRQs get RV(irqs[].pending=true) and are listed in
    RV(pending_irqs); that is not an error and not a change.
  - The pinning code (C(plugins/module_utils/interrupts/irq.py)) is also what the C(inferops.node.irq_affinity)
    role installs on the host to re-apply the pins at boot.
'''

EXAMPLES = r'''
- name: The model array's drives on CPUs 0-31, the index array's on 32-63, whatever their kernel names
  inferops.node.irq_pin:
    rules:
      - md_array: [models]
        cpus: 0-31
      - serial: [22303B1A2C4D, 22303B1A2C4E]
        cpus: 32-63
  register: pinned_by_drive

- name: NVMe admin/queue IRQs local to their node, NIC completion IRQs spread over CPUs 2-7
  inferops.node.irq_pin:
    rules:
      - selector: '^nvme\d+q\d+$'
        policy: local
      - selector: 'mlx5_comp'
        policy: spread
        cpus: 2-7
  register: pinned

- name: Only list the NVMe IRQs (for irqbalance's ban list)
  inferops.node.irq_pin:
    rules:
      - selector: '^nvme\d+q\d+$'
        policy: local
    list_only: true
  register: nvme_irqs

- name: Ban them
  ansible.builtin.lineinfile:
    path: /etc/default/irqbalance
    regexp: '^#?IRQBALANCE_ARGS='
    line: "IRQBALANCE_ARGS=\"{{ nvme_irqs.matched_irqs | map('regex_replace', '^', '--banirq=') | join(' ') }}\""
'''

RETURN = r'''
irqs:
  description: One entry per matched IRQ, in IRQ number order.
  returned: always
  type: list
  elements: dict
  contains:
    irq:
      description: IRQ number.
      type: int
      sample: 33
    name:
      description: The IRQ's action name(s).
      type: str
      sample: nvme0q1
    rule:
      description: Index of the rule in O(rules) that matched.
      type: int
      sample: 0
    policy:
      description: The rule's policy.
      type: str
      sample: local
    node:
      description: NUMA node used by V(local) (null when unknown or not V(local)).
      type: int
      sample: 0
    before:
      description: C(smp_affinity_list) before the call.
      type: str
      sample: 0-1
    target:
      description: The CPU list the rule asks for.
      type: str
      sample: '1'
    after:
      description: C(smp_affinity_list) after the call (read back; planned value in check mode / list_only, unchanged for V(managed)).
      type: str
      sample: '1'
    effective:
      description: C(effective_affinity_list) after the call, when the kernel provides it.
      type: str
      sample: '1'
    status:
      description:
        - V(changed), V(unchanged), V(managed) (kernel-managed, EIO or EPERM on write) or V(failed).
        - In check mode and with O(list_only=true), V(changed) means the affinity would be written and
          V(managed) that the write would be refused, as told by RV(irqs[].managed_source).
      type: str
      sample: changed
    managed_source:
      description:
        - What told whether the IRQ is kernel-managed - V(write) (the real write of this call, EIO or
          accepted), V(debugfs), V(record) (the record of this boot), V(driver) (NVMe I/O queue name);
          null when the IRQ was not written and needed no prediction, or when no source knew.
      type: str
      sample: record
    managed_unknown:
      description:
        - V(true) when the IRQ would be written but was not (check mode, O(list_only=true)) and no source
          tells whether the kernel manages it; it is then predicted V(changed) and listed in RV(unknown_managed).
      type: bool
      sample: false
    pending:
      description:
        - V(true) when RV(irqs[].effective) names CPUs outside RV(irqs[].after) - the kernel has taken the
          new affinity and moves the interrupt at its next occurrence. Only for written and V(unchanged) IRQs.
      type: bool
      sample: false
    msg:
      description: Error or note (write error, fallback used by V(local), managed prediction, status unknown
        in check mode / list_only, pending move).
      type: str
matched_irqs:
  description: All matched IRQ numbers, sorted (for irqbalance's ban list).
  returned: always
  type: list
  elements: int
  sample: [31, 33, 34]
managed_irqs:
  description: Matched IRQs the kernel refused as managed.
  returned: always
  type: list
  elements: int
  sample: [33, 34]
unknown_managed:
  description:
    - Check mode and O(list_only=true) - IRQs that would be written but whose managed status no source
      tells (see the C(check_mode) attribute); counted as changes. Empty in a real run.
  returned: always
  type: list
  elements: int
  sample: []
pending_irqs:
  description: IRQs with RV(irqs[].pending=true).
  returned: always
  type: list
  elements: int
  sample: [31]
rules:
  description: Per rule, the IRQs it matched (C(selector) or the device selector it has).
  returned: always
  type: list
  elements: dict
  sample: [{selector: '^nvme\d+q\d+$', policy: local, cpus: null, matched: [31, 33, 34]}]
devices:
  description:
    - One entry per device a device selector named, in rule order - which of its vectors the kernel manages
      (they refuse affinity writes and stay where blk-mq's per-CPU queue mapping put them) and where the
      others are now.
  returned: always
  type: list
  elements: dict
  contains:
    rule:
      description: Index of the rule in O(rules).
      type: int
    kind:
      description: V(serial), V(by_id), V(pci_address) or V(md_array).
      type: str
    value:
      description: The selector value that named the device.
      type: str
      sample: models
    pci_address:
      description: The PCI function.
      type: str
      sample: '0000:00:04.0'
    controller:
      description: NVMe controller at this boot (null for a PCI address selector).
      type: str
      sample: nvme3
    serial:
      description: NVMe serial.
      type: str
    model:
      description: NVMe model.
      type: str
    block:
      description: The namespace (or partition) that led to the controller, null for V(serial) and V(pci_address).
      type: str
      sample: nvme3n1
    irqs:
      description: The device's vectors this rule selected.
      type: list
      elements: int
    managed_irqs:
      description: Those the kernel manages (left where the kernel put them).
      type: list
      elements: int
    movable_irqs:
      description: Those pinned by the rule.
      type: list
      elements: int
    vectors:
      description: Per vector - C(irq), C(name), C(managed), C(smp_affinity_list), C(effective_affinity_list).
      type: list
      elements: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts.irq import (
    RECORD, IrqError, apply, boot_id, compile_rules, device_report, format_cpulist, irq_names, load_record, mark_pending,
    match_rules, online_cpus, plan, predict_managed, resolve_rules, update_record,
)
from ansible_collections.inferops.node.plugins.module_utils.interrupts.irq_devices import identity_table
from ansible_collections.inferops.node.plugins.module_utils.common.textfile import read_text, write_text_atomic

UNWRITTEN = ('not written ({reason}) and no source tells whether the kernel manages this IRQ (no debugfs '
             'IRQD_AFFINITY_MANAGED, no record of this boot in %s, not an NVMe I/O queue): predicted as a change; '
             'a kernel-managed IRQ would refuse the write with EIO and be reported as managed' % RECORD)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            rules=dict(type='list', elements='dict', required=True, options=dict(
                selector=dict(type='str'),
                serial=dict(type='list', elements='str'),
                by_id=dict(type='list', elements='str'),
                pci_address=dict(type='list', elements='str'),
                md_array=dict(type='list', elements='str'),
                policy=dict(type='str', default='cpus', choices=['cpus', 'spread', 'local']),
                cpus=dict(type='raw'),
            )),
            list_only=dict(type='bool', default=False),
            fail_on_no_match=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = dict(changed=False, irqs=[], matched_irqs=[], managed_irqs=[], unknown_managed=[], pending_irqs=[], rules=[],
                  devices=[])

    # ---- validate every rule before reading or writing any IRQ
    try:
        online = online_cpus()
        rules = compile_rules(params['rules'], online)
    except IrqError as exc:
        module.fail_json(msg=to_native(exc), **result)
    # Device selectors name devices, not kernel names: resolve them now, on this boot's names.
    if any(r['kind'] != 'selector' for r in rules):
        problems = resolve_rules(rules, identity_table())
        if problems:
            module.fail_json(msg='; '.join(problems), **result)

    # ---- match
    interrupts = sysfs.read_attr('/proc/interrupts')
    if interrupts is None:
        module.fail_json(msg='cannot read /proc/interrupts', **result)
    names = irq_names(interrupts)
    match_rules(rules, names)
    result['rules'] = [dict([(r['kind'], r['selector'] if r['kind'] == 'selector' else r['values'])],
                            policy=r['policy'], cpus=format_cpulist(r['cpus']) if r['cpus'] is not None else None,
                            matched=list(r['matched'])) for r in rules]
    result['matched_irqs'] = sorted(irq for r in rules for irq in r['matched'])
    if params['fail_on_no_match']:
        empty = [r for r in rules if not r['matched']]
        if empty:
            module.fail_json(msg='rules matched no IRQ: %s' % ', '.join(
                'rules[%d].%s=%r' % (r['index'], r['kind'], r['selector'] if r['kind'] == 'selector' else r['values'])
                for r in empty), **result)

    # ---- plan, then apply (check mode and list_only only plan, and predict which IRQs are managed)
    entries = plan(rules, names, online)
    unwritten = 'list_only' if params['list_only'] else 'check mode' if module.check_mode else None
    record_path = sysfs.host_path(RECORD)
    record_text = read_text(record_path)
    boot = boot_id()
    if unwritten is None:
        apply(entries)
        unknown = []
        pending = mark_pending(entries)
        # What the kernel answered, for later check runs of this boot. Bookkeeping on tmpfs, not
        # configuration: not counted in changed.
        new_record = update_record(record_text, boot, entries)
        if new_record is not None:
            try:
                write_text_atomic(module, record_path, new_record)
            except (IOError, OSError) as exc:
                module.warn('cannot record the kernel-managed IRQs in %s: %s' % (RECORD, to_native(exc)))
    else:
        unknown = predict_managed(entries, load_record(record_text, boot))
        pending = mark_pending(entries, ('unchanged',))
        for entry in entries:
            if entry['managed_unknown']:
                note = UNWRITTEN.format(reason=unwritten)
                entry['msg'] = '%s; %s' % (entry['msg'], note) if entry['msg'] else note
        if unknown and unwritten == 'check mode':
            module.warn('check mode cannot tell whether IRQ(s) %s are kernel-managed (no debugfs, no record of this '
                        'boot in %s); they are predicted as changed - a real run may find them managed instead' % (
                            ', '.join('%d (%s)' % (e['irq'], e['name']) for e in entries if e['managed_unknown']), RECORD))
    result['unknown_managed'] = unknown
    result['pending_irqs'] = pending
    result['irqs'] = entries
    result['devices'] = device_report(rules, entries)
    result['managed_irqs'] = [e['irq'] for e in entries if e['status'] == 'managed']
    result['changed'] = any(e['status'] == 'changed' for e in entries) and not params['list_only']
    if module._diff:
        result['diff'] = dict(
            before_header='smp_affinity_list', after_header='smp_affinity_list',
            before=''.join('%d %s: %s\n' % (e['irq'], e['name'], e['before']) for e in entries),
            after=''.join('%d %s: %s\n' % (e['irq'], e['name'], e['before'] if params['list_only'] else e['after']) for e in entries),
        )
    failed = [e for e in entries if e['status'] == 'failed']
    if failed:
        module.fail_json(msg='could not pin %d IRQ(s): %s' % (len(failed), '; '.join(
            'IRQ %d (%s): %s' % (e['irq'], e['name'], e['msg']) for e in failed)), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
