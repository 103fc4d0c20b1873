#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: blockdev_readahead
short_description: Set block device read-ahead at runtime and persist it with a udev rule
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Sets C(/sys/block/<kname>/queue/read_ahead_kb) of one or more block devices in one call - NVMe
    namespaces (local or NVMe-oF), md arrays, dm devices or other whole disks - and reads the value back.
  - Device paths may be stable links (C(/dev/disk/by-id/...), C(/dev/md/<name>), C(/dev/mapper/<name>));
    they are resolved to the kernel name.
  - For an md array without an explicit value the default is twice the full stripe width
    (chunk size x data disks x 2, read from C(/sys/block/mdX/md/)); for a 4-disk RAID0 with 512 KiB
    chunks that is 4096 KiB.
  - A larger existing value is never lowered unless O(allow_decrease=true); such devices are reported
    with RV(devices[].status=kept).
  - With O(persistent=present) a udev rule file re-applies the value on C(add|change) events, matching
    the device by a stable property so the rule still matches when kernel names move across reboots -
    md by the array UUID (C(ATTR{md/uuid}); C(ENV{MD_UUID}) is only set later, by
    C(63-md-raid-arrays.rules)), NVMe by C(ENV{ID_WWN}), else C(ENV{ID_SERIAL}) plus the namespace id,
    dm by C(ENV{DM_UUID}). The module does not reload udev; it returns RV(udev_reload_needed) for a handler.
  - Every value and device is validated before anything is changed.
options:
  devices:
    description:
      - The devices to tune.
    type: list
    elements: dict
    required: true
    suboptions:
      device:
        description:
          - Device path (C(/dev/nvme0n1), C(/dev/disk/by-id/nvme-...), C(/dev/md/data), C(/dev/mapper/x))
            or bare kernel name. Must be a whole device, not a partition.
        type: str
        required: true
      read_ahead_kb:
        description:
          - Read-ahead in KiB for this device. A non-negative integer that is a multiple of the page
            size in KiB (4 on x86_64); the kernel stores read-ahead in pages.
          - Overrides the top-level O(read_ahead_kb) / O(read_ahead_sectors).
        type: raw
      read_ahead_sectors:
        description:
          - Read-ahead in 512-byte sectors (the unit of C(blockdev --setra)); converted to KiB.
          - Mutually exclusive with O(devices[].read_ahead_kb).
        type: raw
  read_ahead_kb:
    description:
      - Read-ahead in KiB for every device of O(devices) without its own value.
      - When neither this, O(read_ahead_sectors) nor a per-device value is given, md arrays get twice
        their stripe width and any other device is an error.
    type: raw
  read_ahead_sectors:
    description:
      - Like O(read_ahead_kb), in 512-byte sectors.
    type: raw
  allow_decrease:
    description:
      - Allow lowering a larger current value. When false such a device keeps its value and is
        reported as RV(devices[].status=kept); its persistent rule uses the kept value.
    type: bool
    default: false
  persistent:
    description:
      - V(present) - write or update a udev rule for every device in O(rules_file).
      - V(absent) - remove the rules of these devices from O(rules_file) (the file is deleted when no
        rule is left); the runtime value is still set.
      - V(ignore) - runtime only, the rules file is not touched.
    type: str
    choices: [present, absent, ignore]
    default: ignore
  rules_file:
    description:
      - The udev rules file this module owns. Rules of devices not named in this call are kept.
    type: path
    default: /etc/udev/rules.d/61-inferops-readahead.rules
attributes:
  check_mode:
    description: Nothing is written; RV(devices[].after) is the value that would be set.
    support: full
  diff_mode:
    description: Shows the sysfs values and the rules file before and after.
    support: full
  platform:
    description: Linux with sysfs; udev for O(persistent=present).
    support: full
    platforms: posix
notes:
  - Read-ahead is stored in pages, so values that are not a multiple of the page size would read back
    differently and are rejected.
  - On md arrays the kernel already derives a default of twice the optimal I/O size; an explicit larger
    value on a member or array is kept unless O(allow_decrease=true).
seealso:
  - name: Linux block queue sysfs
    description: Documentation of C(read_ahead_kb).
    link: https://docs.kernel.org/admin-guide/abi-stable.html
'''

EXAMPLES = r'''
- name: 4 MiB read-ahead on the model array, 128 KiB on the index drives, persisted
  inferops.node.blockdev_readahead:
    devices:
      - device: /dev/md/model            # RAID0 4 x 512K chunks: default would be 4096 anyway
        read_ahead_kb: 4096
      - device: /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0
      - device: /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX1
    read_ahead_kb: 128
    persistent: present
  register: ra
  notify: Reload udev rules

- name: md default (twice the stripe width), runtime only
  inferops.node.blockdev_readahead:
    devices:
      - device: /dev/md/model

- name: Same in sectors (blockdev --setra units), lowering allowed
  inferops.node.blockdev_readahead:
    devices:
      - device: /dev/nvme0n1
        read_ahead_sectors: 256
    allow_decrease: true
'''

RETURN = r'''
devices:
  description: One entry per requested device, in request order.
  returned: always
  type: list
  elements: dict
  contains:
    device:
      description: The path as given.
      type: str
      sample: /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0
    kname:
      description: Kernel name it resolved to.
      type: str
      sample: nvme4n1
    kind:
      description: V(md), V(dm), V(nvme), V(nvme-of) or V(disk).
      type: str
      sample: nvme
    transport:
      description: NVMe controller transport (V(pcie), V(tcp), V(rdma), V(fc), V(loop)), null otherwise.
      type: str
      sample: pcie
    requested_kb:
      description: The value asked for (converted from sectors, or the md default).
      type: int
      sample: 128
    source:
      description: Where RV(devices[].requested_kb) came from - V(device), V(top-level) or V(md_stripe).
      type: str
      sample: device
    before:
      description: read_ahead_kb before the call.
      type: int
      sample: 128
    after:
      description: read_ahead_kb after the call (read back; the planned value in check mode).
      type: int
      sample: 4096
    status:
      description: V(changed), V(unchanged) or V(kept) (a larger value was kept, see O(allow_decrease)).
      type: str
      sample: changed
    rule_match:
      description: The udev match keys used for the persistent rule (null when not persistent).
      type: str
      sample: KERNEL=="md*", ATTR{md/uuid}=="ae809e5b-1362-128b-161f-63bf74fd1500"
    note:
      description: Explanation (md stripe computation, kept value), when there is one.
      type: str
rules_file:
  description: The rules file path.
  returned: always
  type: str
  sample: /etc/udev/rules.d/61-inferops-readahead.rules
rules_changed:
  description: Whether the rules file was (or in check mode would be) changed.
  returned: always
  type: bool
udev_reload_needed:
  description: True when the rules file changed; run C(udevadm control --reload) (role handler).
  returned: always
  type: bool
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
  sample: [{argv: [/usr/bin/udevadm, info, "--query=property", "--name=/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0"], rc: 0, ran: true}]
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics
from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner

RULES_HEADER = (
    '# Managed by inferops.node.blockdev_readahead - changes are overwritten.\n'
    '# Re-applies block device read-ahead when a device appears or changes.\n'
)
_RULE_RE = re.compile(r'^(?P<match>.*?),\s*ATTR\{queue/read_ahead_kb\}="(?P<value>\d+)"\s*$')
_SAFE_VALUE_RE = re.compile(r'^[A-Za-z0-9._:+@/=-]+$')


class ReadaheadError(Exception):
    pass


def page_kb():
    try:
        return max(1, os.sysconf('SC_PAGESIZE') // 1024)
    except (ValueError, OSError, AttributeError):
        return 4


def parse_value(value, option):
    """Validate a read-ahead value: non-negative integer (int or digit string); the page size is checked
    by ``to_kb`` once the unit is known. The rule is ``blockdev.check_read_ahead_kb``, as for nvme_sched."""
    if value is None:
        return None
    try:
        return blockdev.check_read_ahead_kb(value, option, page_kb=None)
    except blockdev.BlockDevError as exc:
        raise ReadaheadError(to_native(exc))


def to_kb(kb, sectors, option_prefix):
    """Turn an (already validated) kb/sectors pair into KiB, checking page granularity."""
    page = page_kb()
    if sectors is not None:
        if (sectors * 512) % (page * 1024):
            raise ReadaheadError('%sread_ahead_sectors=%d is not a multiple of %d sectors (one %d KiB page)' % (
                option_prefix, sectors, page * 2, page))
        return sectors // 2
    if kb % page:
        raise ReadaheadError('%sread_ahead_kb=%d is not a multiple of the %d KiB page size' % (option_prefix, kb, page))
    return kb


def udev_value_ok(value):
    return bool(value) and _SAFE_VALUE_RE.match(value) is not None


def rule_match(runner, entry):
    """udev match keys identifying the device across reboots, plus a warning when only KERNEL fits."""
    kname = entry['kname']
    cache = []

    def prop(key):
        if not cache:
            cache.append(blockdev.udev_properties(runner, entry['path']))
        return cache[0].get(key)

    kind = entry['kind']
    if kind == 'md':
        # ENV{MD_UUID} is imported by 63-md-raid-arrays.rules, after a 61-* rule ran: match the
        # kernel's md/uuid attribute instead (same UUID, kernel notation).
        uuid = blockdev.md_sysfs_state(kname)['uuid']
        if udev_value_ok(uuid) and uuid.strip('0-'):
            return 'KERNEL=="md*", ATTR{md/uuid}=="%s"' % uuid, None
        uuid = prop('MD_UUID')
        if udev_value_ok(uuid):
            return 'KERNEL=="md*", ENV{MD_UUID}=="%s"' % uuid, (
                '%s (%s): the kernel has no md/uuid attribute; the rule matches ENV{MD_UUID}, which udev sets in '
                '63-md-raid-arrays.rules - rules_file must sort after it (e.g. 64-*.rules)' % (entry['device'], kname))
    elif kind in ('nvme', 'nvme-of'):
        namespace = nvme_fabrics.namespace(kname)
        wwn = prop('ID_WWN') or namespace['wwid']
        if udev_value_ok(wwn):
            return 'KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="%s"' % wwn, None
        serial = prop('ID_SERIAL')
        if udev_value_ok(serial):
            match = 'KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_SERIAL}=="%s"' % serial
            if namespace['nsid'] is not None:
                match += ', ATTR{nsid}=="%d"' % namespace['nsid']
            return match, None
    elif kind == 'dm':
        uuid = prop('DM_UUID') or sysfs.read_attr('/sys/block/%s/dm/uuid' % kname)
        if udev_value_ok(uuid):
            return 'KERNEL=="dm-*", ENV{DM_UUID}=="%s"' % uuid, None
        name = prop('DM_NAME') or sysfs.read_attr('/sys/block/%s/dm/name' % kname)
        if udev_value_ok(name):
            return 'KERNEL=="dm-*", ENV{DM_NAME}=="%s"' % name, None
    else:
        for key in ('ID_WWN', 'ID_SERIAL'):
            if udev_value_ok(prop(key)):
                return 'ENV{DEVTYPE}=="disk", ENV{%s}=="%s"' % (key, prop(key)), None
    return 'KERNEL=="%s"' % kname, (
        '%s (%s): no stable udev property (UUID, WWN, serial) found; the persistent rule matches the kernel name, '
        'which may change across reboots' % (entry['device'], kname))


def rule_line(match, value):
    return 'ACTION=="add|change", SUBSYSTEM=="block", %s, ATTR{queue/read_ahead_kb}="%d"' % (match, value)


def parse_rules(text):
    """Split a rules file into (ordered list of [match, value, comment]) and foreign lines."""
    entries = []
    foreign = []
    comment = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith('#'):
            if stripped.startswith('# device:'):
                comment = stripped
            continue
        found = _RULE_RE.match(stripped)
        if found and found.group('match').startswith('ACTION=="add|change", SUBSYSTEM=="block", '):
            match = found.group('match')[len('ACTION=="add|change", SUBSYSTEM=="block", '):]
            entries.append([match, int(found.group('value')), comment])
        else:
            foreign.append(line)
        comment = None
    return entries, foreign


def render_rules(entries, foreign):
    if not entries and not foreign:
        return None
    lines = [RULES_HEADER.rstrip('\n')]
    for match, value, comment in entries:
        if comment:
            lines.append(comment)
        lines.append(rule_line(match, value))
    lines.extend(foreign)
    return '\n'.join(lines) + '\n'


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type='list', elements='dict', required=True, options=dict(
                device=dict(type='str', required=True),
                read_ahead_kb=dict(type='raw'),
                read_ahead_sectors=dict(type='raw'),
            ), mutually_exclusive=[['read_ahead_kb', 'read_ahead_sectors']]),
            read_ahead_kb=dict(type='raw'),
            read_ahead_sectors=dict(type='raw'),
            allow_decrease=dict(type='bool', default=False),
            persistent=dict(type='str', default='ignore', choices=['present', 'absent', 'ignore']),
            rules_file=dict(type='path', default='/etc/udev/rules.d/61-inferops-readahead.rules'),
        ),
        mutually_exclusive=[['read_ahead_kb', 'read_ahead_sectors']],
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    params = module.params
    result = dict(changed=False, devices=[], rules_file=params['rules_file'], rules_changed=False, udev_reload_needed=False,
                  command_log=runner.log)

    # ---- validate everything before touching anything
    plan = []
    try:
        top_kb = parse_value(params['read_ahead_kb'], 'read_ahead_kb')
        top_sectors = parse_value(params['read_ahead_sectors'], 'read_ahead_sectors')
        top = None
        if top_kb is not None or top_sectors is not None:
            top = to_kb(top_kb, top_sectors, '')
        if not params['devices']:
            raise ReadaheadError('devices must name at least one device')
        seen = {}
        for index, item in enumerate(params['devices']):
            prefix = 'devices[%d].' % index
            try:
                resolved = blockdev.resolve_device(item['device'])
            except blockdev.BlockDevError as exc:
                raise ReadaheadError('%sdevice=%r: %s' % (prefix, item['device'], exc))
            kname = resolved['kname']
            kind = blockdev.device_kind(kname)
            if kind['partition']:
                raise ReadaheadError('%sdevice=%r resolves to partition %s; read-ahead belongs to the whole device' % (
                    prefix, item['device'], kname))
            attr = '/sys/block/%s/queue/read_ahead_kb' % kname
            if not sysfs.exists(attr):
                raise ReadaheadError('%sdevice=%r (%s) has no %s' % (prefix, item['device'], kname, attr))
            kb = parse_value(item.get('read_ahead_kb'), prefix + 'read_ahead_kb')
            sectors = parse_value(item.get('read_ahead_sectors'), prefix + 'read_ahead_sectors')
            note = None
            if kb is not None or sectors is not None:
                requested, source = to_kb(kb, sectors, prefix), 'device'
            elif top is not None:
                requested, source = top, 'top-level'
            elif kind['kind'] == 'md':
                width, note = blockdev.md_stripe_width_kb(kname)
                if width is None:
                    raise ReadaheadError('%sdevice=%r: no read_ahead_kb given and no md default: %s' % (prefix, item['device'], note))
                requested, source = blockdev.md_default_read_ahead_kb(width), 'md_stripe'
                note = '%s; read-ahead = 2 x stripe = %d KiB' % (note, requested)
            else:
                raise ReadaheadError('%sdevice=%r: no read_ahead_kb or read_ahead_sectors given (per device or top-level); '
                                     'only md arrays have a default' % (prefix, item['device']))
            if kname in seen:
                other = seen[kname]
                if other['requested_kb'] != requested:
                    raise ReadaheadError('%sdevice=%r is %s, already requested as %r with %d KiB; got %d KiB' % (
                        prefix, item['device'], kname, other['device'], other['requested_kb'], requested))
                continue
            before = sysfs.read_int(attr)
            if before is None:
                raise ReadaheadError('%sdevice=%r: cannot read %s' % (prefix, item['device'], attr))
            entry = dict(device=item['device'], kname=kname, path=resolved['device'], kind=kind['kind'],
                         transport=kind['transport'], requested_kb=requested, source=source, before=before,
                         after=before, status='unchanged', rule_match=None, note=note, attr=attr)
            if before == requested:
                pass
            elif before > requested and not params['allow_decrease']:
                entry['status'] = 'kept'
                kept = 'kept larger current value %d KiB (requested %d KiB; allow_decrease=false)' % (before, requested)
                entry['note'] = '%s; %s' % (note, kept) if note else kept
            else:
                entry['after'] = requested
                entry['status'] = 'changed'
            seen[kname] = entry
            plan.append(entry)
    except ReadaheadError as exc:
        module.fail_json(msg=to_native(exc), **result)

    # ---- rules file (computed before any write so a failure changes nothing)
    rules_before = rules_after = None
    if params['persistent'] != 'ignore':
        path = params['rules_file']
        rules_before = textfile.read_text(path)
        entries, foreign = parse_rules(rules_before or '')
        by_match = dict((e[0], e) for e in entries)
        for entry in plan:
            match, warning = rule_match(runner, entry)
            if warning and params['persistent'] == 'present':
                module.warn(warning)
            entry['rule_match'] = match
            # No kernel name in the comment: md126/md127 and nvme0n1/nvme1n1 swap between boots,
            # and the file must only change when what udev does changes.
            comment = '# device: %s' % entry['device']
            if params['persistent'] == 'present':
                if match in by_match:
                    if by_match[match][1] != entry['after'] or not by_match[match][2]:
                        by_match[match][1:] = [entry['after'], comment]
                else:
                    new = [match, entry['after'], comment]
                    entries.append(new)
                    by_match[match] = new
            elif match in by_match:
                entries.remove(by_match.pop(match))
        rules_after = render_rules(entries, foreign)
        result['rules_changed'] = rules_after != rules_before

    # ---- apply
    result['changed'] = any(e['status'] == 'changed' for e in plan) or result['rules_changed']
    if not module.check_mode:
        for entry in plan:
            if entry['status'] != 'changed':
                continue
            try:
                sysfs.write_attr(entry['attr'], entry['requested_kb'])
            except sysfs.SysfsWriteError as exc:
                result['devices'] = [_public(e) for e in plan]
                module.fail_json(msg='%s (%s): %s' % (entry['device'], entry['kname'], to_native(exc)), **result)
            readback = sysfs.read_int(entry['attr'])
            entry['after'] = readback
            if readback != entry['requested_kb']:
                result['devices'] = [_public(e) for e in plan]
                module.fail_json(msg='%s (%s): wrote read_ahead_kb=%d but the kernel reports %r' % (
                    entry['device'], entry['kname'], entry['requested_kb'], readback), **result)
        if result['rules_changed']:
            if rules_after is None:
                os.unlink(params['rules_file'])
            else:
                textfile.write_text_atomic(module, params['rules_file'], rules_after, prefix='.inferops-readahead.')
    result['udev_reload_needed'] = result['rules_changed']
    result['devices'] = [_public(e) for e in plan]

    if module._diff:
        result['diff'] = [dict(
            before_header='read_ahead_kb (KiB)',
            after_header='read_ahead_kb (KiB)',
            before=''.join('%s (%s): %d\n' % (e['device'], e['kname'], e['before']) for e in plan),
            after=''.join('%s (%s): %d\n' % (e['device'], e['kname'], e['after']) for e in plan),
        )]
        if params['persistent'] != 'ignore':
            result['diff'].append(dict(before_header=params['rules_file'], after_header=params['rules_file'],
                                       before=rules_before or '', after=rules_after or ''))
    module.exit_json(**result)


def _public(entry):
    return dict((k, v) for k, v in entry.items() if k not in ('attr', 'path'))


if __name__ == '__main__':
    main()
