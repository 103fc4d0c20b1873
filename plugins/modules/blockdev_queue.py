#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: blockdev_queue
short_description: Set the request queue of block devices (I/O scheduler, read-ahead, nr_requests) now
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Sets C(queue/scheduler), C(queue/nr_requests) and C(queue/read_ahead_kb) under C(/sys/class/block/<kname>)
    of several whole block devices in one call, only where they differ, and reads each value back.
  - The scheduler is set first, because switching it resets C(nr_requests) to the new scheduler's default.
  - Runtime only; what applies at boot and to new devices is a udev rule the caller installs (the role
    P(inferops.node.nvme_sched#role) does). M(inferops.node.blockdev_readahead) sets read-ahead alone, with md stripe
    defaults and its own persistent rule.
  - Every device and value is validated before anything is written.
options:
  devices:
    description:
      - Whole block devices - kernel names (V(nvme0n1)) or paths (C(/dev/nvme0n1), C(/dev/disk/by-id/...)).
    type: list
    elements: str
    required: true
  scheduler:
    description:
      - I/O scheduler (V(none), V(mq-deadline), V(kyber), V(bfq)); every device must offer it. Omitted - left as it is.
    type: str
  read_ahead_kb:
    description:
      - Read-ahead in KiB, a multiple of the page size (4 KiB). Omitted - left as it is.
    type: int
  nr_requests:
    description:
      - Request queue depth. Omitted - left as it is.
    type: int
attributes:
  check_mode:
    description: Nothing is written; RV(devices[].after) shows the values that would be set.
    support: full
  diff_mode:
    description: The managed values of every device before and after, one line each.
    support: full
  platform:
    description: Linux sysfs.
    support: full
    platforms: posix
notes:
  - The kernel may round C(nr_requests) to what the driver allows; a device whose value read back differs from
    the wanted one fails the module, naming device, attribute and value.
seealso:
  - module: inferops.node.blockdev_readahead
  - module: inferops.node.nvme_info
'''

EXAMPLES = r'''
- name: Scheduler none and 2 MiB read-ahead on the selected NVMe namespaces, now
  inferops.node.blockdev_queue:
    devices: [nvme0n1, nvme1n1]
    scheduler: none
    read_ahead_kb: 2048

- name: Deeper queue with mq-deadline on a drive by id
  inferops.node.blockdev_queue:
    devices: [/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0]
    scheduler: mq-deadline
    nr_requests: 256
'''

RETURN = r'''
devices:
  description: One entry per device, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The device as given.
      type: str
      sample: nvme0n1
    kname:
      description: Its kernel name.
      type: str
      sample: nvme0n1
    before:
      description: C({scheduler, read_ahead_kb, nr_requests}) before the call.
      type: dict
      sample: {scheduler: mq-deadline, read_ahead_kb: 128, nr_requests: 1023}
    after:
      description: The same read back after writing; the planned values in check mode.
      type: dict
      sample: {scheduler: none, read_ahead_kb: 2048, nr_requests: 1023}
    changed:
      description: Whether a value of this device was (in check mode would be) written.
      type: bool
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs

# Written in this order: a scheduler switch resets nr_requests.
ATTRS = ('scheduler', 'nr_requests', 'read_ahead_kb')


class QueueError(Exception):
    pass


def wanted_values(params):
    """The values to manage, validated alone (before any device is looked at)."""
    want = dict((attr, params[attr]) for attr in ATTRS if params[attr] is not None)
    if not want:
        raise QueueError('one of scheduler, read_ahead_kb and nr_requests is required')
    if 'read_ahead_kb' in want:
        try:
            blockdev.check_read_ahead_kb(want['read_ahead_kb'], 'read_ahead_kb')
        except blockdev.BlockDevError as exc:
            raise QueueError(to_native(exc))
    if 'nr_requests' in want and want['nr_requests'] <= 0:
        raise QueueError('nr_requests=%d must be positive' % want['nr_requests'])
    return want


def current(kname):
    queue = blockdev.queue_settings(kname)
    return dict((attr, queue[attr]) for attr in ATTRS), queue['schedulers']


def plan(devices, want):
    """Per device: kname, the values before, the values planned, and what to write in order."""
    entries = []
    for device in devices:
        try:
            kname = blockdev.resolve_device(device)['kname']
        except blockdev.BlockDevError as exc:
            raise QueueError(to_native(exc))
        before, offered = current(kname)
        if before['scheduler'] is None or before['read_ahead_kb'] is None:
            raise QueueError('%s (%s) has no request queue (a partition or a stacked device?)' % (device, kname))
        if 'scheduler' in want and want['scheduler'] not in offered:
            raise QueueError('%s (%s): scheduler=%s is not offered (available: %s)' % (
                device, kname, want['scheduler'], ', '.join(offered)))
        after = dict(before, **want)
        entries.append({'device': device, 'kname': kname, 'before': before, 'after': after,
                        'writes': [attr for attr in ATTRS if attr in want and before[attr] != want[attr]]})
    return entries


def apply(entry, want):
    """Write what differs, in ATTRS order, then read everything back."""
    path = '/sys/class/block/%s/queue/' % entry['kname']
    for attr in ATTRS:
        if attr not in want:
            continue
        # nr_requests is compared again after a scheduler switch, which resets it.
        now = current(entry['kname'])[0][attr] if attr == 'nr_requests' else entry['before'][attr]
        if now != want[attr]:
            sysfs.write_attr(path + attr, want[attr])
            if attr not in entry['writes']:
                entry['writes'].append(attr)
    entry['after'] = current(entry['kname'])[0]
    return [attr for attr in want if entry['after'][attr] != want[attr]]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type='list', elements='str', required=True),
            scheduler=dict(type='str'),
            read_ahead_kb=dict(type='int'),
            nr_requests=dict(type='int'),
        ),
        supports_check_mode=True,
    )
    result = dict(changed=False, devices=[])
    try:
        want = wanted_values(module.params)
        entries = plan(module.params['devices'], want)
    except QueueError as exc:
        module.fail_json(msg=to_native(exc), **result)

    def report():
        return [dict([(k, v) for k, v in e.items() if k != 'writes'], changed=bool(e['writes'])) for e in entries]

    for entry in entries:
        if not entry['writes'] or module.check_mode:
            continue
        try:
            off = apply(entry, want)
        except sysfs.SysfsWriteError as exc:
            module.fail_json(msg='%s (%s): %s' % (entry['device'], entry['kname'], to_native(exc.strerror)),
                             changed=True, devices=report())
        if off:
            module.fail_json(msg='%s (%s): the kernel reports %s' % (entry['device'], entry['kname'], ', '.join(
                '%s=%s (wanted %s)' % (attr, entry['after'][attr], want[attr]) for attr in off)), changed=True, devices=report())
    result['devices'] = report()
    result['changed'] = any(entry['changed'] for entry in result['devices'])

    if module._diff:
        def lines(key):
            return ''.join('%s: %s\n' % (e['kname'], ' '.join('%s=%s' % (a, e[key][a]) for a in ATTRS)) for e in entries)
        result['diff'] = dict(before_header='block queues', after_header='block queues',
                              before=lines('before'), after=lines('after'))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
