# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Block device helpers: stable path resolution, signature probing, md state parsing.

* ``resolve_device`` turns ``/dev/disk/by-id/...``, ``/dev/md/<name>``, ``/dev/mapper/...``
  or a bare kernel name into the kernel name (``nvme0n1``, ``md127``, ``dm-0``).
* ``probe_usage`` reports what is on a device (filesystem, partition table, md superblock,
  mounts, holders) from ``wipefs --no-act --json``, ``blkid -p -o export``, ``lsblk --json -O``
  and sysfs.
* ``parse_mdstat``, ``parse_mdadm_export``, ``parse_mdadm_detail`` and ``md_sysfs_state`` read
  md array state; ``md_stripe_width_kb`` computes an array's full stripe width, ``md_default_read_ahead_kb``
  the read-ahead an array gets from it.
* ``by_id_paths`` - the ``/dev/disk/by-id`` links of a device; ``device_identity`` - a drive's serial, model
  and firmware (``nvme_devices`` reads each controller's with it); ``drive_identity`` - a block device's
  links, identity and size (what ``md_info`` reports per member);
  ``queue_settings`` - its request
  queue (scheduler, read-ahead, nr_requests, request sizes, hardware queues) from sysfs;
  ``check_read_ahead_kb`` - the read-ahead rule (integer, not negative, whole pages).

The probes take the module's ``command.CommandRunner`` (C locale, argument lists).
"""

from __future__ import annotations

import json
import os
import re

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from ..common import sysfs
from ..fabric import nvme_fabrics

__all__ = [
    'BlockDevError', 'resolve_device', 'device_kind',
    'udev_properties', 'lsblk_json', 'blkid_probe', 'wipefs_probe', 'probe_usage',
    'holders', 'partitions', 'parse_mdstat', 'parse_mdadm_export', 'parse_mdadm_detail',
    'md_sysfs_state', 'md_stripe_width_kb', 'md_default_read_ahead_kb', 'md_level_number', 'md_members_from_export',
    'parse_sync_completed', 'by_id_paths', 'device_identity', 'drive_identity', 'parse_scheduler', 'queue_settings', 'check_read_ahead_kb',
    'PAGE_KB',
]

# The kernel keeps read-ahead in pages; 4 KiB on every platform the collection supports (x86_64, arm64
# with 4K pages). The modules ask the host (os.sysconf) where they run; the controller side uses this.
PAGE_KB = 4

_KNAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:+-]*$')
_NVME_NS_RE = re.compile(r'^nvme\d+n\d+$')
_NVME_PATH_RE = re.compile(r'^nvme\d+c\d+n\d+$')


class BlockDevError(Exception):
    """A device could not be resolved or probed; the message names it."""


# ---------------------------------------------------------------- resolution

def resolve_device(path):
    """Resolve a device path or kernel name to ``{'path', 'device', 'kname'}``.

    ``path`` may be any path whose symlinks end at a node in ``/dev`` (``/dev/disk/by-id/...``,
    ``/dev/disk/by-uuid/...``, ``/dev/md/<name>``, ``/dev/mapper/<name>``) or a bare kernel name
    (``nvme0n1``). It is a block device when its kernel name is listed in ``/sys/class/block``.
    Raises ``BlockDevError`` otherwise.
    """
    if not isinstance(path, str) or not path.strip():
        raise BlockDevError('device %r is not a device path' % (path,))
    given = path.strip()
    candidate = given if given.startswith('/') else '/dev/' + given
    if not sysfs.exists(candidate):
        raise BlockDevError('device %s does not exist' % given)
    real = sysfs.realpath(candidate)
    if os.path.dirname(real) != '/dev':
        raise BlockDevError('%s (resolves to %s) is not a block device node in /dev' % (given, real))
    kname = os.path.basename(real)
    if not _KNAME_RE.match(kname) or not sysfs.exists('/sys/class/block/%s' % kname):
        raise BlockDevError('%s (resolves to %s) is not a block device' % (given, real))
    return {'path': given, 'device': '/dev/%s' % kname, 'kname': kname}


def device_kind(kname):
    """Classify a kernel block device: md, dm, nvme, nvme-of, partition or disk.

    Returns ``{'kind', 'transport', 'partition'}``; ``transport`` is the NVMe controller transport
    (pcie, tcp, rdma, fc, loop) when known (``nvme_fabrics.namespace_transport``).
    """
    base = '/sys/class/block/%s' % kname
    info = {'kind': 'disk', 'transport': None, 'partition': sysfs.exists(base + '/partition')}
    if info['partition']:
        info['kind'] = 'partition'
    elif sysfs.isdir(base + '/md'):
        info['kind'] = 'md'
    elif sysfs.isdir(base + '/dm'):
        info['kind'] = 'dm'
    elif _NVME_NS_RE.match(kname) or _NVME_PATH_RE.match(kname):
        transport = nvme_fabrics.namespace_transport(kname)
        info['transport'] = transport
        info['kind'] = 'nvme' if transport in (None, 'pcie') else 'nvme-of'
    return info


def holders(kname):
    """Kernel names holding the device open as a stacked device (md, dm)."""
    return sysfs.listdir('/sys/class/block/%s/holders' % kname)


def partitions(kname):
    """Kernel names of the device's partitions."""
    base = '/sys/class/block/%s' % kname
    return [entry for entry in sysfs.listdir(base) if entry.startswith(kname) and sysfs.exists('%s/%s/partition' % (base, entry))]


# ---------------------------------------------------------------- probing

def udev_properties(runner, device):
    """``udevadm info --query=property`` as a dict; empty when udevadm is missing or fails."""
    if not runner.find('udevadm'):
        return {}
    rc, out, dummy = runner.run(['udevadm', 'info', '--query=property', '--name=%s' % device])
    if rc != 0:
        return {}
    return parse_export(out)


def parse_export(text):
    """Parse ``KEY=value`` lines (``blkid -o export``, ``udevadm info``, ``mdadm --export``)."""
    result = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or '=' not in line:
            continue
        key, value = line.split('=', 1)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in '\'"':
            value = value[1:-1]
        result[key.strip()] = value
    return result


def lsblk_json(runner, device):
    """``lsblk --json -O <device>``: the device's entry (with ``children``), or None."""
    rc, out, err = runner.run(['lsblk', '--json', '-O', device])
    if rc != 0:
        raise BlockDevError('lsblk --json -O %s failed (rc=%d): %s' % (device, rc, err.strip()))
    try:
        data = json.loads(out)
    except ValueError as exc:
        raise BlockDevError('lsblk --json -O %s: unparseable output: %s' % (device, exc))
    devices = data.get('blockdevices') or []
    return devices[0] if devices else None


def blkid_probe(runner, device):
    """Low-level probe ``blkid -p -o export <device>``: dict of tags, empty when nothing found.

    blkid exits 2 when nothing is found; 8 means ambiguous (several signatures) - reported as
    ``{'AMBIGUOUS': 'true'}`` plus what could be read.
    """
    rc, out, err = runner.run(['blkid', '-p', '-o', 'export', device])
    if rc == 2:
        return {}
    tags = parse_export(out)
    if rc == 8:
        tags['AMBIGUOUS'] = 'true'
        return tags
    if rc != 0:
        raise BlockDevError('blkid -p -o export %s failed (rc=%d): %s' % (device, rc, err.strip()))
    return tags


def wipefs_probe(runner, device):
    """Signatures ``wipefs --no-act --json <device>`` would erase (list of dicts, may be empty)."""
    rc, out, err = runner.run(['wipefs', '--no-act', '--json', device])
    if rc != 0:
        raise BlockDevError('wipefs --no-act --json %s failed (rc=%d): %s' % (device, rc, err.strip()))
    if not out.strip():
        return []
    try:
        return json.loads(out).get('signatures') or []
    except ValueError as exc:
        raise BlockDevError('wipefs --no-act --json %s: unparseable output: %s' % (device, exc))


def _lsblk_walk(entry):
    for child in entry.get('children') or []:
        yield child
        yield from _lsblk_walk(child)


def _mountpoints(entry):
    points = []
    for key in ('mountpoints', 'mountpoint'):
        value = entry.get(key)
        if isinstance(value, list):
            points.extend(p for p in value if p)
        elif value:
            points.append(value)
    return sorted(set(points))


def probe_usage(runner, device, kname):
    """What is on a device, as a list of findings ``{'kind', 'detail', 'in_use'}``.

    Kinds: ``mounted``, ``swap``, ``holder`` (in an md array or dm device), ``partitions``,
    ``partition_table``, ``md_superblock``, ``filesystem``, ``signature``. ``in_use`` is true
    when the device is busy (mounted, swap, held), false for on-disk signatures only.
    """
    findings = []

    def add(kind, detail, in_use=False):
        item = {'kind': kind, 'detail': detail, 'in_use': in_use}
        if item not in findings:
            findings.append(item)

    held = holders(kname)
    if held:
        add('holder', 'held by %s' % ', '.join(held), True)
    parts = partitions(kname)
    if parts:
        add('partitions', 'has partitions %s' % ', '.join(parts))
    swaps = sysfs.read_attr('/proc/swaps', '') or ''
    for line in swaps.splitlines()[1:]:
        fields = line.split()
        if fields and fields[0] in (device, '/dev/%s' % kname):
            add('swap', 'active swap', True)

    tree = lsblk_json(runner, device)
    if tree is not None:
        for point in _mountpoints(tree):
            add('mounted', 'mounted at %s' % point, True)
        for child in _lsblk_walk(tree):
            for point in _mountpoints(child):
                add('mounted', '%s mounted at %s' % (child.get('name'), point), True)
        if tree.get('pttype'):
            add('partition_table', 'partition table %s' % tree['pttype'])

    for sig in wipefs_probe(runner, device):
        kind = _signature_kind(sig.get('type'), sig.get('usage'))
        detail = '%s signature at offset %s' % (sig.get('type'), sig.get('offset'))
        if sig.get('uuid'):
            detail += ' (UUID %s)' % sig['uuid']
        add(kind, detail)

    tags = blkid_probe(runner, device)
    if tags.get('TYPE') or tags.get('PTTYPE'):
        if tags.get('PTTYPE'):
            add('partition_table', 'partition table %s' % tags['PTTYPE'])
        if tags.get('TYPE'):
            kind = _signature_kind(tags['TYPE'], tags.get('USAGE'))
            detail = '%s %s' % ('md superblock' if kind == 'md_superblock' else 'filesystem', tags['TYPE'])
            if tags.get('UUID'):
                detail += ' (UUID %s)' % tags['UUID']
            if tags.get('LABEL'):
                detail += ' label %s' % tags['LABEL']
            if not any(f['kind'] == kind and tags['TYPE'] in f['detail'] for f in findings):
                add(kind, detail)
    if tags.get('AMBIGUOUS'):
        add('signature', 'several signatures (blkid -p: ambiguous probing result)')
    return findings


def _signature_kind(sig_type, usage=None):
    if sig_type == 'linux_raid_member':
        return 'md_superblock'
    if usage == 'partition_table' or sig_type in ('gpt', 'PMBR', 'dos', 'atari', 'sun', 'sgi', 'mac', 'bsd'):
        return 'partition_table'
    if sig_type:
        return 'filesystem'
    return 'signature'


# ---------------------------------------------------------------- md

_MDSTAT_ARRAY_RE = re.compile(r'^(md\w+)\s*:\s*(\S+)\s*(.*)$')
_MDSTAT_MEMBER_RE = re.compile(r'^(\S+?)\[(\d+)\]((?:\([A-Z]\))*)$')
_MDSTAT_STATUS_RE = re.compile(r'\[(\d+)/(\d+)\]\s*\[([U_]+)\]')
_MDSTAT_SYNC_RE = re.compile(
    r'(resync|recovery|reshape|check|repair)\s*=\s*([\d.]+)%\s*\((\d+)/(\d+)\)'
    r'(?:\s*finish=(\S+))?(?:\s*speed=(\S+))?')
_MDSTAT_PENDING_RE = re.compile(r'(resync|recovery|reshape|check|repair)\s*=\s*(DELAYED|PENDING)')


def parse_mdstat(text):
    """Parse ``/proc/mdstat`` into ``{'personalities': [...], 'arrays': {mdX: {...}}}``.

    Each array: ``state`` (active/inactive), ``readonly``, ``level``, ``members`` (list of
    ``{'name', 'index', 'faulty', 'spare', 'write_mostly', 'replacement'}``), ``blocks``,
    ``raid_disks``, ``active_disks``, ``status`` (``UU_U``), ``chunk_kb``, and ``sync``
    (``{'action', 'percent', 'done', 'total', 'finish', 'speed'}``, or ``{'action', 'pending'}``).
    """
    result = {'personalities': [], 'arrays': {}}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            current = None
            continue
        if line.startswith('Personalities'):
            result['personalities'] = [p.strip('[]') for p in line.split(':', 1)[1].split()]
            continue
        if line.startswith('unused devices'):
            current = None
            continue
        match = _MDSTAT_ARRAY_RE.match(line)
        if match and not raw.startswith((' ', '\t')):
            name, state, rest = match.groups()
            words = rest.split()
            array = {'state': state, 'readonly': False, 'level': None, 'members': [], 'blocks': None,
                     'raid_disks': None, 'active_disks': None, 'status': None, 'chunk_kb': None, 'sync': None}
            if words and words[0].startswith('('):
                array['readonly'] = words[0] in ('(read-only)', '(auto-read-only)')
                words = words[1:]
            if words and not _MDSTAT_MEMBER_RE.match(words[0]):
                array['level'] = words[0]
                words = words[1:]
            for word in words:
                member = _MDSTAT_MEMBER_RE.match(word)
                if not member:
                    continue
                flags = member.group(3)
                array['members'].append({
                    'name': member.group(1), 'index': int(member.group(2)),
                    'faulty': '(F)' in flags, 'spare': '(S)' in flags,
                    'write_mostly': '(W)' in flags, 'replacement': '(R)' in flags,
                })
            array['members'].sort(key=lambda m: m['index'])
            result['arrays'][name] = array
            current = array
            continue
        if current is None:
            continue
        blocks = re.match(r'^(\d+) blocks', line)
        if blocks:
            current['blocks'] = int(blocks.group(1))
            chunk = re.search(r'(\d+)k chunks?', line)
            if chunk:
                current['chunk_kb'] = int(chunk.group(1))
            status = _MDSTAT_STATUS_RE.search(line)
            if status:
                current['raid_disks'] = int(status.group(1))
                current['active_disks'] = int(status.group(2))
                current['status'] = status.group(3)
            continue
        sync = _MDSTAT_SYNC_RE.search(line)
        if sync:
            current['sync'] = {
                'action': sync.group(1), 'percent': float(sync.group(2)),
                'done': int(sync.group(3)), 'total': int(sync.group(4)),
                'finish': sync.group(5), 'speed': sync.group(6),
            }
            continue
        pending = _MDSTAT_PENDING_RE.search(line)
        if pending:
            current['sync'] = {'action': pending.group(1), 'pending': pending.group(2).lower()}
    return result


def parse_mdadm_export(text):
    """Parse ``mdadm --detail --export`` / ``--examine --export`` into a dict of MD_* keys."""
    return parse_export(text)


def md_members_from_export(export):
    """Member devices of ``mdadm --detail --export`` output: list of ``{'device', 'role'}``.

    ``role`` is the slot number as a string, or ``spare`` / ``faulty`` / ``journal``.
    """
    members = {}
    for key, value in export.items():
        match = re.match(r'^MD_DEVICE_(.+)_(ROLE|DEV)$', key)
        if not match:
            continue
        members.setdefault(match.group(1), {})[match.group(2).lower()] = value
    result = []
    for ident in sorted(members):
        entry = members[ident]
        device = entry.get('dev') or '/' + ident.replace('_', '/')
        result.append({'device': device, 'role': entry.get('role')})
    result.sort(key=lambda m: (not m['role'].isdigit() if m['role'] else True,
                               int(m['role']) if m['role'] and m['role'].isdigit() else 0, m['device']))
    return result


_DETAIL_ROW_RE = re.compile(r'^\s*(\d+|-)\s+(\d+)\s+(\d+)\s+(\d+|-)\s+(.*?)\s*(/dev/\S+)?\s*$')


def parse_mdadm_detail(text):
    """Parse human ``mdadm --detail`` output.

    Returns ``{'device', 'fields': {'Raid Level': ..., ...}, 'state': [words], 'devices': [...]}``;
    each device row is ``{'number', 'major', 'minor', 'raid_device', 'state', 'device'}`` with
    ``None`` for ``-``. ``sync_status`` holds e.g. ``{'kind': 'Resync', 'percent': 12}``.
    """
    result = {'device': None, 'fields': {}, 'state': [], 'devices': [], 'sync_status': None}
    in_table = False
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if result['device'] is None and raw.rstrip().endswith(':') and raw.startswith('/'):
            result['device'] = raw.rstrip()[:-1]
            continue
        if re.match(r'^\s*Number\s+Major\s+Minor\s+RaidDevice', raw):
            in_table = True
            continue
        if in_table:
            row = _DETAIL_ROW_RE.match(raw)
            if row:
                def num(value):
                    return None if value == '-' else int(value)
                result['devices'].append({
                    'number': num(row.group(1)), 'major': int(row.group(2)), 'minor': int(row.group(3)),
                    'raid_device': num(row.group(4)), 'state': row.group(5).split(), 'device': row.group(6),
                })
            continue
        if ' : ' in raw:
            key, value = raw.split(' : ', 1)
            key, value = key.strip(), value.strip()
            result['fields'][key] = value
            if key == 'State':
                result['state'] = [w.strip() for w in value.split(',') if w.strip()]
            sync = re.match(r'^(Resync|Rebuild|Reshape|Check) Status$', key)
            if sync:
                pct = re.match(r'^(\d+)% complete', value)
                result['sync_status'] = {'kind': sync.group(1).lower(), 'percent': int(pct.group(1)) if pct else None}
    return result


def parse_sync_completed(value):
    """``/sys/block/mdX/md/sync_completed`` (``"done / total"`` sectors, ``none``, ``delayed``).

    Returns ``(done, total, percent)``; ``(None, None, None)`` when no sync runs.
    """
    if not value:
        return None, None, None
    match = re.match(r'^\s*(\d+)\s*/\s*(\d+)\s*$', value)
    if not match:
        return None, None, None
    done, total = int(match.group(1)), int(match.group(2))
    percent = round(100.0 * done / total, 1) if total else None
    return done, total, percent


def md_level_number(level):
    """``raid10`` / ``10`` / 10 -> ``'10'``; ``linear`` etc. are returned unchanged."""
    text = ('%s' % (level,)).strip().lower()
    if text.startswith('raid'):
        text = text[4:]
    return text


def md_sysfs_state(kname):
    """Array state from ``/sys/block/<kname>/md``.

    Keys: ``level``, ``raid_disks``, ``chunk_kb``, ``layout``, ``array_state``, ``degraded``,
    ``sync_action``, ``sync_completed``, ``sync_done``, ``sync_total``, ``sync_percent``,
    ``metadata_version``, ``uuid`` (kernel form, when the kernel has the attribute),
    ``bitmap_location`` (``bitmap/location``: ``none``, ``+8`` for an internal bitmap, ``file``),
    ``sync_speed_max`` (``1000 (local)`` or ``200000 (system)``) and
    ``members`` (list of ``{'kname', 'slot', 'state'}`` from the ``dev-*`` directories).
    """
    base = '/sys/block/%s/md' % kname
    chunk = sysfs.read_int(base + '/chunk_size')
    state = {
        'level': sysfs.read_attr(base + '/level'),
        'raid_disks': sysfs.read_int(base + '/raid_disks'),
        'chunk_kb': chunk // 1024 if chunk else None,
        'layout': sysfs.read_int(base + '/layout'),
        'array_state': sysfs.read_attr(base + '/array_state'),
        'degraded': sysfs.read_int(base + '/degraded'),
        'sync_action': sysfs.read_attr(base + '/sync_action'),
        'sync_completed': sysfs.read_attr(base + '/sync_completed'),
        'metadata_version': sysfs.read_attr(base + '/metadata_version'),
        'uuid': sysfs.read_attr(base + '/uuid'),
        'bitmap_location': sysfs.read_attr(base + '/bitmap/location'),
        'sync_speed_max': sysfs.read_attr(base + '/sync_speed_max'),
        'members': [],
    }
    done, total, percent = parse_sync_completed(state['sync_completed'])
    state.update(sync_done=done, sync_total=total, sync_percent=percent)
    for entry in sysfs.listdir(base):
        if entry.startswith('dev-'):
            state['members'].append({
                'kname': entry[4:],
                'slot': sysfs.read_attr('%s/%s/slot' % (base, entry)),
                'state': sysfs.read_attr('%s/%s/state' % (base, entry)),
            })
    return state


def md_stripe_width_kb(kname):
    """Full stripe width of an md array in KiB: chunk size x data disks.

    Returns ``(width_kb, explanation)``; ``width_kb`` is None for levels without striping
    (raid1, linear) or when the attributes cannot be read. Data disks: raid0 = raid_disks,
    raid4/5 = raid_disks - 1, raid6 = raid_disks - 2, raid10 = raid_disks / copies
    (near x far copies from ``layout``).
    """
    state = md_sysfs_state(kname)
    level = md_level_number(state['level'] or '')
    disks = state['raid_disks']
    chunk = state['chunk_kb']
    if level not in ('0', '4', '5', '6', '10'):
        return None, 'md array %s: level %s has no stripe' % (kname, state['level'] or '(none, array inactive)')
    if not disks or not chunk:
        return None, 'md array %s: level %s has no chunk size / raid_disks in sysfs' % (kname, state['level'])
    if level == '10':
        layout = state['layout'] or 0
        copies = max(1, layout & 0xff) * max(1, (layout >> 8) & 0xff)
        if disks % copies:
            return None, 'md array %s: raid10 with %d disks and %d copies has no whole-disk stripe' % (kname, disks, copies)
        data = disks // copies
    else:
        data = disks - {'0': 0, '4': 1, '5': 1, '6': 2}[level]
    if data < 1:
        return None, 'md array %s: no data disks' % kname
    return chunk * data, 'md array %s: %s, %s KiB chunk x %s data disks = %s KiB stripe' % (
        kname, state['level'], chunk, data, chunk * data)


def md_default_read_ahead_kb(stripe_kb):
    """The read-ahead (KiB) an md array gets when none is asked for: twice its full stripe, so one read-ahead
    window keeps every data disk busy with a whole chunk (``blockdev_readahead``; the node audit checks it)."""
    return 2 * stripe_kb


# ---------------------------------------------------------------- identity and request queue

def by_id_paths(kname):
    """The ``/dev/disk/by-id`` links that resolve to ``/dev/<kname>``, sorted: the ``<model>_<serial>``
    form first, then the longer ones (``..._1`` per namespace), then ``eui.`` / ``nvme.`` / ``wwn-`` ids."""
    paths = []
    for entry in sysfs.listdir('/dev/disk/by-id'):
        path = '/dev/disk/by-id/%s' % entry
        if sysfs.realpath(path) == '/dev/%s' % kname:
            paths.append(path)
    return sorted(paths, key=lambda p: (bool(re.search(r'/(nvme-eui\.|nvme-nvme\.|wwn-)', p)), len(p), p))


def device_identity(path):
    """``{serial, model, firmware}`` of the device at sysfs ``path`` (an NVMe controller
    ``/sys/class/nvme/nvme0``, a block device's ``device`` link): its ``serial``, ``model`` and
    ``firmware_rev``, stripped, None when missing or blank. The one reader of a drive's identity."""
    def attr(name):
        value = sysfs.read_attr('%s/%s' % (path, name))
        return value.strip() if value is not None and value.strip() else None
    return {'serial': attr('serial'), 'model': attr('model'), 'firmware': attr('firmware_rev')}


def drive_identity(kname):
    """``{by_id, by_id_all, serial, model, firmware, size_bytes}`` of a block device from sysfs (None when
    unknown): ``by_id_paths``, the ``device_identity`` of its ``device`` (an NVMe namespace's controller, or a
    multipath head's subsystem), the size in bytes."""
    ids = by_id_paths(kname)
    return dict(device_identity('/sys/class/block/%s/device' % kname), by_id=ids[0] if ids else None,
                by_id_all=ids, size_bytes=sysfs.block_size_bytes(kname))


def parse_scheduler(text):
    """``[none] mq-deadline`` -> (``'none'``, ``['none', 'mq-deadline']``); (None, []) for None/empty."""
    names = [name.strip('[]') for name in (text or '').split()]
    active = re.search(r'\[([^\]]+)\]', text or '')
    if active:
        return active.group(1), names
    # A queue without an elevator choice prints "none" alone.
    return (names[0] if len(names) == 1 else None), names


def queue_settings(kname):
    """The request queue of a block device from ``/sys/class/block/<kname>/queue`` (None per missing file).

    Keys: ``scheduler`` (active), ``schedulers`` (offered), ``read_ahead_kb``, ``nr_requests``,
    ``max_sectors_kb``, ``max_hw_sectors_kb``, ``logical_block_size``, ``physical_block_size``,
    ``minimum_io_size``, ``optimal_io_size``, ``rotational`` (bool), ``write_cache``, ``rq_affinity``,
    ``nomerges``, ``io_poll`` (bool), ``add_random`` (bool), ``nr_hw_queues`` (blk-mq hardware queues,
    ``mq/*``) and ``hw_queue_cpus`` (their CPU lists, in queue order).
    """
    base = '/sys/class/block/%s' % kname
    queue = base + '/queue'
    scheduler, schedulers = parse_scheduler(sysfs.read_attr(queue + '/scheduler'))

    def flag(name):
        value = sysfs.read_int('%s/%s' % (queue, name))
        return bool(value) if value is not None else None

    write_cache = sysfs.read_attr(queue + '/write_cache')
    hw_queues = sorted((e for e in sysfs.listdir(base + '/mq') if e.isdigit()), key=int)
    settings = {'scheduler': scheduler, 'schedulers': schedulers}
    for name in ('read_ahead_kb', 'nr_requests', 'max_sectors_kb', 'max_hw_sectors_kb', 'logical_block_size',
                 'physical_block_size', 'minimum_io_size', 'optimal_io_size', 'rq_affinity', 'nomerges'):
        settings[name] = sysfs.read_int('%s/%s' % (queue, name))
    settings.update(
        rotational=flag('rotational'), io_poll=flag('io_poll'), add_random=flag('add_random'),
        write_cache=write_cache.strip() if write_cache is not None else None,
        nr_hw_queues=len(hw_queues) if hw_queues else None,
        hw_queue_cpus=[(sysfs.read_attr('%s/mq/%s/cpu_list' % (base, q)) or '').strip() for q in hw_queues],
    )
    return settings


def check_read_ahead_kb(value, option, page_kb=PAGE_KB):
    """The read-ahead rule shared by ``blockdev_readahead`` and the ``nvme_sched`` role: an integer (int or
    digit string, not a boolean), not negative, a multiple of the page size in KiB. Returns the number;
    raises ``BlockDevError`` naming ``option`` and the value."""
    if value is None or isinstance(value, bool):
        raise BlockDevError('%s=%r is not an integer' % (option, value))
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.match(r'^\s*-?\d+\s*$', value):
        number = int(value)
    else:
        raise BlockDevError('%s=%r is not an integer' % (option, value))
    if number < 0:
        raise BlockDevError('%s=%r is negative' % (option, value))
    if page_kb and number % page_kb:
        raise BlockDevError('%s=%d is not a multiple of the %d KiB page size' % (option, number, page_kb))
    return number
