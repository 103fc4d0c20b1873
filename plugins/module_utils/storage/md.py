# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Linux md arrays and their member drives: the one place both ``mdadm_array`` (which acts)
and ``md_info`` (which only reads) get array state from.

* ``running_arrays`` / ``find_running`` - the md devices of the host, and the one called ``name``.
* ``array_status`` - everything known about one array: ``mdadm --detail --export``, ``mdadm --detail``,
  ``/sys/block/mdX/md`` and ``/proc/mdstat`` merged (level, UUID, members with their roles, status,
  sync progress, degraded/failed/spare counts).
* ``array_names`` - kernel name -> array name (from the ``/dev/md/<name>`` links udev makes).
* ``array_statements(lines)`` / ``conf_arrays(text)`` - the ``ARRAY`` statements of an mdadm.conf (continuation
  lines joined): where they stand, and their device, UUID and name - what mdadm_array writes and md_info
  reads back for the audit (the boot assembles the arrays by these lines).

Commands run through the module's ``command.CommandRunner`` (``runner``): C locale, argument lists.
"""

from __future__ import annotations

import os
import re

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs

__all__ = [
    'SYNC_STATUS', 'detail_export', 'examine_export', 'name_matches', 'running_arrays',
    'find_running', 'array_status', 'kernel_uuid_to_mdadm', 'array_names', 'array_statements', 'conf_arrays',
]

# sync_action (sysfs) or the /proc/mdstat action -> the status word reported for the array.
SYNC_STATUS = {'resync': 'resyncing', 'recover': 'recovering', 'reshape': 'reshaping', 'check': 'checking',
               'repair': 'checking', 'recovery': 'recovering'}


def detail_export(runner, device):
    """``mdadm --detail --export <device>`` as a dict; empty when mdadm refuses (not an active array)."""
    rc, out, dummy = runner.run(['mdadm', '--detail', '--export', device])
    return blockdev.parse_mdadm_export(out) if rc == 0 else {}


def examine_export(runner, device):
    """``mdadm --examine --export <device>`` (the superblock on a member) as a dict; empty without one."""
    rc, out, dummy = runner.run(['mdadm', '--examine', '--export', device])
    return blockdev.parse_mdadm_export(out) if rc == 0 else {}


def name_matches(md_name, name):
    """Whether a superblock name (``<homehost>:<name>`` or ``<name>``) is the array ``name``."""
    if not md_name:
        return False
    return md_name == name or md_name.split(':', 1)[-1] == name


def running_arrays():
    """Kernel names of md devices that exist (active or inactive)."""
    result = []
    for entry in sysfs.listdir('/sys/block'):
        if entry.startswith('md') and sysfs.isdir('/sys/block/%s/md' % entry):
            state = sysfs.read_attr('/sys/block/%s/md/array_state' % entry)
            if state and state != 'clear':
                result.append(entry)
    return result


def array_names():
    """Kernel name -> array name, from the ``/dev/md/<name>`` links."""
    names = {}
    for name in sysfs.listdir('/dev/md'):
        real = sysfs.realpath('/dev/md/%s' % name)
        if os.path.dirname(real) == '/dev':
            names.setdefault(os.path.basename(real), name)
    return names


def find_running(runner, name, member_knames):
    """The kname of the running (or inactive) array called ``name``, or one holding a requested member."""
    link = '/dev/md/%s' % name
    if sysfs.exists(link):
        try:
            return blockdev.resolve_device(link)['kname']
        except blockdev.BlockDevError:
            pass
    for kname in running_arrays():
        export = detail_export(runner, '/dev/%s' % kname)
        if name_matches(export.get('MD_NAME'), name) or export.get('MD_DEVNAME') == name:
            return kname
    # Inactive arrays have no name in --detail: match by a requested member inside.
    for kname in running_arrays():
        if sysfs.read_attr('/sys/block/%s/md/array_state' % kname) != 'inactive':
            continue
        inside = [m['kname'] for m in blockdev.md_sysfs_state(kname)['members']]
        if set(inside) & set(member_knames):
            return kname
    return None


def kernel_uuid_to_mdadm(value):
    """'ae809e5b-1362-128b-161f-63bf74fd1500' -> 'ae809e5b:1362128b:161f63bf:74fd1500'."""
    if not value:
        return None
    hexdigits = value.replace('-', '').replace(':', '')
    if len(hexdigits) != 32:
        return None
    return ':'.join(hexdigits[i:i + 8] for i in range(0, 32, 8))


def bitmap_kind(location):
    """``bitmap/location`` -> ``internal`` (an offset from the superblock, ``+8``), ``none``, ``file``, or None
    when the kernel has no such attribute."""
    if location is None:
        return None
    if re.fullmatch(r'[+-][0-9]+', location):
        return 'internal'
    return 'none' if location == 'none' else 'file'


def sync_speed(value):
    """``sync_speed_max`` (``10000 (local)``, ``200000 (system)``) -> ``(kib_per_s, local)``; (None, None) unread."""
    match = re.fullmatch(r'([0-9]+) \((local|system)\)', value or '')
    return (int(match.group(1)), match.group(2) == 'local') if match else (None, None)


def array_status(runner, kname, name, members=None):
    """Everything known about a running (or inactive) array ``kname`` called ``name``.

    ``members``: the requested members (resolved, with ``path`` and ``kname``); when given,
    ``missing_members`` lists those that are not active and in sync.
    """
    device = '/dev/%s' % kname
    export = detail_export(runner, device)
    rc, out, dummy = runner.run(['mdadm', '--detail', device])
    detail = blockdev.parse_mdadm_detail(out) if rc == 0 else blockdev.parse_mdadm_detail('')
    sysstate = blockdev.md_sysfs_state(kname)
    mdstat = blockdev.parse_mdstat(sysfs.read_attr('/proc/mdstat', '') or '')['arrays'].get(kname) or {}

    roles = {}
    for row in detail['devices']:
        if row['device']:
            roles[os.path.basename(row['device'])] = row
    in_kernel = dict((m['kname'], m) for m in sysstate['members'])
    member_list = []
    listed = [(os.path.basename(item['device']), item['device'], item['role']) for item in blockdev.md_members_from_export(export)]
    for kn in sorted(in_kernel):
        if kn not in [entry[0] for entry in listed]:
            slot = in_kernel[kn]['slot']
            listed.append((kn, '/dev/%s' % kn, slot if slot not in (None, 'none') else 'spare'))
    for kn, member_device, role in listed:
        row = roles.get(kn)
        words = row['state'] if row else []
        kernel = in_kernel.get(kn)
        kernel_words = (kernel['state'] or '').split(',') if kernel and kernel['state'] else []
        if 'faulty' in words or 'faulty' in kernel_words:
            role = 'faulty'
        in_sync = 'in_sync' in kernel_words if kernel else ('active' in words and 'sync' in words)
        member_list.append({'device': member_device, 'kname': kn, 'role': role, 'state': words or kernel_words,
                            'in_sync': in_sync})

    level = sysstate['level'] or export.get('MD_LEVEL') or detail['fields'].get('Raid Level')
    sync = mdstat.get('sync') or {}
    percent = sync.get('percent')
    if percent is None:
        percent = sysstate['sync_percent']
    action = sysstate['sync_action']
    if sysstate['array_state'] == 'inactive':
        status = 'inactive'
    elif action in SYNC_STATUS or sync.get('action') in SYNC_STATUS:
        status = SYNC_STATUS.get(action) or SYNC_STATUS[sync['action']]
    elif sysstate['degraded']:
        status = 'degraded'
    else:
        status = 'clean'
    chunk = sysstate['chunk_kb'] if level not in ('raid1',) else None
    uuid = export.get('MD_UUID') or detail['fields'].get('UUID') or kernel_uuid_to_mdadm(sysstate['uuid'])
    result = {
        'name': name, 'device': '/dev/md/%s' % name, 'kname': kname, 'uuid': uuid,
        'md_name': export.get('MD_NAME') or (detail['fields'].get('Name') or '').split(' ')[0] or None,
        'level': level, 'raid_disks': sysstate['raid_disks'], 'chunk_kb': chunk or None,
        'metadata': export.get('MD_METADATA') or sysstate['metadata_version'],
        'status': status, 'state': detail['state'], 'array_state': sysstate['array_state'],
        'degraded': sysstate['degraded'] if sysstate['degraded'] is not None or status == 'inactive' else 0,
        'sync_action': action, 'sync_percent': percent if status in SYNC_STATUS.values() else None,
        'sync_speed': sync.get('speed'), 'sync_finish': sync.get('finish'),
        'bitmap': bitmap_kind(sysstate['bitmap_location']),
        'members': member_list, 'missing_members': [],
    }
    result['sync_speed_max_kb'], result['sync_speed_max_local'] = sync_speed(sysstate['sync_speed_max'])
    if members is not None:
        in_sync = set(m['kname'] for m in member_list if m['in_sync'] and status != 'inactive')
        result['missing_members'] = [m['path'] for m in members if m['kname'] not in in_sync]
    return result


def array_statements(lines):
    """``[(start, end_exclusive, words)]`` of the ARRAY statements in mdadm.conf ``lines`` (a statement goes on
    over the indented lines after it)."""
    out = []
    idx = 0
    while idx < len(lines):
        if re.match(r'^ARRAY\s', lines[idx]):
            end = idx + 1
            while end < len(lines) and lines[end][:1] in (' ', '\t') and lines[end].strip():
                end += 1
            out.append((idx, end, ' '.join(line.strip() for line in lines[idx:end]).split()))
            idx = end
        else:
            idx += 1
    return out


def conf_arrays(text):
    """``[{device, uuid, name}]`` of the ARRAY statements of an mdadm.conf's ``text`` (None for a missing field)."""
    out = []
    for dummy, dummy2, words in array_statements((text or '').splitlines()):
        fields = dict(word.split('=', 1) for word in words[2:] if '=' in word)
        fields = dict((key.lower(), value) for key, value in fields.items())
        out.append({'device': words[1] if len(words) > 1 and '=' not in words[1] else None,
                    'uuid': fields.get('uuid'), 'name': fields.get('name')})
    return out
