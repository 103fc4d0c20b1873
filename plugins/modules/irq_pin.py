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
  - In one call, sets C(/proc/irq/N/smp_affinity_list) of every IRQ whose name matches a rule's
    selector (a Python regular expression searched in the IRQ's action names, for example
    V(nvme\\d+q\\d+) or V(mlx5_comp)).
  - IRQ names come from C(/sys/kernel/irq/N/actions), or from the last column of C(/proc/interrupts)
    on kernels without it.
  - Rules are tried in order; an IRQ belongs to the first rule that matches it.
  - Policies - V(cpus) gives every matched IRQ the whole CPU list; V(spread) gives the matched IRQs one
    CPU each, round-robin over the CPU list in IRQ number order; V(local) gives each IRQ the CPUs of
    its device's NUMA node (C(/proc/irq/N/node), else the node of the PCI device listing the IRQ in
    C(msi_irqs)), restricted to the rule's CPU list when one is given.
  - Kernel-managed IRQs (for example NVMe I/O queue vectors) refuse affinity changes with EIO; they are
    reported with RV(irqs[].status=managed) and are not an error.
  - Every rule is validated before any write - the selector must compile, the CPU list must parse and
    contain only online CPUs (C(/sys/devices/system/cpu/online)).
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
        type: str
        required: true
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
      Nothing is written. Kernel-managed IRQs cannot be detected without writing, so in check mode they
      are reported as V(changed) when their affinity differs.
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
'''

EXAMPLES = r'''
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
      description: C(smp_affinity_list) after the call (read back; planned value in check mode / list_only).
      type: str
      sample: '1'
    effective:
      description: C(effective_affinity_list) after the call, when the kernel provides it.
      type: str
      sample: '1'
    status:
      description: V(changed), V(unchanged), V(managed) (kernel-managed, EIO on write) or V(failed).
      type: str
      sample: changed
    msg:
      description: Error or note (write error, fallback used by V(local)).
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
rules:
  description: Per rule, the IRQs it matched.
  returned: always
  type: list
  elements: dict
  sample: [{selector: '^nvme\d+q\d+$', policy: local, cpus: null, matched: [31, 33, 34]}]
'''

import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils import sysfs
from ansible_collections.inferops.node.plugins.module_utils.cpulist import (
    CpuListError, format_cpulist, parse_cpulist, to_cpus,
)


class IrqPinError(Exception):
    pass


def parse_interrupts(text):
    """Numbered IRQ lines of /proc/interrupts: list of ``{'irq', 'counts', 'chip', 'label'}``.

    ``label`` is the action name(s) as printed on the line - the text after the
    ``<hwirq>-<flow>`` column (``2-edge``, ``147456-edge``); ``irq_names`` prefers
    ``/sys/kernel/irq/N/actions``.
    """
    lines = text.splitlines()
    if not lines:
        return []
    ncpu = len(lines[0].split())
    line_re = re.compile(r'^\s*(\d+):((?:\s+\d+){0,%d})(?:\s+(.*))?$' % ncpu)
    result = []
    for line in lines[1:]:
        match = line_re.match(line)
        if not match:
            continue
        counts = [int(c) for c in match.group(2).split()]
        tokens = (match.group(3) or '').split()
        chip = tokens[0] if tokens else ''
        label = ''
        for pos in range(1, len(tokens)):
            if re.match(r'^\d*-[A-Za-z]\S*$', tokens[pos]):
                label = ' '.join(tokens[pos + 1:])
                break
        else:
            parts = re.split(r'\s{2,}', (match.group(3) or '').strip())
            if len(parts) >= 2:
                label = parts[-1]
        result.append({'irq': int(match.group(1)), 'counts': counts, 'chip': chip, 'label': label})
    return result


def irq_names(text):
    """IRQ number -> name, for every numbered IRQ of /proc/interrupts."""
    names = {}
    for entry in parse_interrupts(text):
        actions = sysfs.read_attr('/sys/kernel/irq/%d/actions' % entry['irq'])
        name = actions.strip() if actions is not None else entry['label']
        names[entry['irq']] = name
    return names


def pci_numa_nodes():
    """IRQ number -> NUMA node of the PCI device that lists it in msi_irqs."""
    nodes = {}
    for dev in sysfs.listdir('/sys/bus/pci/devices'):
        base = '/sys/bus/pci/devices/%s' % dev
        irqs = sysfs.listdir(base + '/msi_irqs')
        if not irqs:
            continue
        node = sysfs.read_int(base + '/numa_node')
        for irq in irqs:
            if irq.isdigit():
                nodes[int(irq)] = node
    return nodes


def rule_cpus(rule, index, online):
    """Validate and expand a rule's CPU list (None when absent)."""
    value = rule.get('cpus')
    if value is None or (isinstance(value, str) and not value.strip()):
        if rule['policy'] in ('cpus', 'spread'):
            raise IrqPinError('rules[%d].cpus is required with policy=%s' % (index, rule['policy']))
        return None
    try:
        cpus = to_cpus(value)
    except CpuListError as exc:
        raise IrqPinError('rules[%d].cpus=%r is not a valid CPU list: %s' % (index, value, exc))
    if not cpus:
        raise IrqPinError('rules[%d].cpus=%r is empty' % (index, value))
    offline = sorted(set(cpus) - set(online))
    if offline:
        raise IrqPinError('rules[%d].cpus=%r names CPU(s) %s that are not online (online: %s)' % (
            index, value, format_cpulist(offline), format_cpulist(online)))
    return cpus


def main():
    module = AnsibleModule(
        argument_spec=dict(
            rules=dict(type='list', elements='dict', required=True, options=dict(
                selector=dict(type='str', required=True),
                policy=dict(type='str', default='cpus', choices=['cpus', 'spread', 'local']),
                cpus=dict(type='raw'),
            )),
            list_only=dict(type='bool', default=False),
            fail_on_no_match=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    result = dict(changed=False, irqs=[], matched_irqs=[], managed_irqs=[], rules=[])

    # ---- validate every rule before reading or writing any IRQ
    online_text = sysfs.read_attr('/sys/devices/system/cpu/online')
    try:
        online = parse_cpulist(online_text or '')
    except CpuListError as exc:
        module.fail_json(msg='cannot parse /sys/devices/system/cpu/online: %s' % exc, **result)
    if not online:
        module.fail_json(msg='cannot read the online CPUs from /sys/devices/system/cpu/online', **result)
    rules = []
    try:
        if not params['rules']:
            raise IrqPinError('rules must hold at least one rule')
        for index, rule in enumerate(params['rules']):
            try:
                pattern = re.compile(rule['selector'])
            except re.error as exc:
                raise IrqPinError('rules[%d].selector=%r is not a valid regular expression: %s' % (index, rule['selector'], exc))
            rules.append({'index': index, 'selector': rule['selector'], 'pattern': pattern, 'policy': rule['policy'],
                          'cpus': rule_cpus(rule, index, online), 'matched': []})
    except IrqPinError as exc:
        module.fail_json(msg=to_native(exc), **result)

    # ---- match
    interrupts = sysfs.read_attr('/proc/interrupts')
    if interrupts is None:
        module.fail_json(msg='cannot read /proc/interrupts', **result)
    names = irq_names(interrupts)
    for irq in sorted(names):
        for rule in rules:
            if rule['pattern'].search(names[irq]):
                rule['matched'].append(irq)
                break
    result['rules'] = [{'selector': r['selector'], 'policy': r['policy'],
                        'cpus': format_cpulist(r['cpus']) if r['cpus'] is not None else None,
                        'matched': list(r['matched'])} for r in rules]
    result['matched_irqs'] = sorted(irq for r in rules for irq in r['matched'])
    if params['fail_on_no_match']:
        empty = [r for r in rules if not r['matched']]
        if empty:
            module.fail_json(msg='rules matched no IRQ: %s' % ', '.join(
                'rules[%d].selector=%r' % (r['index'], r['selector']) for r in empty), **result)

    # ---- plan
    pci_nodes = None
    plan = []
    for rule in rules:
        for position, irq in enumerate(rule['matched']):
            base = '/proc/irq/%d' % irq
            entry = {'irq': irq, 'name': names[irq], 'rule': rule['index'], 'policy': rule['policy'], 'node': None,
                     'before': sysfs.read_attr(base + '/smp_affinity_list'), 'target': None, 'after': None,
                     'effective': sysfs.read_attr(base + '/effective_affinity_list'), 'status': 'unchanged', 'msg': None}
            if rule['policy'] == 'cpus':
                target = rule['cpus']
            elif rule['policy'] == 'spread':
                target = [rule['cpus'][position % len(rule['cpus'])]]
            else:
                node = sysfs.read_int(base + '/node')
                if node is None or node < 0:
                    if pci_nodes is None:
                        pci_nodes = pci_numa_nodes()
                    node = pci_nodes.get(irq)
                node_cpus = None
                if node is not None and node >= 0:
                    entry['node'] = node
                    try:
                        node_cpus = parse_cpulist(sysfs.read_attr('/sys/devices/system/node/node%d/cpulist' % node) or '')
                    except CpuListError:
                        node_cpus = None
                    node_cpus = [c for c in node_cpus or [] if c in online]
                allowed = rule['cpus'] or online
                if node_cpus:
                    target = [c for c in node_cpus if c in allowed]
                    if not target:
                        target = list(allowed)
                        entry['msg'] = 'node %d has none of rules[%d].cpus; using them as given' % (node, rule['index'])
                else:
                    target = list(allowed)
                    entry['msg'] = 'NUMA node unknown; using %s' % ('rules[%d].cpus' % rule['index'] if rule['cpus'] else 'all online CPUs')
            entry['target'] = format_cpulist(target)
            entry['after'] = entry['before']
            if entry['before'] is None:
                entry['status'] = 'failed'
                entry['msg'] = 'cannot read %s/smp_affinity_list' % base
            else:
                try:
                    current = parse_cpulist(entry['before'])
                except CpuListError:
                    current = None
                if current != sorted(set(target)):
                    entry['status'] = 'changed'
                    entry['after'] = entry['target']
            plan.append(entry)
    plan.sort(key=lambda e: e['irq'])

    # ---- apply
    if not module.check_mode and not params['list_only']:
        for entry in plan:
            if entry['status'] != 'changed':
                continue
            path = '/proc/irq/%d/smp_affinity_list' % entry['irq']
            try:
                sysfs.write_attr(path, entry['target'])
            except sysfs.SysfsWriteError as exc:
                entry['after'] = sysfs.read_attr(path)
                if exc.managed:
                    entry['status'] = 'managed'
                    entry['msg'] = 'kernel-managed IRQ: affinity write refused (EIO)'
                else:
                    entry['status'] = 'failed'
                    entry['msg'] = to_native(exc)
                continue
            entry['after'] = sysfs.read_attr(path)
            entry['effective'] = sysfs.read_attr('/proc/irq/%d/effective_affinity_list' % entry['irq'])
            try:
                stored = parse_cpulist(entry['after'] or '')
            except CpuListError:
                stored = None
            if stored != parse_cpulist(entry['target']):
                entry['status'] = 'failed'
                entry['msg'] = 'wrote %s but the kernel reports %r' % (entry['target'], entry['after'])
    result['irqs'] = plan
    result['managed_irqs'] = [e['irq'] for e in plan if e['status'] == 'managed']
    result['changed'] = any(e['status'] == 'changed' for e in plan) and not params['list_only']
    if module._diff:
        result['diff'] = dict(
            before_header='smp_affinity_list', after_header='smp_affinity_list',
            before=''.join('%d %s: %s\n' % (e['irq'], e['name'], e['before']) for e in plan),
            after=''.join('%d %s: %s\n' % (e['irq'], e['name'], e['before'] if params['list_only'] else e['after']) for e in plan),
        )
    failed = [e for e in plan if e['status'] == 'failed']
    if failed:
        module.fail_json(msg='could not pin %d IRQ(s): %s' % (len(failed), '; '.join(
            'IRQ %d (%s): %s' % (e['irq'], e['name'], e['msg']) for e in failed)), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
