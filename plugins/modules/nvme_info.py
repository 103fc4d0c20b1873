#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nvme_info
short_description: Report the NVMe controllers and namespaces - identity, PCIe link, NUMA node, queue settings
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads every NVMe controller (C(/sys/class/nvme)) - model, serial, firmware, transport and address,
    subsystem NQN, state, NUMA node, number and depth of its queues, for PCIe drives the PCI address,
    driver and link speed and width, current and maximum, and for fabrics controllers the host NQN and ID,
    the reconnect settings and the multipath paths.
  - Reads every NVMe namespace block device (C(nvme<c>n<n>); the hidden per-path devices of native
    multipath are left out) - its controllers, identity, size, C(/dev/disk/by-id) links, the md/dm devices
    holding it, and its request queue (scheduler and the ones offered, C(read_ahead_kb), C(nr_requests),
    C(max_sectors_kb), block sizes, blk-mq hardware queues and their CPUs).
  - Sysfs only; nvme-cli is not needed. Values the kernel does not know (the PCIe link of an emulated drive,
    the NUMA node of a single-node machine) are null.
  - Never changes anything.
options:
  settle_timeout:
    description:
      - Seconds to wait, before reading, while a fabrics controller is V(connecting) or V(resetting) - a
        reconnect in progress (a keep-alive timeout on a loaded host, a path flap) is then not read as a
        lost connection by whoever decides on this read (node labels, the audit).
      - V(0) reads at once. A controller still in such a state when the time is up is read as it is and
        named in RV(settling).
    type: int
    default: 0
    version_added: 0.2.0
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux sysfs.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.blockdev_readahead
  - module: inferops.node.nvme_connect
'''

EXAMPLES = r'''
- name: Read the NVMe drives
  inferops.node.nvme_info:
  register: nvme

- name: Read the fabric, giving a reconnect in progress up to a minute
  inferops.node.nvme_info:
    settle_timeout: 60
  register: fabric

- name: Drives whose PCIe link trained below what they can do
  ansible.builtin.debug:
    msg: "{{ nvme.controllers | selectattr('pci_link') | selectattr('pci_link.downgraded') | map(attribute='serial') }}"

- name: Scheduler and read-ahead per namespace, by serial
  ansible.builtin.debug:
    msg: "{{ nvme.namespaces | map(attribute='serial') | zip(nvme.namespaces | map(attribute='queue')) }}"
'''

RETURN = r'''
settling:
  description:
    - Fabrics controllers still V(connecting) or V(resetting) when read (after O(settle_timeout)).
  returned: always
  type: list
  elements: str
  sample: [nvme1]
  version_added: 0.2.0
controllers:
  description: Every NVMe controller, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Kernel name (changes with probe order; use the serial or PCI address to identify a drive).
      type: str
      sample: nvme0
    model:
      description: Model number.
      type: str
      sample: SAMSUNG MZQL27T6HBLA-00A07
    serial:
      description: Serial number.
      type: str
      sample: S6CKNG0R700123
    firmware:
      description: Firmware revision.
      type: str
      sample: GDC5902Q
    transport:
      description: V(pcie), V(tcp), V(rdma), V(fc) or V(loop).
      type: str
      sample: pcie
    address:
      description: Transport address (the PCI address for PCIe, C(traddr=...,trsvcid=...) for fabrics).
      type: str
      sample: '0000:41:00.0'
    pci_address:
      description: PCI address of a PCIe controller, null for fabrics.
      type: str
      sample: '0000:41:00.0'
    driver:
      description: Driver bound to the PCI device.
      type: str
      sample: nvme
    numa_node:
      description: NUMA node, null when unknown (single-node machines, most VMs).
      type: int
      sample: 1
    pci_link:
      description:
        - PCIe link - C(current_speed) / C(max_speed) (the kernel's text), C(current_gts) / C(max_gts)
          (GT/s), C(current_width) / C(max_width) (lanes), C(downgraded) (trained below its maximum). Each
          null when the kernel does not know it; the whole value is null for fabrics.
      type: dict
      sample: {current_speed: 16.0 GT/s PCIe, current_gts: 16.0, current_width: 4, max_speed: 16.0 GT/s PCIe,
               max_gts: 16.0, max_width: 4, downgraded: false}
    subsysnqn:
      description: NQN of the subsystem.
      type: str
      sample: nqn.1994-11.com.samsung:nvme:PM9A3:2.5-inch:S6CKNG0R700123
    subsystem:
      description: The kernel's subsystem name (C(nvme-subsys0)).
      type: str
      sample: nvme-subsys0
    state:
      description: Controller state (V(live), V(connecting), ...).
      type: str
      sample: live
    cntrltype:
      description:
        - Controller type (C(cntrltype)) - V(io), V(discovery) (a persistent discovery controller) or V(admin);
          null where the kernel does not say (older kernels, some PCIe drives).
      type: str
      sample: io
    addr:
      description:
        - The fields of RV(controllers[].address) of a fabrics controller - C(traddr), C(trsvcid) and, when set,
          C(src_addr), C(host_traddr), C(host_iface) (all strings); empty for PCIe. The audit and
          M(inferops.node.nvme_connect) match a connection's address and port on these.
      type: dict
      sample: {traddr: 10.77.0.10, trsvcid: '4420', src_addr: 10.77.0.21}
    hostnqn:
      description: Host NQN the controller was connected with (fabrics), null for PCIe.
      type: str
      sample: nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff
    hostid:
      description: Host ID the controller was connected with (fabrics), null for PCIe.
      type: str
      sample: 7e16d9e1-e671-4eb7-a92e-1455d7efcbff
    cntlid:
      description: Controller ID within its subsystem.
      type: int
      sample: 1
    queue_count:
      description: Number of queues, the admin queue included (C(queue_count)).
      type: int
      sample: 3
    ctrl_loss_tmo:
      description:
        - Seconds the kernel keeps reconnecting a lost fabrics controller (as the kernel rounds it, a multiple
          of RV(controllers[].reconnect_delay)); V(-1) for C(off) (forever); null for PCIe.
      type: int
      sample: 120
    reconnect_delay:
      description: Seconds between reconnect attempts of a fabrics controller; null for PCIe.
      type: int
      sample: 2
    keep_alive_tmo:
      description: Keep-alive timeout in seconds (C(kato)); V(0) for none.
      type: int
      sample: 5
    dhchap:
      description: Whether the controller has a DH-HMAC-CHAP secret file (C(dhchap_secret); the secret is not read).
      type: bool
      sample: false
    paths:
      description:
        - The per-path namespace devices of native multipath under this controller (C(nvme<s>c<c>n<n>)), each
          with C(name) and C(ana_state) (V(optimized), V(non-optimized), V(inaccessible), ...; null without ANA).
      type: list
      elements: dict
      sample: [{name: nvme0c0n1, ana_state: optimized}]
    io_queues:
      description: Number of I/O queues (C(queue_count) minus the admin queue).
      type: int
      sample: 64
    queue_size:
      description: Depth of each I/O queue (C(sqsize) + 1).
      type: int
      sample: 1024
    namespaces:
      description: Kernel names of its namespace block devices.
      type: list
      elements: str
      sample: [nvme0n1]
namespaces:
  description: Every NVMe namespace block device, by controller and namespace number.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Kernel name.
      type: str
      sample: nvme0n1
    device:
      description: Device node.
      type: str
      sample: /dev/nvme0n1
    nsid:
      description: Namespace id.
      type: int
      sample: 1
    size_bytes:
      description: Size.
      type: int
      sample: 7681501126656
    wwid:
      description: World-wide id.
      type: str
    controllers:
      description: Its controllers (several for a multipath namespace).
      type: list
      elements: str
      sample: [nvme0]
    model:
      description: Model of its controller.
      type: str
    serial:
      description: Serial of its controller.
      type: str
    firmware:
      description: Firmware of its controller.
      type: str
    transport:
      description: Transport of its (first) controller.
      type: str
      sample: pcie
    pci_address:
      description: PCI address of its (first) controller, null for fabrics.
      type: str
    numa_node:
      description: NUMA node of its (first) controller.
      type: int
    by_id:
      description: The C(/dev/disk/by-id/nvme-<model>_<serial>) link, null when udev made none.
      type: str
      sample: /dev/disk/by-id/nvme-SAMSUNG_MZQL27T6HBLA-00A07_S6CKNG0R700123
    by_id_all:
      description: Every C(/dev/disk/by-id) link to it.
      type: list
      elements: str
    holders:
      description: Devices stacked on it (md arrays, dm devices).
      type: list
      elements: str
      sample: [md127]
    queue:
      description:
        - Its request queue (C(/sys/block/<name>/queue)) - C(scheduler) (active), C(schedulers) (offered),
          C(read_ahead_kb), C(nr_requests), C(max_sectors_kb), C(max_hw_sectors_kb), C(logical_block_size),
          C(physical_block_size), C(minimum_io_size), C(optimal_io_size), C(rotational), C(write_cache),
          C(rq_affinity), C(nomerges), C(io_poll), C(add_random), C(nr_hw_queues) and C(hw_queue_cpus)
          (the CPUs of each blk-mq hardware queue). Missing files are null.
      type: dict
      sample: {scheduler: none, schedulers: [none, mq-deadline], read_ahead_kb: 2048, nr_requests: 1023,
               max_sectors_kb: 512, nr_hw_queues: 2, hw_queue_cpus: ['0', '1']}
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_devices


# Fabrics controller states that end by themselves: the kernel is reconnecting or resetting it.
SETTLING_STATES = ('connecting', 'resetting')


def settling(controllers):
    return [c['name'] for c in controllers if c.get('transport') != 'pcie' and c.get('state') in SETTLING_STATES]


def main():
    module = AnsibleModule(argument_spec={'settle_timeout': {'type': 'int', 'default': 0}}, supports_check_mode=True)
    timeout = module.params['settle_timeout']
    if timeout < 0:
        module.fail_json(msg='settle_timeout = %d: must be 0 or more seconds' % timeout)
    deadline = time.monotonic() + timeout
    controllers = nvme_devices.controllers()
    while settling(controllers) and time.monotonic() < deadline:
        time.sleep(1)
        controllers = nvme_devices.controllers()
    namespaces = nvme_devices.namespaces(controllers)
    module.exit_json(changed=False, controllers=controllers, namespaces=namespaces, settling=settling(controllers))


if __name__ == '__main__':
    main()
