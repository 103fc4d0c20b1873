#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: mdadm_array
short_description: Create, assemble and report Linux md RAID arrays, and record them in mdadm.conf
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Ensures an md array named O(name) exists as C(/dev/md/<name>) on the member devices O(devices),
    given by stable paths (C(/dev/disk/by-id/...)) that are resolved to kernel names and reported.
  - A running array is verified against the request (level, members, chunk size); a mismatch fails with
    both member lists and is never "fixed" by re-creating the array.
  - A stopped array (members carry its superblock) is assembled; an inactive, partially assembled
    array is stopped and assembled again from the requested members.
  - An array is created only when every member is free - no filesystem, partition table or md
    superblock (C(wipefs --no-act --json), C(blkid -p -o export), C(lsblk --json -O)), not mounted,
    not held by another array or dm device. Otherwise the module fails naming each member and what was
    found on it; O(force=true) wipes the signatures first, but a mounted or held member always fails.
  - Reports the array state (clean, degraded, resyncing or recovering with progress, missing members)
    from C(mdadm --detail --export), C(mdadm --detail), C(/proc/mdstat) and C(/sys/block/mdX/md/).
  - Writes the array's C(ARRAY) line (by UUID, with name) into O(mdadm_conf) as a managed entry; with
    O(update_initramfs=true) it refreshes the initramfs copy of that file (C(update-initramfs -u)), else it
    returns RV(initramfs_update_needed=true) when the file changed, for a handler.
  - Several arrays are handled in one call with O(arrays) (a list of the per-array options); they are
    processed in order and O(mdadm_conf) is read once and written once for all of them.
  - Every option (of every array) is validated before anything changes.
options:
  name:
    description:
      - Array name; the array device is C(/dev/md/<name>) and the name stored in the superblock is
        C(<homehost>:<name>).
      - Letters, digits, C(_), C(.) and C(-); at most 32 characters.
      - The single-array form; one of O(name) and O(arrays) is required. O(state), O(level), O(devices),
        O(chunk_kb), O(layout) and O(metadata) belong to it and cannot be combined with O(arrays).
    type: str
  state:
    description:
      - V(present) - the array exists and runs; it is created if no member carries its superblock,
        assembled if it is stopped.
      - V(assembled) - like V(present), but never creates; fails when no member carries the array.
      - V(absent) - stop the array, zero the md superblocks of its members and remove its C(ARRAY)
        line. Destroys the array, so it requires O(force=true).
    type: str
    choices: [present, assembled, absent]
    default: present
  level:
    description:
      - RAID level. V(0), V(1), V(10), V(5) and V(6) (a V(raid) prefix is accepted).
      - Required with O(state=present).
    type: str
  devices:
    description:
      - Member devices, preferably stable paths (C(/dev/disk/by-id/nvme-<model>_<serial>),
        C(/dev/disk/by-id/nvme-eui.<wwn>)). Order gives the RAID slots at creation.
      - Required with O(state=present) and O(state=assembled).
      - Minimum counts - RAID0 2, RAID1 2, RAID5 3, RAID6 4. RAID10 needs a multiple of the layout's
        copy count with at least that many members (default V(n2) - 2, 4, 6 ... members). md itself accepts
        odd RAID10 counts, but then mirrored chunks straddle disks; this collection refuses them.
    type: list
    elements: str
  chunk_kb:
    description:
      - Chunk size in KiB, a power of two of at least 4. mdadm's default (512) when omitted.
      - Not used by RAID1 (an error when given).
    type: int
  layout:
    description:
      - RAID10 layout, V(n2) (near, default), V(f2) (far), V(o2) (offset); the digit is the number of
        copies. For RAID5/6 an mdadm layout name such as V(left-symmetric).
    type: str
  metadata:
    description:
      - Superblock format, for example V(1.2) (mdadm's default), V(1.0), V(1.1) or V(0.90).
    type: str
  bitmap:
    description:
      - Write-intent bitmap of a RAID1/RAID10 array - V(internal) (after an unclean shutdown only the regions
        written just before it are resynced) or V(none). Given at creation, and set on a running array with
        C(mdadm --grow --bitmap=) when it differs; the kernel refuses that while the array resyncs or recovers,
        so the module then leaves it for a later run, with a warning. Default V(null) - mdadm's choice at
        creation (internal for arrays over 100 GB), not managed after.
      - Refused with RAID0 (no redundancy, nothing to resync).
    type: str
    choices: [internal, none]
  sync_speed_max:
    description:
      - The array's own resync speed limit, C(/sys/block/mdX/md/sync_speed_max) - KiB/s (a whole number as
        a string), or V(system) to follow C(dev.raid.speed_limit_max) again. Set on a running array when it
        differs, and on an array this call creates right after C(mdadm --create) (its first resync is held too).
        Default V(null) - leave it.
    type: str
  arrays:
    description:
      - Several arrays in one call, each a dict of the per-array options (the suboptions below mean the
        same as the top-level options of the same name). Mutually exclusive with O(name) and the other
        per-array top-level options.
      - Every entry is validated, and its members resolved, before any array is changed. Two entries
        with the same name, or one device (also via different paths) in two entries, fail.
      - 'Arrays are processed in list order. If one fails, the module fails naming it
        (C(arrays[<index>] (<name>): ...)); arrays processed before it keep their changes and their
        C(ARRAY) lines are still written, the ones after it are not touched.'
      - O(force), O(update_conf) and O(mdadm_conf) apply to every entry.
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - Array name, see O(name).
        type: str
        required: true
      state:
        description:
          - V(present), V(assembled) or V(absent), see O(state).
        type: str
        choices: [present, assembled, absent]
        default: present
      level:
        description:
          - RAID level, see O(level).
        type: str
      devices:
        description:
          - Member devices, see O(devices).
        type: list
        elements: str
      chunk_kb:
        description:
          - Chunk size in KiB, see O(chunk_kb).
        type: int
      layout:
        description:
          - Layout, see O(layout).
        type: str
      metadata:
        description:
          - Superblock format, see O(metadata).
        type: str
      bitmap:
        description:
          - Write-intent bitmap, see O(bitmap).
        type: str
        choices: [internal, none]
      sync_speed_max:
        description:
          - Resync speed limit, see O(sync_speed_max).
        type: str
  force:
    description:
      - Create the array even when members carry signatures (filesystem, partition table, an md
        superblock of another array); they are wiped with C(wipefs --all) first.
      - Required for O(state=absent).
      - Never overrides a mounted member or one held by another device.
    type: bool
    default: false
  update_conf:
    description:
      - Maintain the array's C(ARRAY) line in O(mdadm_conf).
    type: bool
    default: true
  mdadm_conf:
    description:
      - mdadm configuration file holding the C(ARRAY) lines.
      - 'The managed line is preceded by a C(# inferops.node mdadm_array: <name>) comment; other C(ARRAY) lines
        for the same UUID or device are replaced by it, everything else is kept.'
    type: path
    default: /etc/mdadm/mdadm.conf
  update_initramfs:
    description:
      - Run C(update-initramfs -u) when O(mdadm_conf) changed in this call or is newer than the initramfs of the
        running kernel (C(/boot/initrd.img-<release>); a refresh that failed or was left out before), so that the
        arrays assemble early under their names. Takes about a minute.
      - Not run when an array of the call failed.
    type: bool
    default: false
attributes:
  check_mode:
    description: Nothing is run that changes state; the planned commands are returned in RV(commands).
    support: full
  diff_mode:
    description: Shows each array (level, members, UUID) and O(mdadm_conf) before and after, one entry per array and one for O(mdadm_conf),
      and one for the initramfs when it is rebuilt (O(update_initramfs)).
    support: full
  platform:
    description: Linux with mdadm, wipefs, blkid and lsblk.
    support: full
    platforms: posix
notes:
  - Creating a RAID1/10/5/6 array starts a resync; the module returns at once with
    RV(array.status=resyncing) and RV(array.sync_percent).
  - A degraded array is reported (RV(array.missing_members)) but members are not re-added automatically.
requirements:
  - mdadm
  - util-linux (wipefs, blkid, lsblk)
'''

EXAMPLES = r'''
- name: One array - a RAID1 scratch mirror, members by WWN
  inferops.node.mdadm_array:
    name: scratch
    level: 1
    devices: [/dev/disk/by-id/nvme-eui.0025388b91c0a1f2, /dev/disk/by-id/nvme-eui.0025388b91c0a1f3]
  register: scratch_md
  notify: Update initramfs

- name: Both arrays of the local-NVMe seed in one call (one mdadm.conf write)
  inferops.node.mdadm_array:
    arrays:
      - name: models
        level: 0
        chunk_kb: 512
        devices:
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL2
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL3
      - name: index
        level: 10
        devices:
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0
          - /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX1
    update_initramfs: true
  register: seed_md

- name: Report every array of the call
  ansible.builtin.debug:
    msg: "{{ seed_md.arrays | map(attribute='array') | map(attribute='status') | list }}"

- name: Fail the play on a degraded array
  ansible.builtin.assert:
    that: scratch_md.array.status != 'degraded'
    fail_msg: "md {{ scratch_md.array.device }} is degraded, missing {{ scratch_md.array.missing_members }}"

- name: Tear down (lab only)
  inferops.node.mdadm_array:
    name: index
    state: absent
    force: true
'''

RETURN = r'''
arrays:
  description: >-
    One result per requested array, in request order (a single element with O(name)). When the module fails, the
    arrays processed so far, the last one with RV(arrays[].failed=true) and its RV(arrays[].msg).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The array name.
      type: str
      sample: models
    changed:
      description: Whether this array or its C(ARRAY) line changed (or would change in check mode).
      type: bool
    array:
      description: The array after the call, as RV(array).
      type: dict
    members:
      description: The requested members as resolved, as RV(members).
      type: list
      elements: dict
      returned: when the entry has devices and its state is not V(absent)
    actions:
      description: What was done for this array, as RV(actions).
      type: list
      elements: str
    commands:
      description: The commands run for this array, as RV(commands).
      type: list
      elements: list
    conf_line:
      description: The managed ARRAY line of this array, as RV(conf_line).
      type: str
    conf_changed:
      description: Whether this array's C(ARRAY) line in O(mdadm_conf) changed.
      type: bool
    failed:
      description: True for the array that made the module fail.
      type: bool
      returned: on failure
    msg:
      description: Why this array failed.
      type: str
      returned: on failure
array:
  description: >-
    The array after the call (in check mode, as planned; null for O(state=absent)). When the module fails because
    an existing array differs from the request, the existing array. Also the write-intent bitmap and the resync
    limit, as M(inferops.node.md_info) reports them (C(bitmap), C(sync_speed_max_kb), C(sync_speed_max_local)).
  returned: with O(name)
  type: dict
  contains:
    name:
      description: O(name).
      type: str
      sample: model
    device:
      description: C(/dev/md/<name>).
      type: str
      sample: /dev/md/model
    kname:
      description: Kernel name (null while not running).
      type: str
      sample: md127
    uuid:
      description: Array UUID in mdadm notation.
      type: str
      sample: ae809e5b:1362128b:161f63bf:74fd1500
    md_name:
      description: Name stored in the superblock (C(<homehost>:<name>)).
      type: str
      sample: node1:model
    level:
      description: Level as the kernel reports it.
      type: str
      sample: raid0
    raid_disks:
      description: Number of RAID slots.
      type: int
      sample: 4
    chunk_kb:
      description: Chunk size in KiB (null for RAID1).
      type: int
      sample: 512
    metadata:
      description: Superblock version.
      type: str
      sample: '1.2'
    status:
      description: >-
        V(clean), V(degraded), V(resyncing), V(recovering), V(reshaping), V(checking), V(inactive);
        V(absent) in check mode before creation.
      type: str
      sample: clean
    state:
      description: The C(State) words of C(mdadm --detail).
      type: list
      elements: str
      sample: [clean, degraded]
    array_state:
      description: C(/sys/block/mdX/md/array_state).
      type: str
      sample: clean
    degraded:
      description: Number of missing devices (C(/sys/block/mdX/md/degraded); 0 for RAID0, which has no such attribute).
      type: int
      sample: 0
    sync_action:
      description: C(/sys/block/mdX/md/sync_action) (V(idle), V(resync), V(recover), ...); null for RAID0.
      type: str
      sample: idle
    sync_percent:
      description: Progress of the running resync/recovery in percent, null when none runs.
      type: float
      sample: 12.6
    sync_speed:
      description: Speed from C(/proc/mdstat), for example V(312K/sec).
      type: str
    sync_finish:
      description: Estimated time left from C(/proc/mdstat), for example V(55.2min).
      type: str
    members:
      description: >-
        Member devices with their role (slot number, V(spare), V(faulty)), the C(mdadm --detail) state words
        (or the kernel's C(dev-*/state)), and whether the member is in sync.
      type: list
      elements: dict
      sample: [{device: /dev/nvme0n1, kname: nvme0n1, role: '0', state: [active, sync], in_sync: true}]
    missing_members:
      description: >-
        Requested members that are not active and in sync (removed, faulty, still rebuilding, or all
        members of an inactive array).
      type: list
      elements: str
members:
  description: The requested members as resolved.
  returned: with O(name), when O(devices) is given and O(state) is not V(absent)
  type: list
  elements: dict
  sample: [{path: /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0, device: /dev/nvme0n1, kname: nvme0n1}]
actions:
  description: What was done (or would be done in check mode) - V(created), V(assembled), V(stopped), V(wiped),
    V(zeroed), V(bitmap), V(sync_speed_max), V(conf_updated). With O(arrays), the actions of all arrays (each
    once).
  returned: always
  type: list
  elements: str
commands:
  description: The commands run (or planned in check mode) that change state, with O(arrays) those of all arrays in order.
  returned: always
  type: list
  elements: list
conf_line:
  description: The managed ARRAY line (null when O(update_conf=false) or O(state=absent)).
  returned: with O(name)
  type: str
  sample: ARRAY /dev/md/model metadata=1.2 name=node1:model UUID=ae809e5b:1362128b:161f63bf:74fd1500
wiped:
  description: >-
    What O(force=true) wiped (or would wipe in check mode) - one line per signature found, naming the
    member by the given path and its kernel name. Each is also printed as a warning, so a forced run
    says what it destroyed without C(-v).
  returned: always
  type: list
  elements: str
  sample: ['/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL2 (/dev/nvme2n1): filesystem (ext4, label planted)']
conf_changed:
  description: Whether O(mdadm_conf) was (or would be) changed.
  returned: always
  type: bool
initramfs_update_needed:
  description: True when O(mdadm_conf) changed (for any array); the initramfs copy of mdadm.conf must be refreshed.
  returned: always
  type: bool
initramfs_updated:
  description: Whether C(update-initramfs -u) ran (in check mode, would run); see O(update_initramfs).
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
  sample: [{argv: [/usr/sbin/mdadm, --detail, --export, /dev/md127], rc: 0, ran: true}]
'''

import copy
import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan
from ansible_collections.inferops.node.plugins.module_utils.storage.md import (
    array_statements, array_status, examine_export, find_running, name_matches,
)
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common import textfile

LEVELS = ('0', '1', '10', '5', '6')
MARKER = '# inferops.node mdadm_array: %s'
_METADATA_RE = re.compile(r'^(0\.90|1|1\.[012]|default|ddf|imsm)$')
PLANNED_UUID = '<assigned at creation>'


class MdError(Exception):
    pass


# ---------------------------------------------------------------- validation

def validate(params):
    """Check the request; return (level, copies). Raise MdError naming the option and value.

    The rules (name, chunk, layout, member counts) are those of module_utils/storage/md_raid_plan.py, which the
    role md_raid_xfs checks on the controller before it calls this module.
    """
    name = params['name']
    problem = md_raid_plan.name_problem(name)
    if problem:
        raise MdError('name=%r: %s' % (name, problem))
    state = params['state']
    if state == 'absent':
        if not params['force']:
            raise MdError('state=absent destroys array %r (stop + zero superblocks); it requires force=true' % name)
        return None, None
    if not params['devices']:
        raise MdError('devices is required with state=%s' % state)
    level = None
    if params['level'] is not None:
        level = blockdev.md_level_number(params['level'])
        if level not in LEVELS:
            raise MdError('level=%r is not a supported RAID level (%s)' % (params['level'], ', '.join(LEVELS)))
    elif state == 'present':
        raise MdError('level is required with state=present')
    chunk = params['chunk_kb']
    if chunk is not None:
        problem = md_raid_plan.chunk_problem(chunk, level)
        if problem:
            raise MdError('chunk_kb=%r: %s' % (chunk, problem))
    if params['metadata'] is not None and not _METADATA_RE.match(params['metadata']):
        raise MdError('metadata=%r is not an md superblock format (1.2, 1.1, 1.0, 0.90)' % (params['metadata'],))
    layout = params['layout']
    problem = md_raid_plan.layout_problem(level, layout)
    if problem:
        raise MdError('layout=%r: %s' % (layout, problem))
    problem = md_raid_plan.member_count_problem(level, len(params['devices']), layout)
    if problem:
        raise MdError('devices: %s: %s' % (problem, ', '.join(params['devices'])))
    problem = md_raid_plan.bitmap_problem(level, params['bitmap'])
    if problem:
        raise MdError('bitmap=%r: %s' % (params['bitmap'], problem))
    problem = md_raid_plan.sync_speed_problem(params['sync_speed_max'])
    if problem:
        raise MdError('sync_speed_max=%r: %s' % (params['sync_speed_max'], problem))
    return level, (md_raid_plan.layout_copies(layout) if level == '10' else None)


def resolve_members(paths):
    """Resolve every member; fail on non-block devices and duplicates (also via different paths)."""
    members = []
    by_kname = {}
    for index, path in enumerate(paths):
        try:
            resolved = blockdev.resolve_device(path)
        except blockdev.BlockDevError as exc:
            raise MdError('devices[%d]=%r: %s' % (index, path, exc))
        if resolved['kname'] in by_kname:
            raise MdError('devices[%d]=%r is %s, the same device as %r (duplicate member)' % (
                index, path, resolved['device'], by_kname[resolved['kname']]))
        by_kname[resolved['kname']] = path
        members.append(resolved)
    return members


# ---------------------------------------------------------------- discovery

def compare(array, level, params, members):
    """Fail when the running array differs from the request (never re-create)."""
    problems = md_raid_plan.array_differences(array, level, params['chunk_kb'], [m['kname'] for m in members])
    if problems:
        raise MdError('array %s (%s) exists and differs from the request: %s. Current members: [%s]; requested: [%s]. '
                      'It is not re-created; fix the request or the array by hand.' % (
                          array['device'], array['kname'], '; '.join(problems),
                          ', '.join('%s (role %s)' % (m['device'], m['role']) for m in array['members']),
                          ', '.join('%s (%s)' % (m['path'], m['device']) for m in members)))


def examine_members(cmd, name, members):
    """Superblocks on the requested members: (ours, foreign) lists of (member, export)."""
    ours, foreign = [], []
    for member in members:
        export = examine_export(cmd, member['device'])
        if not export.get('MD_UUID'):
            continue
        if name_matches(export.get('MD_NAME'), name):
            ours.append((member, export))
        else:
            foreign.append((member, export))
    return ours, foreign


# ---------------------------------------------------------------- mdadm.conf

def conf_line_for(array):
    parts = ['ARRAY', array['device']]
    if array.get('metadata'):
        parts.append('metadata=%s' % array['metadata'])
    if array.get('md_name'):
        parts.append('name=%s' % array['md_name'])
    parts.append('UUID=%s' % array['uuid'])
    return ' '.join(parts)


def update_conf_text(text, name, device, uuid, new_line):
    """Return the new mdadm.conf content: managed block for ``name`` set to ``new_line`` (None removes it).

    ARRAY statements for the same UUID or the same device are dropped (they would duplicate the
    managed line); the marker comment is written just before the managed line.
    """
    lines = (text or '').splitlines()
    marker = MARKER % name
    drop = set()
    insert_at = None
    for start, end, words in array_statements(lines):
        dev = words[1] if len(words) > 1 else ''
        found_uuid = None
        for word in words:
            if word.upper().startswith('UUID='):
                found_uuid = word.split('=', 1)[1]
        same_uuid = uuid is not None and found_uuid is not None and found_uuid.lower() == uuid.lower()
        same_dev = dev == device or dev == device.replace('/dev/md/', '')
        managed = start > 0 and lines[start - 1].strip() == marker
        if same_uuid or same_dev or managed:
            drop.update(range(start, end))
            if managed:
                drop.add(start - 1)
                if insert_at is None:
                    insert_at = start - 1
            elif insert_at is None:
                insert_at = start
    for idx, line in enumerate(lines):
        if line.strip() == marker:
            drop.add(idx)
    kept = []
    new_insert = None
    for idx, line in enumerate(lines):
        if idx == insert_at:
            new_insert = len(kept)
        if idx not in drop:
            kept.append(line)
    if new_line is not None:
        block = [marker, new_line]
        if new_insert is None:
            while kept and not kept[-1].strip():
                kept.pop()
            if kept:
                kept.append('')
            kept.extend(block)
        else:
            kept[new_insert:new_insert] = block
    while kept and not kept[-1].strip():
        kept.pop()
    return '\n'.join(kept) + '\n' if kept else ''


# ---------------------------------------------------------------- main

class Runner(object):
    """One array's state-changing commands, run through the module's CommandRunner ``cmd`` (which only
    records them in check mode), with the actions they stand for."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.commands = []
        self.actions = []
        self.found = None
        self.wiped = []

    def __call__(self, action, args, data=None):
        if action and action not in self.actions:
            self.actions.append(action)
        rc, out, err = self.cmd.run(args, changes=True, data=data)
        self.commands.append(self.cmd.log[-1]['argv'])
        if rc != 0:
            raise MdError('%s failed (rc=%d): %s' % (' '.join(args), rc, (err or out).strip()))
        return rc, out, err

    def settle(self):
        if self.cmd.find('udevadm'):
            self.cmd.run(['udevadm', 'settle', '--timeout=30'], changes=True)


def ensure_present(module, params, level, members, runner):
    name = params['name']
    target = '/dev/md/%s' % name
    knames = [m['kname'] for m in members]
    before = None
    kname = find_running(runner.cmd, name, knames)
    if kname:
        array = array_status(runner.cmd, kname, name, members)
        before = array
        runner.found = array
        if array['status'] != 'inactive':
            compare(array, level, params, members)
            return before, (None if tune(module, params, array, runner) else array)
        # Partially assembled: stop and assemble again from the requested members.
        runner('stopped', ['mdadm', '--stop', '/dev/%s' % kname])
    ours, foreign = examine_members(runner.cmd, name, members)
    if ours:
        uuids = sorted(set(export['MD_UUID'] for dummy, export in ours))
        if len(uuids) > 1:
            raise MdError('members carry superblocks of several arrays named %r: %s' % (
                name, '; '.join('%s: UUID %s' % (m['path'], e['MD_UUID']) for m, e in ours)))
        export = ours[0][1]
        expected = int(export.get('MD_DEVICES') or 0)
        exp_level = blockdev.md_level_number(export.get('MD_LEVEL') or '')
        problems = []
        if level is not None and exp_level != level:
            problems.append('level is %s, requested %s' % (export.get('MD_LEVEL'), level))
        if expected and expected != len(members):
            problems.append('it has %d RAID slots, requested %d members' % (expected, len(members)))
        if foreign:
            problems.append('requested members in other arrays: %s' % ', '.join(
                '%s (%s)' % (m['path'], e.get('MD_NAME') or e['MD_UUID']) for m, e in foreign))
        if problems:
            raise MdError('stopped array %r (UUID %s) differs from the request: %s. Its members: [%s]; requested: [%s]' % (
                name, uuids[0], '; '.join(problems), ', '.join(m['path'] for m, dummy in ours),
                ', '.join(m['path'] for m in members)))
        args = ['mdadm', '--assemble', target, '--uuid=%s' % uuids[0], '--run'] + [m['device'] for m, dummy in ours]
        runner('assembled', args)
        runner.settle()
        return before, None
    if params['state'] == 'assembled':
        raise MdError('array %r is not running and no member of [%s] carries its superblock; state=assembled never creates' % (
            name, ', '.join(m['path'] for m in members)))
    # ---- create: every member must be free
    problems = []
    found = []
    for member in members:
        try:
            findings = blockdev.probe_usage(runner.cmd, member['device'], member['kname'])
        except blockdev.BlockDevError as exc:
            raise MdError('%s (%s): %s' % (member['path'], member['device'], exc))
        for finding in findings:
            where = '%s (%s): %s' % (member['path'], member['device'], finding['detail'])
            if finding['in_use'] or not params['force']:
                problems.append(where)
            else:
                found.append(where)
    if problems:
        hint = '' if params['force'] else '; force=true wipes signatures (not mounts or holders)'
        raise MdError('cannot create array %r, members are not free: %s%s' % (name, '; '.join(problems), hint))
    if params['force']:
        runner('wiped', ['wipefs', '--all', '--force'] + [m['device'] for m in members])
        # Data destroyed on request must show in the normal output, not only with -v.
        runner.wiped.extend(found)
        for where in found:
            module.warn('force=true: %s the signatures of %s' % ('would wipe' if module.check_mode else 'wiped', where))
    args = ['mdadm', '--create', target, '--name=%s' % name, '--level=%s' % level, '--raid-devices=%d' % len(members)]
    if params['chunk_kb']:
        args.append('--chunk=%d' % params['chunk_kb'])
    if params['layout']:
        args.append('--layout=%s' % params['layout'])
    if params['metadata']:
        args.append('--metadata=%s' % params['metadata'])
    if params['bitmap']:
        args.append('--bitmap=%s' % params['bitmap'])
    args.append('--run')
    args.extend(m['device'] for m in members)
    # --run suppresses mdadm's questions; answer "no" to anything it would still ask.
    runner('created', args, data='n\n')
    runner.settle()
    # The new array's first resync is a resync like any other: held to the limit from the start (a later run
    # would otherwise set it, and a second run must change nothing).
    if params['sync_speed_max'] not in (None, 'system'):
        kname = None if module.check_mode else find_running(runner.cmd, name, knames)
        set_sync_speed(runner, kname or '<%s>' % target, params['sync_speed_max'])
    return before, None


def tune(module, params, array, runner):
    """Set the write-intent bitmap and the resync speed limit of a running array where they differ from the
    request (md_raid_plan.array_tuning decides); True when something was set (or would be, in check mode)."""
    todo = md_raid_plan.array_tuning(array, params['bitmap'], params['sync_speed_max'])
    device = '/dev/%s' % array['kname']
    if todo['bitmap_busy']:
        module.warn('%s (%s): the write-intent bitmap stays %s while the array is %s (the kernel refuses the change '
                    'then); a run after it ends sets bitmap=%s'
                    % (array['device'], array['kname'], array['bitmap'], array['status'], params['bitmap']))
    if todo['bitmap']:
        runner('bitmap', ['mdadm', '--grow', '--bitmap=%s' % todo['bitmap'], device])
    if todo['sync_speed_max']:
        set_sync_speed(runner, array['kname'], todo['sync_speed_max'])
    return bool(todo['bitmap'] or todo['sync_speed_max'])


def set_sync_speed(runner, kname, value):
    """Write an array's sync_speed_max. tee writes it: a command, so check mode records it like the others. No
    newline of our own: run_command adds one, and the kernel refuses "12000\n\n" (EINVAL, seen in the lab)."""
    runner('sync_speed_max', ['tee', '/sys/block/%s/md/sync_speed_max' % kname], data=value)


def ensure_absent(module, params, runner, members=None):
    name = params['name']
    if members is None:
        members = resolve_members(params['devices']) if params['devices'] else []
    kname = find_running(runner.cmd, name, [m['kname'] for m in members])
    before = None
    zero = [m['device'] for m in members]
    if kname:
        before = array_status(runner.cmd, kname, name, members or None)
        runner('stopped', ['mdadm', '--stop', '/dev/%s' % kname])
        for member in before['members']:
            if member['device'] not in zero:
                zero.append(member['device'])
    with_superblock = [dev for dev in zero if kname or examine_export(runner.cmd, dev).get('MD_UUID')]
    if with_superblock:
        runner('zeroed', ['mdadm', '--zero-superblock'] + with_superblock)
    return before


def describe(array):
    if not array:
        return ''
    lines = ['device: %s (%s)' % (array['device'], array.get('kname')),
             'uuid: %s' % array.get('uuid'), 'level: %s' % array.get('level'),
             'status: %s' % array.get('status')]
    for member in array.get('members') or []:
        lines.append('member: %s role %s' % (member['device'], member['role']))
    return '\n'.join(lines) + '\n'


ARRAY_KEYS = ('name', 'state', 'level', 'devices', 'chunk_kb', 'layout', 'metadata', 'bitmap', 'sync_speed_max')
SHARED_KEYS = ('force', 'update_conf', 'mdadm_conf')


def array_requests(params):
    """The requested arrays, each a full parameter dict; the single form (O(name)) is a one-element list."""
    shared = dict((key, params[key]) for key in SHARED_KEYS)
    entries = params['arrays'] if params['arrays'] is not None else [params]
    return [dict(shared, **dict((key, entry[key]) for key in ARRAY_KEYS)) for entry in entries]


def label(index, params, listed):
    """Error prefix naming the array in the list form (the single form keeps its messages)."""
    return 'arrays[%d] (%s): ' % (index, params['name']) if listed else ''


def validate_all(requests, listed):
    """Validate every request and resolve its members before anything changes: [(params, level, members)].

    Also refuses two entries with the same name and a device used by two entries.
    """
    plans = []
    names = {}
    owners = {}
    for index, params in enumerate(requests):
        prefix = label(index, params, listed)
        try:
            level, dummy = validate(params)
            members = resolve_members(params['devices']) if params['devices'] else []
        except MdError as exc:
            raise MdError(prefix + to_native(exc))
        if params['name'] in names:
            raise MdError('%sname %r is also used by arrays[%d]' % (prefix, params['name'], names[params['name']]))
        names[params['name']] = index
        for member in members:
            if member['kname'] in owners:
                other, other_name, other_path = owners[member['kname']]
                raise MdError('%sdevices: %s (%s) is also a member of arrays[%d] (%s) as %s; a device belongs to one array' % (
                    prefix, member['path'], member['device'], other, other_name, other_path))
            owners[member['kname']] = (index, params['name'], member['path'])
        plans.append((params, level, members))
    return plans


def apply_array(module, params, level, members, runner, entry):
    """Bring one validated array to its state, filling its result ``entry``; return (before, uuid for mdadm.conf)."""
    name = params['name']
    if params['state'] == 'absent':
        before = ensure_absent(module, params, runner, members)
        return before, before['uuid'] if before else None
    entry['members'] = [{'path': m['path'], 'device': m['device'], 'kname': m['kname']} for m in members]
    before, after = ensure_present(module, params, level, members, runner)
    if after is None:
        if module.check_mode:
            after = dict(before or {}, name=name, device='/dev/md/%s' % name, kname=None,
                         uuid=(before or {}).get('uuid') or PLANNED_UUID, level='raid%s' % level if level else None,
                         md_name=(before or {}).get('md_name'), metadata=params['metadata'] or '1.2',
                         status=(before or {}).get('status') or 'absent', members=[
                             {'device': m['device'], 'kname': m['kname'], 'role': str(i), 'state': []}
                             for i, m in enumerate(members)], missing_members=[])
            if 'created' not in runner.actions:
                ours, dummy = examine_members(runner.cmd, name, members)
                if ours:
                    after['uuid'] = ours[0][1]['MD_UUID']
                    after['md_name'] = ours[0][1].get('MD_NAME')
        else:
            kname = find_running(runner.cmd, name, [m['kname'] for m in members])
            if not kname:
                raise MdError('array %r not found after %s' % (name, ', '.join(runner.actions)))
            after = array_status(runner.cmd, kname, name, members)
    entry['array'] = after
    conf_target = conf_line_for(after) if params['update_conf'] else None
    if after.get('md_name') is None and params['update_conf'] and module.check_mode:
        conf_target = conf_line_for(dict(after, md_name='<homehost>:%s' % name))
    entry['conf_line'] = conf_target
    uuid = after['uuid']
    return before, uuid if uuid and uuid != PLANNED_UUID else None


def update_conf(module, params, done):
    """Set the managed ARRAY line of every array in ``done`` [(entry, before, uuid)]: mdadm.conf is read once
    and written once (atomically); return its text (before, after)."""
    path = params['mdadm_conf']
    conf_before = textfile.read_text(path)
    text = conf_before
    for entry, dummy, uuid in done:
        new = update_conf_text(text, entry['name'], '/dev/md/%s' % entry['name'], uuid, entry['conf_line'])
        if text is None and new == '':
            new = None
        if new != text:
            entry['conf_changed'] = True
            entry['actions'].append('conf_updated')
        text = new
    if text != conf_before and not module.check_mode:
        textfile.write_text_atomic(module, path, text, prefix='.inferops-mdadm.')
    return conf_before, text


def initramfs_path():
    """The running kernel's initramfs (Debian's name)."""
    return '/boot/initrd.img-%s' % (sysfs.kernel_release() or '')


def initramfs_stale(conf):
    """Whether ``conf`` is newer than the running kernel's initramfs (or that is missing): its copy is stale."""
    try:
        conf_mtime = os.stat(conf).st_mtime
    except OSError:
        return False
    try:
        return conf_mtime > os.stat(sysfs.host_path(initramfs_path())).st_mtime
    except OSError:
        return True


def main():
    array_options = dict(
        name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'assembled', 'absent']),
        level=dict(type='str'),
        devices=dict(type='list', elements='str'),
        chunk_kb=dict(type='int'),
        layout=dict(type='str'),
        metadata=dict(type='str'),
        bitmap=dict(type='str', choices=['internal', 'none']),
        sync_speed_max=dict(type='str'),
    )
    module = AnsibleModule(
        # The single form takes the per-array options at the top level (name optional there).
        argument_spec=dict(
            copy.deepcopy(array_options),
            name=dict(type='str'),
            arrays=dict(type='list', elements='dict', options=array_options),
            force=dict(type='bool', default=False),
            update_conf=dict(type='bool', default=True),
            mdadm_conf=dict(type='path', default='/etc/mdadm/mdadm.conf'),
            update_initramfs=dict(type='bool', default=False),
        ),
        mutually_exclusive=[('arrays', key) for key in ARRAY_KEYS],
        required_one_of=[('name', 'arrays')],
        supports_check_mode=True,
    )
    cmd = CommandRunner(module)
    params = module.params
    listed = params['arrays'] is not None
    result = dict(changed=False, arrays=[], actions=[], commands=[], wiped=[], conf_changed=False, initramfs_update_needed=False,
                  initramfs_updated=False, command_log=cmd.log)
    if not listed:
        result.update(array=None, conf_line=None)
    try:
        plans = validate_all(array_requests(params), listed)
    except MdError as exc:
        module.fail_json(msg=to_native(exc), **result)

    done = []
    failure = None
    for index, (request, level, members) in enumerate(plans):
        runner = Runner(cmd)
        entry = dict(name=request['name'], changed=False, array=None, actions=runner.actions, commands=runner.commands,
                     conf_line=None, conf_changed=False, wiped=runner.wiped)
        try:
            before, uuid = apply_array(module, request, level, members, runner, entry)
        except MdError as exc:
            failure = label(index, request, listed) + to_native(exc)
            entry.update(array=runner.found, conf_line=None, failed=True, msg=failure)
            result['arrays'].append(entry)
            break
        done.append((entry, before, uuid))
        result['arrays'].append(entry)

    conf_before = conf_after = None
    if params['update_conf'] and done:
        conf_before, conf_after = update_conf(module, params, done)
        result['conf_changed'] = conf_after != conf_before
    result['initramfs_update_needed'] = result['conf_changed']
    for entry in result['arrays']:
        entry['changed'] = bool(entry['actions'])
        for action in entry['actions']:
            if action not in result['actions']:
                result['actions'].append(action)
        result['commands'].extend(entry['commands'])
        result['wiped'].extend(entry['wiped'])
    if params['update_initramfs'] and failure is None and (result['conf_changed'] or initramfs_stale(params['mdadm_conf'])):
        runner = Runner(cmd)
        try:
            runner('initramfs_updated', ['update-initramfs', '-u'])
        except MdError as exc:
            failure = to_native(exc)
        result['initramfs_updated'] = failure is None
        result['commands'].extend(runner.commands)
        result['actions'].extend(runner.actions)
    result['changed'] = any(entry['changed'] for entry in result['arrays']) or result['initramfs_updated']
    if not listed:
        single = result['arrays'][0]
        result.update((key, single[key]) for key in ('array', 'conf_line', 'members') if key in single)
    if failure is not None:
        module.fail_json(msg=failure, **result)
    if module._diff:
        result['diff'] = [dict(before_header='md array %s' % entry['name'], after_header='md array %s' % entry['name'],
                               before=describe(before), after=describe(entry['array'])) for entry, before, dummy in done]
        if params['update_conf']:
            result['diff'].append(dict(before_header=params['mdadm_conf'], after_header=params['mdadm_conf'],
                                       before=conf_before or '', after=conf_after or ''))
        if result['initramfs_updated']:
            # A rebuild for an initramfs older than an unchanged mdadm.conf changes nothing above: say so.
            initrd = initramfs_path()
            result['diff'].append(dict(before_header=initrd, after_header=initrd,
                                       before='copy of %s: out of date\n' % params['mdadm_conf'],
                                       after='rebuilt by update-initramfs -u\n'))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
