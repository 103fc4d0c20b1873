#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: blockdev_info
short_description: Read block devices - what they are, their size and read-ahead, and the filesystem on them
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - For each device of O(devices), in one call - a path whose links end at a block device node
    (C(/dev/disk/by-id/...), C(/dev/md/<name>), C(/dev/mapper/<name>)) or a kernel name (V(nvme1n1)) - tells
    whether it exists, its kernel name, its kind (V(disk), V(partition), V(md), V(dm), V(nvme), V(nvme-of)) and
    NVMe transport, size, read-ahead, the devices stacked on it, and what a low-level probe finds on it
    (C(blkid -p -o export), run in the C locale; the filesystem type, UUID and label among its tags).
  - A path that is missing or not a block device is reported (RV(devices[].problem)), not a failure; so is a
    probe that failed. Never changes anything.
options:
  devices:
    description: The devices to read, reported in this order.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux hosts with util-linux (C(blkid)).
    support: full
    platforms: posix
notes:
  - The reads are C(resolve_device), C(device_kind) and C(blkid_probe) of C(plugins/module_utils/storage/blockdev.py);
    the role C(inferops.node.nvmeof_initiator) reads its fabric namespaces with this module before it mounts
    them (the filesystem must be the one declared; fstab names it by UUID).
seealso:
  - module: inferops.node.md_info
  - module: inferops.node.nvme_info
'''

EXAMPLES = r'''
- name: Read the namespaces to mount
  inferops.node.blockdev_info:
    devices: [/dev/nvme1n1, /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0]
  register: namespaces

- name: Show each one's filesystem
  ansible.builtin.debug:
    msg: "{{ namespaces.devices | map(attribute='fstype') | list }}"
'''

RETURN = r'''
devices:
  description: One entry per device of O(devices), in its order.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The device as given.
      type: str
    exists:
      description: Whether the path exists.
      type: bool
    device:
      description: Its node in C(/dev) (V(/dev/nvme1n1)); null when it is not a block device.
      type: str
    kname:
      description: Its kernel name; null when it is not a block device.
      type: str
    kind:
      description: V(disk), V(partition), V(md), V(dm), V(nvme) (PCIe) or V(nvme-of); null when not a block device.
      type: str
    transport:
      description: The NVMe controller's transport (V(pcie), V(tcp), V(rdma), V(fc), V(loop)), null otherwise.
      type: str
    size_bytes:
      description: Its size in bytes.
      type: int
    read_ahead_kb:
      description: Its read-ahead (C(queue/read_ahead_kb)).
      type: int
    holders:
      description: The kernel names of the devices stacked on it (md, dm).
      type: list
      elements: str
    blkid:
      description: The tags of C(blkid -p -o export); empty when nothing was found (or the probe failed).
      type: dict
      sample: {"TYPE": "xfs", "UUID": "3c2e1a55-8e2f-4f2c-9d59-5a0f9bde0c11", "USAGE": "filesystem"}
    fstype:
      description: The filesystem or signature type (tag C(TYPE)); null when none.
      type: str
    uuid:
      description: Its filesystem UUID (tag C(UUID)); null when none.
      type: str
    label:
      description: Its filesystem label (tag C(LABEL)); null when none.
      type: str
    problem:
      description: Why it could not be read (missing, not a block device, the probe failed); null when it was.
      type: str
  sample: [{"path": "/dev/nvme1n1", "exists": true, "device": "/dev/nvme1n1", "kname": "nvme1n1", "kind": "nvme-of",
            "transport": "tcp", "size_bytes": 1073741824, "read_ahead_kb": 4096, "holders": [],
            "blkid": {"TYPE": "xfs", "UUID": "3c2e1a55-8e2f-4f2c-9d59-5a0f9bde0c11"}, "fstype": "xfs",
            "uuid": "3c2e1a55-8e2f-4f2c-9d59-5a0f9bde0c11", "label": null, "problem": null}]
command_log:
  description: The commands run, C({argv, rc, ran}) each.
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner


def read_device(runner, path):
    entry = {'path': path, 'exists': sysfs.exists(path if path.startswith('/') else '/dev/' + path), 'device': None,
             'kname': None, 'kind': None, 'transport': None, 'size_bytes': None, 'read_ahead_kb': None,
             'holders': [], 'blkid': {}, 'fstype': None, 'uuid': None, 'label': None, 'problem': None}
    try:
        resolved = blockdev.resolve_device(path)
    except blockdev.BlockDevError as exc:
        entry['problem'] = str(exc)
        return entry
    kname = resolved['kname']
    kind = blockdev.device_kind(kname)
    entry.update(device=resolved['device'], kname=kname, kind=kind['kind'], transport=kind['transport'],
                 size_bytes=sysfs.block_size_bytes(kname),
                 read_ahead_kb=sysfs.read_int('/sys/class/block/%s/queue/read_ahead_kb' % kname),
                 holders=blockdev.holders(kname))
    try:
        tags = blockdev.blkid_probe(runner, resolved['device'])
    except blockdev.BlockDevError as exc:
        entry['problem'] = str(exc)
        return entry
    entry.update(blkid=tags, fstype=tags.get('TYPE'), uuid=tags.get('UUID'), label=tags.get('LABEL'))
    return entry


def main():
    module = AnsibleModule(
        argument_spec=dict(devices=dict(type='list', elements='str', required=True)),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    devices = [read_device(runner, path) for path in module.params['devices']]
    module.exit_json(changed=False, devices=devices, command_log=runner.log)


if __name__ == '__main__':
    main()
