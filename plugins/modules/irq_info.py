#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: irq_info
short_description: Report the IRQs, their devices and affinities, and irqbalance's state
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads every numbered IRQ of C(/proc/interrupts) - its action name (C(/sys/kernel/irq/N/actions)), chip,
    interrupt counts, C(smp_affinity_list) and C(effective_affinity_list), NUMA node, the PCI device that
    owns the vector (C(/sys/bus/pci/devices/*/msi_irqs)) and its driver, and for NVMe queue vectors the
    controller and queue number.
  - Tells whether each IRQ is kernel-managed without writing anything, as the C(inferops.node.irq_pin)
    module's check mode does (the same code) - debugfs C(IRQD_AFFINITY_MANAGED) when available, else the
    record of this boot in C(/run/inferops/irq-managed.json), else the NVMe driver rule (I/O queue vectors
    V(nvme<N>q<M>), M >= 1, are always managed); RV(irqs[].managed) is null when none of them tells.
  - Groups the vectors per PCI device (RV(devices)) - which ones are kernel-managed and cannot be moved, and for
    an NVMe drive its controller, serial, namespaces, C(/dev/disk/by-id) links and md arrays, so that a drive can be
    found by what does not change between boots.
  - Returns the identities the device selectors of M(inferops.node.irq_pin) resolve against (RV(identities)), for
    the controller-side checks of the C(inferops.node.irq_affinity) role.
  - Reports irqbalance - installed or not, C(irqbalance.service) and C(inferops-irq-pin.service) state,
    the running daemon's command line, and C(/etc/default/irqbalance) (banned CPUs, policy script).
  - Never changes anything.
options: {}
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux procfs/sysfs, systemd.
    support: full
    platforms: posix
notes:
  - The one command run is C(systemctl show) for the two units, in the C locale; without systemctl the
    units are reported with state null.
  - Kernel-managed vectors (blk-mq spreads an NVMe drive's I/O queues over the CPUs, one queue per CPU
    group) refuse affinity writes; only the kernel's C(isolcpus=managed_irq) boot option keeps them off
    isolated CPUs.
seealso:
  - module: inferops.node.irq_pin
'''

EXAMPLES = r'''
- name: Read the IRQs
  inferops.node.irq_info:
  register: irq

- name: Admin-queue vectors of the NVMe drives and their CPUs
  ansible.builtin.debug:
    msg: "{{ irq.irqs | selectattr('nvme_queue', 'eq', 0) | items2dict(key_name='name', value_name='smp_affinity_list') }}"

- name: Vectors the kernel manages, per PCI device
  ansible.builtin.debug:
    msg: "{{ irq.devices | items2dict(key_name='pci_address', value_name='managed_irqs') }}"
'''

RETURN = r'''
online_cpus:
  description: The online CPUs (C(/sys/devices/system/cpu/online)).
  returned: always
  type: str
  sample: 0-63
irqs:
  description: Every numbered IRQ, in number order.
  returned: always
  type: list
  elements: dict
  contains:
    irq:
      description: IRQ number.
      type: int
      sample: 33
    name:
      description: Action name(s) (comma-separated when shared).
      type: str
      sample: nvme0q1
    chip:
      description: Interrupt chip (C(PCI-MSI), C(IO-APIC), ...).
      type: str
      sample: PCI-MSI
    hwirq:
      description: Hardware IRQ number within the chip.
      type: str
      sample: '49153'
    type:
      description: Trigger type (V(edge), V(level)), null when unknown.
      type: str
      sample: edge
    count:
      description: Interrupts so far, all CPUs.
      type: int
      sample: 4711
    counts:
      description: Interrupts so far, per CPU (CPU order of C(/proc/interrupts)).
      type: list
      elements: int
      sample: [4711, 0]
    smp_affinity_list:
      description: The CPUs the IRQ may be delivered to.
      type: str
      sample: 0-31
    effective_affinity_list:
      description: The CPU(s) the kernel delivers it to now; null on kernels without the file.
      type: str
      sample: '3'
    node:
      description: NUMA node of the IRQ (C(/proc/irq/N/node)), null when unknown.
      type: int
      sample: 0
    pci_address:
      description: PCI device owning the MSI/MSI-X vector, null for other IRQs.
      type: str
      sample: '0000:41:00.0'
    driver:
      description: Driver of that PCI device.
      type: str
      sample: nvme
    numa_node:
      description: NUMA node of that PCI device, null when the firmware does not tell.
      type: int
      sample: 1
    nvme_controller:
      description: For an NVMe queue vector (V(nvme<N>q<M>)), the controller.
      type: str
      sample: nvme0
    nvme_queue:
      description: For an NVMe queue vector, the queue number - 0 is the admin queue, 1 and up I/O queues.
      type: int
      sample: 1
    managed:
      description: V(true) kernel-managed (a write is refused with EIO), V(false) movable, null unknown.
      type: bool
      sample: true
    managed_source:
      description: What told RV(irqs[].managed) - V(debugfs), V(record), V(driver); null when unknown.
      type: str
      sample: driver
devices:
  description: Per PCI device with MSI/MSI-X vectors, which vectors it has and which are kernel-managed.
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address.
      type: str
      sample: '0000:41:00.0'
    driver:
      description: Bound driver.
      type: str
      sample: nvme
    numa_node:
      description: NUMA node, null when unknown.
      type: int
      sample: 1
    names:
      description: Action names of the vectors, in IRQ order.
      type: list
      elements: str
      sample: [nvme0q0, nvme0q1]
    irqs:
      description: IRQ numbers.
      type: list
      elements: int
      sample: [31, 33]
    managed_irqs:
      description: The kernel-managed ones (cannot be moved).
      type: list
      elements: int
      sample: [33]
    unknown_irqs:
      description: Those whose managed state no source tells.
      type: list
      elements: int
      sample: []
    movable_irqs:
      description: Those known not to be kernel-managed (their affinity can be set).
      type: list
      elements: int
      sample: [31]
    nvme_controllers:
      description: NVMe controllers on this PCI function at this boot (kernel names change between boots).
      type: list
      elements: str
      sample: [nvme3]
    serials:
      description: Their serials.
      type: list
      elements: str
      sample: [S64HNE0T801234]
    block_devices:
      description: Their namespaces (and partitions) at this boot.
      type: list
      elements: str
      sample: [nvme3n1]
    by_id:
      description: The C(/dev/disk/by-id) links of those.
      type: list
      elements: str
      sample: [/dev/disk/by-id/nvme-SAMSUNG_MZQL23T8HCLS-00A07_S64HNE0T801234]
    md_arrays:
      description: Names of the md arrays a namespace of this device is a member of.
      type: list
      elements: str
      sample: [models]
identities:
  description:
    - What the device selectors of M(inferops.node.irq_pin) resolve against (C(module_utils/interrupts/irq_devices.py)) -
      C(pci) (address -> driver, MSI IRQs), C(nvme) (controller -> serial, model, PCI address), C(block) (NVMe
      namespace or partition -> controller, PCI address), C(by_id) (link -> block device), C(md) (array name ->
      kernel device, members).
  returned: always
  type: dict
  sample: {pci: {'0000:00:04.0': {driver: nvme, irqs: [30, 34, 35]}}, nvme: {nvme1: {serial: LABMODEL1, model: QEMU NVMe Ctrl,
           pci_address: '0000:00:04.0'}}, block: {nvme1n1: {controller: nvme1, pci_address: '0000:00:04.0'}},
           by_id: {/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1: nvme1n1}, md: {models: {device: md127, members: [nvme1n1]}}}
irqbalance:
  description: irqbalance on this host.
  returned: always
  type: dict
  contains:
    installed:
      description: Whether the C(irqbalance) program is on the PATH.
      type: bool
      sample: true
    path:
      description: The program.
      type: str
      sample: /usr/sbin/irqbalance
    active:
      description: Whether C(irqbalance.service) is active.
      type: bool
      sample: true
    cmdline:
      description: The running daemon's arguments (empty when it does not run).
      type: list
      elements: str
      sample: [/usr/sbin/irqbalance, --foreground, --policyscript=/usr/local/sbin/inferops-irq-pin]
    env_file:
      description: C(/etc/default/irqbalance) read as the unit's C(EnvironmentFile=) - C(variables)
        (the C(IRQBALANCE_*) assignments), C(args), C(policyscript), C(banned_cpus) (cpulist from
        C(IRQBALANCE_BANNED_CPULIST) or the mask C(IRQBALANCE_BANNED_CPUS)); null when the file is missing.
      type: dict
      sample: {variables: {IRQBALANCE_BANNED_CPULIST: 0-3}, args: [], policyscript: null, banned_cpus: 0-3}
    banned_cpus:
      description: The CPUs irqbalance places no IRQ on according to the file; null for none.
      type: str
      sample: 0-3
    policyscript:
      description: The policy script of the file's C(IRQBALANCE_ARGS), null for none.
      type: str
      sample: /usr/local/sbin/inferops-irq-pin
units:
  description: C(irqbalance.service) and C(inferops-irq-pin.service) as C(systemctl show) reports them.
  returned: always
  type: dict
  sample:
    irqbalance.service: {load_state: loaded, active_state: active, unit_file_state: enabled, main_pid: 291}
    inferops-irq-pin.service: {load_state: not-found, active_state: inactive, unit_file_state: null, main_pid: null}
boot_id:
  description: This boot's id; RV(record_of_this_boot) tells whether the managed-IRQ record is from this boot.
  returned: always
  type: str
  sample: 6f0f0d1e-7f0a-4a43-9c52-0e4b2c8f61a2
record_of_this_boot:
  description: Whether C(/run/inferops/irq-managed.json) exists and was written during this boot.
  returned: always
  type: bool
  sample: true
command_log:
  description:
    - Every command the module ran, in order, in the C locale, to debug a run (C(-vvv) prints it). In check mode a
      command that would change the host is listed, not run (RV(command_log[].ran) false).
  returned: always
  type: list
  elements: dict
  contains:
    argv:
      description: The argument list, the program resolved to its path.
      type: list
      elements: str
    rc:
      description: The exit status; null for a command check mode did not run.
      type: int
    ran:
      description: Whether the command ran.
      type: bool
  sample:
    - argv: [/usr/bin/systemctl, show, -p, Id, -p, LoadState, -p, ActiveState, -p, UnitFileState, -p, ExecMainPID, irqbalance.service]
      rc: 0
      ran: true
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq, irq_devices
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner

UNITS = ('irqbalance.service', 'inferops-irq-pin.service')
ENV_FILE = '/etc/default/irqbalance'


def parse_systemctl_show(text, units):
    """``systemctl show -p ...`` of several units (blocks separated by blank lines, keyed by ``Id``)."""
    states = dict((unit, {'load_state': None, 'active_state': None, 'unit_file_state': None, 'main_pid': None})
                  for unit in units)
    for block in (text or '').strip().split('\n\n'):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        unit = props.get('Id')
        if unit not in states:
            continue
        pid = props.get('ExecMainPID', '')
        states[unit] = {'load_state': props.get('LoadState') or None, 'active_state': props.get('ActiveState') or None,
                        'unit_file_state': props.get('UnitFileState') or None,
                        'main_pid': int(pid) if pid.isdigit() and pid != '0' else None}
    return states


def device_groups(table, identities):
    """The vectors of ``irq.irq_table`` grouped per PCI device, with the device's identity
    (``irq_devices.identity_table``): NVMe controllers, serials, namespaces, by-id links, md arrays."""
    groups = {}
    for entry in table:
        if not entry['pci_address']:
            continue
        group = groups.setdefault(entry['pci_address'], {
            'pci_address': entry['pci_address'], 'driver': entry['driver'], 'numa_node': entry['numa_node'],
            'names': [], 'irqs': [], 'managed_irqs': [], 'unknown_irqs': [], 'movable_irqs': []})
        group['names'].append(entry['name'])
        group['irqs'].append(entry['irq'])
        key = 'managed_irqs' if entry['managed'] else 'unknown_irqs' if entry['managed'] is None else 'movable_irqs'
        group[key].append(entry['irq'])
    for address, group in groups.items():
        ctrls = sorted(name for name, ctrl in identities['nvme'].items() if ctrl['pci_address'] == address)
        blocks = sorted(name for name, dev in identities['block'].items() if dev['controller'] in ctrls)
        group.update(
            nvme_controllers=ctrls, serials=[identities['nvme'][name]['serial'] for name in ctrls], block_devices=blocks,
            by_id=sorted(link for link, name in identities['by_id'].items() if name in blocks),
            md_arrays=sorted(name for name, array in identities['md'].items() if set(array['members']) & set(blocks)))
    return [groups[key] for key in sorted(groups)]


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    runner = CommandRunner(module)
    result = dict(changed=False, command_log=runner.log)
    try:
        result['online_cpus'] = irq.format_cpulist(irq.online_cpus())
        boot = irq.boot_id()
        record = irq.load_record(sysfs.read_attr(irq.RECORD), boot)
        table = irq.irq_table(record)
    except irq.IrqError as exc:
        module.fail_json(msg=to_native(exc), **result)
    identities = irq_devices.identity_table()
    result.update(irqs=table, devices=device_groups(table, identities), identities=identities, boot_id=boot,
                  record_of_this_boot=bool(record))

    units = parse_systemctl_show('', UNITS)
    if runner.find('systemctl'):
        rc, out, err = runner.run(['systemctl', 'show', '-p', 'Id', '-p', 'LoadState', '-p', 'ActiveState',
                                   '-p', 'UnitFileState', '-p', 'ExecMainPID'] + list(UNITS))
        if rc == 0:
            units = parse_systemctl_show(out, UNITS)
        else:
            module.warn('systemctl show failed (rc=%d): %s' % (rc, err.strip()))
    result['units'] = units

    daemon = units['irqbalance.service']
    cmdline = sysfs.read_attr('/proc/%d/cmdline' % daemon['main_pid']) if daemon['main_pid'] else None
    env_text = sysfs.read_attr(ENV_FILE)
    env = irq.parse_irqbalance_env(env_text) if env_text is not None else None
    path = module.get_bin_path('irqbalance', opt_dirs=['/usr/sbin', '/sbin'])
    result['irqbalance'] = {
        'installed': bool(path), 'path': path, 'active': daemon['active_state'] == 'active',
        'cmdline': [arg for arg in (cmdline or '').split('\0') if arg], 'env_file': env,
        'banned_cpus': env['banned_cpus'] if env else None, 'policyscript': env['policyscript'] if env else None,
    }
    module.exit_json(**result)


if __name__ == '__main__':
    main()
