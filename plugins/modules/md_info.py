#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: md_info
short_description: Read Linux md arrays, their member drives, signatures and mounts
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads every md array of the host (name, C(/dev/md/<name>), kernel name, UUID, level, chunk, state,
    degraded/failed/spare counts, sync action and progress, members with their role, by-id path, serial,
    model and size, the filesystem on the array and where it is mounted).
  - For requested arrays (O(arrays)) it also reads each requested member drive - what is on it (filesystem,
    partition table, md superblock, from C(blkid -p) and C(wipefs --no-act --json)), whether it is mounted or
    held by another device - and classifies it as free, ours (a member of the requested array), data (it
    carries something that creating the array would destroy), busy (mounted or held), missing or invalid.
  - Also returns the mounts (C(findmnt)), the C(/etc/fstab) entries, the state of the systemd units
    O(units), whether C(systemd-analyze calendar) accepts each of O(calendars), the resync speed limits,
    Debian's C(AUTOCHECK) setting and the age of the initramfs against O(mdadm_conf) - what the role
    P(inferops.node.md_raid_xfs#role) decides its changes from.
  - Never changes anything; it waits for pending udev events first (C(udevadm settle)) so that an array
    just assembled or changed is read with its C(/dev/md/<name>) link and signatures.
options:
  arrays:
    description:
      - The arrays the caller wants, to report even when they do not exist yet and to classify their
        requested members.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Array name (C(/dev/md/<name>)).
        type: str
        required: true
      devices:
        description: Requested member devices (stable paths such as C(/dev/disk/by-id/...)).
        type: list
        elements: str
        default: []
      mount:
        description: Requested mount point (reported with the array).
        type: str
  units:
    description: systemd units whose enablement and activity are returned in RV(units).
    type: list
    elements: str
    default: []
  calendars:
    description: systemd calendar expressions to check with C(systemd-analyze calendar) (RV(calendars)).
    type: list
    elements: str
    default: []
  mdadm_conf:
    description: mdadm configuration file compared with the initramfs in RV(initramfs).
    type: path
    default: /etc/mdadm/mdadm.conf
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux with mdadm, util-linux (blkid, wipefs, findmnt), udev and systemd.
    support: full
    platforms: posix
requirements:
  - mdadm
  - util-linux (blkid, wipefs, findmnt)
'''

EXAMPLES = r'''
- name: Read every md array of the host
  inferops.node.md_info:
  register: md

- name: Show each array's state
  ansible.builtin.debug:
    msg: "{{ md.arrays | dict2items | map(attribute='value') | map(attribute='summary') | list }}"

- name: Read the arrays a site wants, with their members' signatures
  inferops.node.md_info:
    arrays:
      - name: models
        devices:
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1
        mount: /data/models
  register: md

- name: Refuse members that carry data
  ansible.builtin.assert:
    that: md.members | dict2items | selectattr('value.usage', 'eq', 'data') | list == []
'''

RETURN = r'''
arrays:
  description: >-
    Every md array of the host and every requested array, by name (the C(/dev/md/<name>) link; the kernel name
    when an array has no link). A requested array that does not exist has C(exists=false).
  returned: always
  type: dict
  sample:
    models: {name: models, device: /dev/md/models, exists: true, kname: md127, level: raid0, chunk_kb: 512,
             status: clean, degraded: 0, failed: 0, spare: 0, fstype: xfs, mounted_at: [/data/models]}
  contains:
    name:
      description: Array name.
      type: str
    device:
      description: 'C(/dev/md/<name>).'
      type: str
    exists:
      description: Whether the array runs (active or inactive).
      type: bool
    requested:
      description: Whether the array was named in O(arrays).
      type: bool
    mount:
      description: The requested mount point (O(arrays[].mount)) or null.
      type: str
    kname:
      description: Kernel name (C(md127)), null when the array does not exist.
      type: str
    uuid:
      description: Array UUID in mdadm notation.
      type: str
    md_name:
      description: Name in the superblock (C(<homehost>:<name>)).
      type: str
    level:
      description: Level as the kernel reports it (C(raid0)).
      type: str
    raid_disks:
      description: Number of RAID slots.
      type: int
    chunk_kb:
      description: Chunk size in KiB (null for RAID1).
      type: int
    layout:
      description: 'C(/sys/block/mdX/md/layout) (RAID10 copies encoded as mdadm does).'
      type: int
    metadata:
      description: Superblock version.
      type: str
    status:
      description: 'V(clean), V(degraded), V(resyncing), V(recovering), V(reshaping), V(checking), V(inactive).'
      type: str
    state:
      description: The C(State) words of C(mdadm --detail).
      type: list
      elements: str
    array_state:
      description: 'C(/sys/block/mdX/md/array_state).'
      type: str
    degraded:
      description: Missing devices (C(/sys/block/mdX/md/degraded); 0 for RAID0).
      type: int
    failed:
      description: Members marked faulty.
      type: int
    spare:
      description: Spare members.
      type: int
    sync_action:
      description: 'C(/sys/block/mdX/md/sync_action) (null for RAID0).'
      type: str
    sync_percent:
      description: Progress of a running resync/recovery/check in percent.
      type: float
    sync_speed:
      description: Speed from C(/proc/mdstat).
      type: str
    sync_finish:
      description: Estimated time left from C(/proc/mdstat).
      type: str
    bitmap:
      description: 'Write-intent bitmap - V(internal), V(none), V(file); null where the kernel shows none (RAID0).'
      type: str
    sync_speed_max_kb:
      description: 'The resync speed limit in force (C(/sys/block/mdX/md/sync_speed_max)), KiB/s.'
      type: int
    sync_speed_max_local:
      description: Whether that limit is the array's own (V(true)) or the system's C(dev.raid.speed_limit_max).
      type: bool
    members:
      description: Members with role (slot, V(spare), V(faulty)), state words, in_sync, by-id path, serial, model, size.
      type: list
      elements: dict
    size_bytes:
      description: Array size.
      type: int
    read_ahead_kb:
      description: 'C(/sys/block/mdX/queue/read_ahead_kb).'
      type: int
    blkid:
      description: 'C(blkid -p -o export) of the array (TYPE, UUID, PTTYPE, ...).'
      type: dict
    signatures:
      description: 'C(wipefs --no-act --json) signatures of the array.'
      type: list
      elements: dict
    fstype:
      description: Filesystem on the array (empty when none).
      type: str
    mounted_at:
      description: Where the array is mounted.
      type: list
      elements: str
    summary:
      description: One line for people.
      type: str
members:
  description: The requested member devices by the path given in O(arrays[].devices).
  returned: always
  type: dict
  sample:
    /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0:
      {array: models, exists: true, device: /dev/nvme0n1, kname: nvme0n1, usage: ours, detail: member of md array models,
       serial: LABMODEL0, model: QEMU NVMe Ctrl, size_bytes: 1073741824, role: '0'}
  contains:
    array:
      description: The requested array that lists the device.
      type: str
    exists:
      description: Whether the path exists.
      type: bool
    device:
      description: The device node the path resolves to.
      type: str
    kname:
      description: Kernel name.
      type: str
    whole:
      description: Whether it is a whole block device (not a partition).
      type: bool
    usage:
      description: >-
        V(free) (nothing found), V(ours) (a member of the requested array, or its superblock names it),
        V(data) (filesystem, partition table or another array's superblock), V(busy) (mounted or held by
        another device), V(missing), V(invalid) (not a block device, or a partition).
      type: str
    detail:
      description: What was found, in words (used in the role's messages).
      type: str
    role:
      description: Role in the array that holds it (slot, V(spare), V(faulty)), null when in none.
      type: str
    holders:
      description: Kernel names holding the device.
      type: list
      elements: str
    blkid:
      description: 'C(blkid -p -o export) tags.'
      type: dict
    signatures:
      description: 'C(wipefs --no-act --json) signatures.'
      type: list
      elements: dict
    by_id:
      description: The preferred C(/dev/disk/by-id) path.
      type: str
    serial:
      description: Serial number.
      type: str
    model:
      description: Model.
      type: str
    firmware:
      description: Firmware revision.
      type: str
    size_bytes:
      description: Size.
      type: int
mounts:
  description: Mount point -> top mount (C(findmnt -J -l -o TARGET,SOURCE,FSTYPE,OPTIONS)).
  returned: always
  type: dict
  sample: {/data/models: {source: /dev/md127, fstype: xfs, options: [rw, noatime, attr2, inode64]}}
filesystems:
  description:
    - Mount point of each requested array (O(arrays[].mount)) that has a filesystem mounted there -> its
      size and free space (C(findmnt -J -b -o TARGET,SIZE,AVAIL,USED --mountpoint <mount>)) and, for XFS,
      its geometry (C(xfs_info <mount>)). A mount point with no md array mounted there is left out.
  returned: always
  type: dict
  version_added: 0.2.0
  sample:
    /data/models:
      fstype: xfs
      size_bytes: 4286578688
      avail_bytes: 4253843456
      used_bytes: 32735232
      xfs:
        block_size: 4096
        sunit_bytes: 524288
        swidth_bytes: 2097152
        ftype: 1
        crc: 1
        reflink: 1
        agcount: 8
  contains:
    fstype:
      description: The mounted filesystem's type.
      type: str
    size_bytes:
      description: Size of the filesystem.
      type: int
    avail_bytes:
      description: Space available to unprivileged users.
      type: int
    used_bytes:
      description: Space used.
      type: int
    xfs:
      description:
        - XFS only (null otherwise, or when C(xfs_info) failed - the module warns); see M(inferops.node.md_info)'s
          module_utils C(xfs.geometry). Stripe unit and width in bytes, 0 without a stripe; C(ftype) 1 when
          directory entries carry the file type (what overlayfs and fast directory scans need).
      type: dict
fstab:
  description: Mount point -> the six fields of its C(/etc/fstab) line.
  returned: always
  type: dict
units:
  description: Unit -> C({enabled, active, load}) (C(enabled) is the UnitFileState, V(not-found) when unknown).
  returned: always
  type: dict
calendars:
  description: Calendar expression -> whether C(systemd-analyze calendar) accepts it.
  returned: always
  type: dict
autocheck:
  description: Value of C(AUTOCHECK) in C(/etc/default/mdadm), null when unset.
  returned: always
  type: str
bins:
  description: Path of mdadm, mkfs.xfs, xfs_info, wipefs and update-initramfs (null when missing).
  returned: always
  type: dict
mdcheck:
  description: Whether C(/usr/share/mdadm/mdcheck) exists.
  returned: always
  type: bool
initramfs:
  description: C({conf, conf_mtime, initrd, initrd_mtime}) for the running kernel.
  returned: always
  type: dict
conf_arrays:
  description:
    - The C(ARRAY) statements of O(mdadm_conf), C({device, uuid, name}) each (null for a field the line lacks);
      empty when it has none or cannot be read. The boot assembles the arrays by them (the audit's
      C(storage.md_conf)).
  returned: always
  type: list
  elements: dict
  version_added: 0.2.0
  sample: [{device: /dev/md/models, uuid: "ae809e5b:1362128b:161f63bf:74fd1500", name: "node1:models"}]
sysctl:
  description: C(dev.raid.speed_limit_min) and C(dev.raid.speed_limit_max) (null without md_mod).
  returned: always
  type: dict
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
  sample: [{argv: [/usr/bin/udevadm, settle, "--timeout=60"], rc: 0, ran: true}]
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage import findmnt
from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.storage import md
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.systemd_units import read_units
from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.storage import xfs
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner

BINS = ('mdadm', 'mkfs.xfs', 'xfs_info', 'wipefs', 'update-initramfs')


def read_mounts(runner):
    """Mount point -> top mount; kernel name -> mount points of each /dev source."""
    entries = findmnt.mount_entries(runner, 'md_info')
    mounts, by_kname = {}, {}
    for entry in entries:
        source = (entry.get('source') or '').split('[', 1)[0]  # bind mounts: /dev/x[/subdir]
        # findmnt lists stacked mounts in mount order: the last one on a point is the one seen.
        mounts[entry['target']] = {'source': source, 'fstype': entry.get('fstype') or '',
                                   'options': (entry.get('options') or '').split(',')}
        if source.startswith('/dev/') and sysfs.exists(source):
            points = by_kname.setdefault(os.path.basename(sysfs.realpath(source)), [])
            if entry['target'] not in points:
                points.append(entry['target'])
    return mounts, by_kname


def read_filesystems(runner, specs, mounts, by_kname):
    """Size, free space and XFS geometry of the md array mounted on each requested array's mount point.

    Another device mounted there (the root filesystem requested as a mount point by mistake) is the
    preflight's refusal, not a filesystem of the arrays: it is not read."""
    md_points = set(point for kname, points in by_kname.items() if kname.startswith('md') for point in points)
    result = {}
    for spec in specs:
        path = spec.get('mount')
        top = mounts.get(path) if path in md_points else None
        if not top or path in result:
            continue
        rc, out, err = runner.run(xfs.space_argv(path))
        if rc != 0:
            runner.module.fail_json(msg='md_info: %s failed (rc %d): %s' % (' '.join(xfs.space_argv(path)), rc, err.strip()),
                                    command_log=runner.log)
        entry = dict(xfs.parse_space(out), fstype=top['fstype'], xfs=None)
        if top['fstype'] == 'xfs':
            rc, out, err = runner.run(xfs.xfs_info_argv(path))
            if rc == 0:
                entry['xfs'] = xfs.geometry(xfs.parse_xfs_info(out))
            else:
                runner.module.warn('md_info: xfs_info %s failed (rc %d): %s' % (path, rc, err.strip()))
        result[path] = entry
    return result


def read_fstab():
    fstab = {}
    for line in (sysfs.read_attr('/etc/fstab') or '').splitlines():
        fields = line.split()
        if len(fields) >= 4 and not fields[0].startswith('#'):
            fstab[findmnt.unescape(fields[1])] = (fields + ['0', '0'])[:6]
    return fstab


def signatures(runner, device):
    """(blkid tags, wipefs signatures) of a device; a tool that fails gives nothing rather than failing the read."""
    try:
        tags = blockdev.blkid_probe(runner, device)
    except blockdev.BlockDevError as exc:
        runner.module.warn(str(exc))
        tags = {}
    try:
        sigs = blockdev.wipefs_probe(runner, device)
    except blockdev.BlockDevError as exc:
        runner.module.warn(str(exc))
        sigs = []
    return tags, sigs


def read_arrays(runner, requested, by_kname):
    """Every array of the host and every requested one, by name."""
    names = md.array_names()
    requested_by_name = dict((spec['name'], spec) for spec in requested)
    arrays = {}
    for kname in md.running_arrays():
        name = names.get(kname)
        if name is None:
            export = md.detail_export(runner, '/dev/%s' % kname)
            name = export.get('MD_DEVNAME') or kname
        arrays[name] = kname
    result = {}
    for name in list(arrays) + [n for n in requested_by_name if n not in arrays]:
        spec = requested_by_name.get(name) or {}
        entry = {'name': name, 'device': '/dev/md/%s' % name, 'exists': name in arrays, 'requested': bool(spec),
                 'mount': spec.get('mount'), 'kname': None, 'blkid': {}, 'signatures': [], 'fstype': '',
                 'mounted_at': [], 'members': [], 'status': 'absent'}
        kname = arrays.get(name)
        if kname:
            entry.update(md.array_status(runner, kname, name))
            entry['exists'] = True
            for member in entry['members']:
                member.update(blockdev.drive_identity(member['kname']))
            entry['failed'] = len([m for m in entry['members'] if m['role'] == 'faulty'])
            entry['spare'] = len([m for m in entry['members'] if m['role'] == 'spare'])
            entry['layout'] = sysfs.read_int('/sys/block/%s/md/layout' % kname)
            entry['size_bytes'] = sysfs.block_size_bytes(kname)
            entry['read_ahead_kb'] = sysfs.read_int('/sys/block/%s/queue/read_ahead_kb' % kname)
            entry['blkid'], entry['signatures'] = signatures(runner, '/dev/%s' % kname)
            entry['fstype'] = entry['blkid'].get('TYPE', '')
            entry['mounted_at'] = by_kname.get(kname, [])
        entry['summary'] = summary(entry)
        result[name] = entry
    return result


def summary(entry):
    if not entry['exists']:
        return '%s: %s does not exist' % (entry['name'], entry['device'])
    text = '%s: %s (%s) %s %s' % (entry['name'], entry['device'], entry['kname'], entry['level'], entry['status'])
    counts = ['%s %d' % (key, entry[key]) for key in ('degraded', 'failed', 'spare') if entry.get(key)]
    if counts:
        text += ' (%s)' % ', '.join(counts)
    if entry.get('sync_percent') is not None:
        text += ' %s %s%%' % (entry['sync_action'], entry['sync_percent'])
    text += ', %s' % (entry['fstype'] or 'no filesystem')
    if entry['mounted_at']:
        text += ' mounted at %s' % ', '.join(entry['mounted_at'])
    return text


def classify(runner, spec, own, path, by_kname):
    """One requested member: what it is, what is on it, and whether the array may use it."""
    entry = {'path': path, 'array': spec['name'], 'exists': sysfs.exists(path), 'device': None, 'kname': None,
             'whole': False, 'usage': 'missing', 'detail': 'does not exist', 'role': None, 'holders': [],
             'blkid': {}, 'signatures': []}
    if not entry['exists']:
        return entry
    try:
        resolved = blockdev.resolve_device(path)
    except blockdev.BlockDevError:
        real = sysfs.realpath(path)
        entry.update(device=real, kname=os.path.basename(real), usage='invalid',
                     detail='is not a block device (%s)' % real)
        return entry
    real, kname = resolved['device'], resolved['kname']
    entry.update(device=real, kname=kname)
    if sysfs.exists('/sys/class/block/%s/partition' % kname):
        entry.update(usage='invalid', detail='is a partition (%s), not a whole device' % real)
        return entry
    entry['whole'] = True
    entry.update(blockdev.drive_identity(kname))
    held = blockdev.holders(kname)
    tags, sigs = signatures(runner, real)
    entry.update(holders=held, blkid=tags, signatures=sigs)
    for member in own.get('members') or []:
        if member['kname'] == kname:
            entry['role'] = member['role']
    points = by_kname.get(kname, [])
    md_label = (tags.get('LABEL') or '').split(':')[-1] if tags.get('TYPE') == 'linux_raid_member' else None
    if points:
        entry.update(usage='busy', detail='is mounted at %s' % ', '.join(points))
    elif held and not (own.get('kname') and held == [own['kname']]):
        entry.update(usage='busy', detail='is held by %s' % ', '.join(held))
    elif held or md_label == spec['name']:
        entry.update(usage='ours', detail='member of md array %s' % spec['name'])
    elif tags.get('TYPE') == 'linux_raid_member':
        entry.update(usage='data', detail='carries the md superblock of another array (%s, UUID %s)' % (
            tags.get('LABEL'), tags.get('UUID')))
    elif tags.get('TYPE') or tags.get('PTTYPE'):
        what = ('a filesystem (%s' % tags['TYPE']) if tags.get('TYPE') else ('a partition table (%s' % tags['PTTYPE'])
        extra = ''.join(', %s %s' % (k, tags[k]) for k in ('UUID', 'LABEL') if tags.get(k))
        entry.update(usage='data', detail='holds %s%s)' % (what, extra))
    elif sigs:
        entry.update(usage='data', detail='carries signatures (%s)' % ', '.join(
            '%s at %s' % (s.get('type'), s.get('offset')) for s in sigs))
    else:
        entry.update(usage='free', detail='free')
    return entry


def read_calendars(runner, calendars):
    result = {}
    for value in calendars:
        result[value] = bool(runner.find('systemd-analyze')) and runner.run(['systemd-analyze', 'calendar', value])[0] == 0
    return result


def read_autocheck():
    autocheck = None
    for line in (sysfs.read_attr('/etc/default/mdadm') or '').splitlines():
        match = re.match(r'^\s*AUTOCHECK=["\']?([^"\'\s]*)', line)
        if match:
            autocheck = match.group(1)
    return autocheck


def mtime(path):
    try:
        return os.stat(sysfs.host_path(path)).st_mtime
    except OSError:
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            arrays=dict(type='list', elements='dict', default=[], options=dict(
                name=dict(type='str', required=True),
                devices=dict(type='list', elements='str', default=[]),
                mount=dict(type='str'),
            )),
            units=dict(type='list', elements='str', default=[]),
            calendars=dict(type='list', elements='str', default=[]),
            mdadm_conf=dict(type='path', default='/etc/mdadm/mdadm.conf'),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    params = module.params
    # Right after an array changes (a member failed, an array assembled) udev rewrites /dev/md/<name>
    # and the blkid tags; a read racing it sees a running array as missing. Waiting changes nothing.
    if runner.find('udevadm'):
        runner.run(['udevadm', 'settle', '--timeout=60'])
    mounts, by_kname = read_mounts(runner)
    arrays = read_arrays(runner, params['arrays'], by_kname)
    members = {}
    for spec in params['arrays']:
        for path in spec['devices']:
            if path not in members:
                members[path] = classify(runner, spec, arrays[spec['name']], path, by_kname)
    release = sysfs.kernel_release() or ''
    initrd = '/boot/initrd.img-%s' % release
    module.exit_json(
        changed=False, arrays=arrays, members=members, mounts=mounts,
        filesystems=read_filesystems(runner, params['arrays'], mounts, by_kname), fstab=read_fstab(),
        units=read_units(runner, params['units'], 'md_info'),
        calendars=read_calendars(runner, params['calendars']), autocheck=read_autocheck(),
        bins=dict((name, module.get_bin_path(name)) for name in BINS),
        mdcheck=sysfs.exists('/usr/share/mdadm/mdcheck'),
        initramfs={'conf': params['mdadm_conf'], 'conf_mtime': mtime(params['mdadm_conf']), 'initrd': initrd,
                   'initrd_mtime': mtime(initrd)},
        conf_arrays=md.conf_arrays(textfile.read_text(sysfs.host_path(params['mdadm_conf']))),
        sysctl={'speed_limit_min': sysfs.read_int('/proc/sys/dev/raid/speed_limit_min'),
                'speed_limit_max': sysfs.read_int('/proc/sys/dev/raid/speed_limit_max')},
        command_log=runner.log,
    )


if __name__ == '__main__':
    main()
