# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of md arrays with XFS, and the plan of the role md_raid_xfs - written once.

* Rules shared with the module ``mdadm_array`` (each returns a problem in words, or None):
  ``name_problem``, ``chunk_problem``, ``layout_problem``, ``member_count_problem``,
  ``array_differences`` (a running array against a request; never re-created).
* The role's side, on its variables (a dict ``settings`` keyed by the variable names,
  ``md_raid_xfs_arrays`` ...) and on the result of the module ``md_info`` (``info``):
  ``input_errors`` (variables alone), ``want`` (the arrays with defaults and stripe geometry),
  ``host_errors`` (the arrays against the host), ``plan`` (units and kernel values to
  change), ``filesystems`` (mkfs and mount decisions), ``report`` (the ``md_raid_xfs_report`` fact).

Every message names the variable, the entry (index and name), the value and the fix.
The filters in ``plugins/filter/md_raid.py`` expose these to the role and to playbooks/preflight.yml.
"""

from __future__ import annotations

import json
import os
import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.storage.mount_options import compare, option_errors
from ansible_collections.inferops.node.plugins.module_utils.common.role_arguments import is_boolean

__all__ = [
    'NAME_RE', 'CHUNK_KB_MAX', 'name_problem', 'chunk_problem', 'layout_copies', 'layout_problem',
    'member_count_problem', 'array_differences', 'bitmap_problem', 'sync_speed_problem', 'array_tuning',
    'duration_seconds', 'input_errors', 'want', 'host_errors', 'plan', 'filesystems', 'report',
]

NAME_RE = re.compile(r'[A-Za-z0-9_.-]{1,32}')
CHUNK_KB_MAX = 65536
MIN_MEMBERS = {'0': 2, '1': 2, '5': 3, '6': 4}
_LAYOUT_RE = re.compile(r'([nfo])([1-9])')

ROLE_LEVELS = ('0', '1', '10')
ARRAY_KEYS = ('name', 'level', 'devices', 'chunk_kb', 'layout', 'bitmap', 'mount', 'mount_opts', 'read_ahead_kb')
RESERVED_MOUNTS = ('/', '/boot', '/boot/efi', '/etc', '/usr', '/var', '/home', '/root', '/proc', '/sys', '/dev',
                   '/run', '/tmp', '/opt', '/srv')
MOUNT_RE = re.compile(r'/[^\s]*[^/\s]')
WINDOW_TIMERS = ['inferops-mdcheck-start.timer', 'inferops-mdcheck-continue.timer']
# Lifts md_raid_xfs_resync_speed_outside_window for the length of the window (its timer: the window's start).
RESYNC_WINDOW_TIMER = 'inferops-md-resync-window.timer'
RESYNC_WINDOW_SERVICE = 'inferops-md-resync-window.service'
# md_info statuses of a running resync, rebuild or check: the array is not at full speed, and the kernel refuses
# a bitmap change meanwhile (md's update_array_info: -EBUSY).
BUSY_STATUSES = ('resyncing', 'recovering', 'reshaping', 'checking')
DISTRO_TIMERS = ['mdcheck_start.timer', 'mdcheck_continue.timer']
FORCE_HINT = ' (md_raid_xfs_force: true wipes it)'


# ---------------------------------------------------------------- shared rules

def level_number(level):
    """``raid10`` / ``10`` / 10 -> ``'10'`` (as ``blockdev.md_level_number``; booleans are no level)."""
    if isinstance(level, bool) or level is None:
        return None
    text = ('%s' % (level,)).strip().lower()
    return text[4:] if text.startswith('raid') else text


def uint(value):
    """A non-negative integer given as int or digits; None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and re.fullmatch(r'[0-9]+', value):
        return int(value)
    return None


def name_problem(name):
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        return 'must be 1-32 letters, digits, _, . or -'
    return None


def chunk_problem(chunk, level=None):
    """A chunk size (KiB) for ``level``: RAID1 has none; else a power of two from 4 to 65536."""
    if level == '1':
        return 'RAID1 has no chunk size; remove it'
    value = uint(chunk)
    if value is None or value < 4 or value > CHUNK_KB_MAX or value & (value - 1):
        return 'must be a power of two between 4 and %d (KiB)' % CHUNK_KB_MAX
    return None


def layout_copies(layout):
    """Copies kept by a RAID10 layout (``n2`` -> 2); None when it is no RAID10 layout."""
    match = _LAYOUT_RE.fullmatch(layout or 'n2') if isinstance(layout or 'n2', str) else None
    return int(match.group(2)) if match else None


def layout_problem(level, layout):
    if layout is None:
        return None
    if level in ('0', '1'):
        return 'only RAID10 (and RAID5/6) has a layout; remove it'
    if level == '10':
        copies = layout_copies(layout)
        if copies is None:
            return 'must be a RAID10 layout: n2, f2 or o2 (near, far, offset; n3 ... keep more copies)'
        if copies < 2:
            return 'keeps a single copy; RAID10 needs at least 2'
    return None


def member_count_problem(level, count, layout=None):
    """Whether ``count`` members make a ``level`` array (RAID10: a multiple of the layout's copies)."""
    if level == '10':
        copies = layout_copies(layout) or 2
        if count < copies or count % copies:
            if copies == 2:
                return 'RAID10 (two copies) needs an even number of members (2, 4, ...), got %d' % count
            return 'RAID10 with layout %s (%d copies) needs a multiple of %d members, got %d' % (
                layout, copies, copies, count)
    elif level in MIN_MEMBERS and count < MIN_MEMBERS[level]:
        return 'RAID%s needs at least %d members, got %d' % (level, MIN_MEMBERS[level], count)
    return None


def array_differences(array, level, chunk_kb, want_knames):
    """How a running array differs from a request, as a list of problems (empty: it matches).

    ``array``: ``level``, ``chunk_kb``, ``raid_disks``, ``status``, ``degraded`` and ``members``
    (kernel names, or dicts with ``kname``). A degraded array missing requested members matches;
    an inactive one is not compared by members.
    """
    problems = []
    if level is not None and level_number(array.get('level') or '') != level:
        problems.append('level is %s, requested RAID%s' % (array.get('level'), level))
    if chunk_kb and array.get('chunk_kb') and array['chunk_kb'] != chunk_kb:
        problems.append('chunk is %d KiB, requested %d KiB' % (array['chunk_kb'], chunk_kb))
    current = [m['kname'] if isinstance(m, dict) else m for m in array.get('members') or []]
    inactive = array.get('status') == 'inactive'
    if array.get('raid_disks') is not None and not inactive and array['raid_disks'] != len(want_knames):
        problems.append('it has %d RAID slots, requested %d members (%s)' % (
            array['raid_disks'], len(want_knames), ', '.join(want_knames)))
    elif set(current) != set(want_knames) and not inactive:
        if not (set(current) < set(want_knames) and (array.get('degraded') or 0) > 0):
            problems.append('members are %s, requested %s' % (', '.join(sorted(current)), ', '.join(want_knames)))
    return problems


def bitmap_problem(level, bitmap):
    """A write-intent bitmap request for ``level`` (None: not managed)."""
    if bitmap is None:
        return None
    if bitmap not in ('internal', 'none'):
        return 'must be internal, none or null (not managed)'
    if level == '0' and bitmap == 'internal':
        return 'RAID0 keeps no redundancy, so a write-intent bitmap has nothing to resync; remove it'
    return None


def sync_speed_problem(value):
    """An array's resync speed limit: KiB/s (a positive whole number, as a string) or ``system`` (None: leave it)."""
    if value is None or value == 'system' or (uint(value) is not None and uint(value) > 0):
        return None
    return 'must be a positive whole number of KiB/s or system'


def array_tuning(array, bitmap, sync_speed_max):
    """What to set on a running ``array`` (md.array_status): ``bitmap`` (the value to give ``mdadm --grow``, or
    None), ``bitmap_busy`` (it differs, but the array resyncs or recovers: the kernel refuses the change now) and
    ``sync_speed_max`` (the value to write, or None). An attribute the kernel does not show is left alone."""
    out = {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': None}
    if bitmap is not None and array.get('bitmap') is not None and array['bitmap'] != bitmap:
        if array.get('status') in BUSY_STATUSES:
            out['bitmap_busy'] = True
        else:
            out['bitmap'] = bitmap
    current, local = array.get('sync_speed_max_kb'), array.get('sync_speed_max_local')
    if sync_speed_max is not None and local is not None:
        if sync_speed_max == 'system' and local:
            out['sync_speed_max'] = 'system'
        elif sync_speed_max != 'system' and not (local and current == uint(sync_speed_max)):
            out['sync_speed_max'] = '%d' % uint(sync_speed_max)
    return out


def duration_seconds(duration):
    """``3 hours`` / ``90 minutes`` (md_raid_xfs_check_duration) -> seconds; None when it reads otherwise."""
    match = re.fullmatch(r'([1-9][0-9]*) (minute|hour)s?', duration or '') if isinstance(duration, str) else None
    return int(match.group(1)) * (60 if match.group(2) == 'minute' else 3600) if match else None


# ---------------------------------------------------------------- role: input

def _json(value):
    return json.dumps(value, default=str)


def _is_list(value):
    return isinstance(value, (list, tuple))


def _bool(value):
    return boolean(value, strict=False)


def _array_errors(index, a, seen):
    out = []
    v = 'md_raid_xfs_arrays[%d]' % index + (' (%s)' % (a['name'],) if 'name' in a else '')
    for key in a:
        if key not in ARRAY_KEYS:
            out.append('%s: unknown key %s (known: %s)' % (v, _json(key), ', '.join(ARRAY_KEYS)))
    name = a.get('name', '')
    problem = name_problem(name)
    if problem:
        out.append('%s.name = %s: %s' % (v, _json(name), problem))
    elif name in seen['names']:
        out.append('%s.name = %s: duplicate array name' % (v, _json(name)))
    seen['names'].append(name)
    level = level_number(a.get('level'))
    if level not in ROLE_LEVELS:
        out.append('%s.level = %s: must be 0, 1 or 10' % (v, _json(a.get('level'))))
    devices = a.get('devices')
    if not _is_list(devices):
        out.append('%s.devices = %s: must be a list of member device paths' % (v, _json(devices)))
    else:
        for i, d in enumerate(devices):
            if not isinstance(d, str) or not re.fullmatch(r'/dev/[^\s]+', d):
                out.append('%s.devices[%d] = %s: must be a device path under /dev/ (use /dev/disk/by-id/...)' % (
                    v, i, _json(d)))
            elif d in seen['devices']:
                out.append('%s.devices[%d] = %s: duplicate member (already listed in %s)' % (
                    v, i, _json(d), seen['devices'][d]))
            else:
                seen['devices'][d] = 'md_raid_xfs_arrays[%s]' % (name,)
        if level in ROLE_LEVELS:
            problem = member_count_problem(level, len(devices), a.get('layout') if level == '10' else None)
            if problem:
                out.append('%s.devices: %s: %s' % (v, problem, ', '.join('%s' % (d,) for d in devices)))
    if 'chunk_kb' in a:
        problem = chunk_problem(a['chunk_kb'], level)
        if problem:
            out.append('%s.chunk_kb = %s: %s' % (v, _json(a['chunk_kb']), problem))
    if 'layout' in a and level in ROLE_LEVELS:
        problem = layout_problem(level, a['layout'])
        if problem:
            out.append('%s.layout = %s: %s' % (v, _json(a['layout']), problem))
    problem = bitmap_problem(level, a.get('bitmap'))
    if problem:
        out.append('%s.bitmap = %s: %s' % (v, _json(a['bitmap']), problem))
    mount = a.get('mount')
    if mount is not None:
        if not isinstance(mount, str) or not MOUNT_RE.fullmatch(mount) or mount in RESERVED_MOUNTS:
            out.append('%s.mount = %s: must be an absolute path without blanks or a trailing /, and not a system '
                       'directory' % (v, _json(mount)))
        elif mount in seen['mounts']:
            out.append('%s.mount = %s: used by another array' % (v, _json(mount)))
        seen['mounts'].append(mount)
    if 'mount_opts' in a:
        out.extend(mount_options_errors(a['mount_opts'], v + '.mount_opts'))
    ra = a.get('read_ahead_kb')
    if ra is not None and (uint(ra) is None or uint(ra) % 4):
        out.append('%s.read_ahead_kb = %s: must be a non-negative integer multiple of 4 (KiB) or null' % (v, _json(ra)))
    return out


def mount_options_errors(value, name):
    """'<name> = "<value>": <problem>' for each problem of a mount option string (the xfs_mount rule)."""
    shown = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
    return ['%s = %s: %s' % (name, shown, problem) for problem in option_errors(value, fstype='xfs')]


def input_errors(settings):
    """Problems of the role's variables alone (no host): list of messages, empty when valid."""
    s = settings
    out = []
    arrays = s.get('md_raid_xfs_arrays')
    if not _is_list(arrays):
        out.append('md_raid_xfs_arrays = %s: must be a list of arrays' % _json(arrays))
    else:
        seen = {'names': [], 'mounts': [], 'devices': {}}
        for index, a in enumerate(arrays):
            if not isinstance(a, dict):
                out.append('md_raid_xfs_arrays[%d] = %s: must be a mapping (name, level, devices, ...)' % (index, _json(a)))
            else:
                out.extend(_array_errors(index, a, seen))
    # Booleans as Ansible converts them: -e md_raid_xfs_force=true arrives as the string "true".
    for var in ('md_raid_xfs_force', 'md_raid_xfs_update_initramfs', 'md_raid_xfs_fstrim_timer'):
        if not is_boolean(s.get(var)):
            out.append('%s = %s: must be a boolean (true/false, yes/no, on/off, 1/0)' % (var, _json(s.get(var))))
    out.extend(mount_options_errors(s.get('md_raid_xfs_mount_opts'), 'md_raid_xfs_mount_opts'))
    conf = s.get('md_raid_xfs_mdadm_conf')
    if not isinstance(conf, str) or not re.fullmatch(r'/[^\s]+', conf):
        out.append('md_raid_xfs_mdadm_conf = %s: must be an absolute path' % _json(conf))
    limits = {}
    for var in ('md_raid_xfs_speed_limit_min', 'md_raid_xfs_speed_limit_max'):
        value = s.get(var)
        if value is not None and (uint(value) is None or uint(value) < 1):
            out.append('%s = %s: must be a positive integer (KiB/s) or null' % (var, _json(value)))
        elif value is not None:
            limits[var] = uint(value)
    if len(limits) == 2 and limits['md_raid_xfs_speed_limit_min'] > limits['md_raid_xfs_speed_limit_max']:
        out.append('md_raid_xfs_speed_limit_min = %d is above md_raid_xfs_speed_limit_max = %d' % (
            limits['md_raid_xfs_speed_limit_min'], limits['md_raid_xfs_speed_limit_max']))
    sysctl_file = s.get('md_raid_xfs_sysctl_file')
    if not isinstance(sysctl_file, str) or not re.fullmatch(r'/etc/sysctl\.d/[\w.@+-]+\.conf', sysctl_file):
        out.append('md_raid_xfs_sysctl_file = %s: must be a .conf file directly in /etc/sysctl.d/' % _json(sysctl_file))
    rules = s.get('md_raid_xfs_readahead_rules_file')
    if not isinstance(rules, str) or not re.fullmatch(r'/etc/udev/rules\.d/[\w.@+-]+\.rules', rules):
        out.append('md_raid_xfs_readahead_rules_file = %s: must be a .rules file directly in /etc/udev/rules.d/' % _json(rules))
    policy = s.get('md_raid_xfs_check_policy')
    if policy not in ('unmanaged', 'disabled', 'window'):
        out.append('md_raid_xfs_check_policy = %s: must be unmanaged, disabled or window' % _json(policy))
    elif policy == 'window':
        for var in ('md_raid_xfs_check_start', 'md_raid_xfs_check_continue'):
            value = s.get(var)
            if not isinstance(value, str) or not re.fullmatch(r'[^\n\'"]+', value):
                out.append('%s = %s: must be a systemd calendar expression (OnCalendar=)' % (var, _json(value)))
        duration = s.get('md_raid_xfs_check_duration')
        if duration_seconds(duration) is None:
            out.append('md_raid_xfs_check_duration = %s: must read "<n> minutes" or "<n> hours"' % _json(duration))
    boot_timeout = s.get('md_raid_xfs_boot_timeout')
    if uint(boot_timeout) is None or not 1 <= uint(boot_timeout) <= 3600:
        out.append('md_raid_xfs_boot_timeout = %s: must be a number of seconds from 1 to 3600' % _json(boot_timeout))
    throttle = s.get('md_raid_xfs_resync_speed_outside_window')
    if throttle is not None:
        if uint(throttle) is None or uint(throttle) < 1:
            out.append('md_raid_xfs_resync_speed_outside_window = %s: must be a positive integer (KiB/s) or null'
                       % _json(throttle))
        elif policy != 'window':
            out.append('md_raid_xfs_resync_speed_outside_window = %s: needs md_raid_xfs_check_policy: window (the '
                       'maintenance window it is lifted in), got %s' % (_json(throttle), _json(policy)))
    return out


# Keeps the arrays' mounts before local-fs.target, where a mount without nofail sits: what starts after it (the
# IRQ pinning, the container engine, sshd) still starts after the arrays, or after the device timeout.
BOOT_ORDER = 'x-systemd.before=local-fs.target'


def boot_options(mount_opts, boot_timeout):
    """The fstab options of an array's filesystem: its mount options, then ``nofail``, how long the boot waits
    for the array (``x-systemd.device-timeout=``) and ``x-systemd.before=local-fs.target`` - each unless the
    mount options name it themselves.

    Why: without ``nofail`` an array that does not assemble in time (a dead RAID0 member, a slow start) fails
    local-fs.target and the node boots into emergency mode - no network, no SSH, no health report, only the
    console. ``nofail`` alone would also drop the mount's ordering before local-fs.target, and with it what
    everything started after local-fs.target relies on: the drives have appeared and the arrays are mounted
    (the IRQ pinning of the drives found none in the lab). With the order kept, the boot waits for the array as
    before, up to ``boot_timeout`` seconds, and then goes on without it; what serves from it waits for the
    mount (triton_compose's engine drop-in) instead of serving an empty mount point."""
    opts = [o for o in (mount_opts or '').split(',') if o]
    names = [o.split('=', 1)[0] for o in opts]
    if 'nofail' not in names:
        opts.append('nofail')
    if 'x-systemd.device-timeout' not in names and uint(boot_timeout) is not None:
        opts.append('x-systemd.device-timeout=%ds' % uint(boot_timeout))
    if BOOT_ORDER not in opts:
        opts.append(BOOT_ORDER)
    return ','.join(opts)


def want(settings):
    """``md_raid_xfs_arrays`` with defaults applied and the XFS stripe geometry derived.

    Only well-formed entries are normalised (``input_errors`` reports the rest). Each entry also
    carries ``mdadm`` (its entry for the module mdadm_array) and ``info`` (its request for md_info).
    """
    arrays = settings.get('md_raid_xfs_arrays')
    out = []
    for a in arrays if _is_list(arrays) else []:
        if not isinstance(a, dict):
            continue
        level = level_number(a.get('level', '')) or ''
        devices = list(a['devices']) if _is_list(a.get('devices')) else []
        chunk = a.get('chunk_kb', 512) if level != '1' else None
        layout = a.get('layout', 'n2') if level == '10' else None
        n = len(devices)
        data_disks = n if level == '0' else (n // 2 if level == '10' else 1)
        stripe = level in ('0', '10') and chunk is not None and uint(chunk) is not None
        name = '%s' % (a.get('name', ''),)
        readahead = {'device': '/dev/md/%s' % name}
        if a.get('read_ahead_kb') is not None:
            readahead['read_ahead_kb'] = uint(a['read_ahead_kb'])
        mdadm = {'name': name, 'level': level, 'devices': devices}
        if a.get('bitmap') is not None:
            mdadm['bitmap'] = a['bitmap']
        if stripe:
            mdadm['chunk_kb'] = uint(chunk)
        if layout is not None:
            mdadm['layout'] = layout
        mount_opts = a.get('mount_opts', settings.get('md_raid_xfs_mount_opts'))
        out.append({
            'name': name, 'level': level, 'devices': devices, 'bitmap': a.get('bitmap'),
            'chunk_kb': uint(chunk) if stripe else None, 'layout': layout,
            'mount': a.get('mount'), 'mount_opts': mount_opts,
            'fstab_opts': boot_options(mount_opts, settings.get('md_raid_xfs_boot_timeout')),
            'read_ahead_kb': a.get('read_ahead_kb'), 'data_disks': data_disks,
            'mkfs_opts': '-d su=%dk,sw=%d' % (uint(chunk), data_disks) if stripe else '',
            'readahead': readahead, 'mdadm': mdadm,
            'info': {'name': name, 'devices': devices, 'mount': a.get('mount')},
        })
    return out


# ---------------------------------------------------------------- role: host

def _foreign(blkid):
    """The array holds something that is not XFS (a filesystem or a partition table)."""
    fstype = blkid.get('TYPE', '')
    return fstype not in ('', 'xfs') or (fstype == '' and blkid.get('PTTYPE', '') != '')


def host_errors(info, settings):
    """The wanted arrays against the host as ``md_info`` read it: list of messages (nothing changed yet)."""
    out = []
    force = _bool(settings.get('md_raid_xfs_force'))
    knames = {}
    for a in want(settings):
        v = 'md_raid_xfs_arrays[%s]' % a['name']
        arr = info['arrays'].get(a['name']) or {'exists': False, 'kname': None, 'blkid': {}}
        for path in a['devices']:
            m = info['members'][path]
            if m['usage'] in ('missing', 'invalid', 'busy'):
                shown = ' (%s)' % m['device'] if m['device'] and m['device'] != path else ''
                out.append('%s.devices: %s%s %s' % (v, path, shown, m['detail']))
            elif m['usage'] == 'data' and not force:
                out.append('%s.devices: %s (%s) %s; refusing to overwrite it%s' % (v, path, m['device'], m['detail'],
                                                                                   FORCE_HINT))
            if m['kname'] and m['kname'] in knames and knames[m['kname']] != path:
                out.append('%s.devices: %s is %s, the same device as %s (duplicate member)' % (
                    v, path, m['device'], knames[m['kname']]))
            elif m['kname']:
                knames[m['kname']] = path
        if arr['exists'] and arr['kname']:
            want_knames = [info['members'][p]['kname'] for p in a['devices'] if info['members'][p]['kname']]
            problems = array_differences(arr, a['level'], a['chunk_kb'], want_knames)
            if problems:
                out.append('%s: %s (%s) exists and differs: %s. Arrays are never re-created; fix the variable or the '
                           'array by hand' % (v, arr['device'], arr['kname'], '; '.join(problems)))
            blkid = arr.get('blkid') or {}
            if a['mount'] is not None and _foreign(blkid) and not force:
                what = ('a filesystem (%s)' % blkid['TYPE']) if blkid.get('TYPE') else (
                    'a partition table (%s)' % blkid.get('PTTYPE'))
                out.append('%s: %s (%s) holds %s, not XFS; refusing to overwrite it%s' % (
                    v, arr['device'], arr['kname'], what, FORCE_HINT))
        if a['mount'] is not None and a['mount'] in info['mounts']:
            live = info['mounts'][a['mount']]
            src = live['source']
            if not arr.get('kname') or (os.path.basename(src) != arr['kname'] and src != arr.get('device')):
                out.append('%s.mount = %s: already mounted from %s (%s); unmount it first' % (
                    v, a['mount'], src, live['fstype']))
    if settings.get('md_raid_xfs_check_policy') == 'window':
        for var in ('md_raid_xfs_check_start', 'md_raid_xfs_check_continue'):
            if not info['calendars'].get(settings.get(var)):
                out.append('%s = %s: systemd-analyze calendar rejects it' % (var, _json(settings.get(var))))
        if not info['mdcheck']:
            out.append('md_raid_xfs_check_policy = window: /usr/share/mdadm/mdcheck is missing on this host')
    return out


def resync_window_open(units):
    """Whether the resync window's service runs (md_info's ``units``): then the arrays follow the system limit."""
    return (units.get(RESYNC_WINDOW_SERVICE) or {}).get('active') in ('active', 'activating')


def resync_throttle(settings):
    """md_raid_xfs_resync_speed_outside_window as KiB/s, None when unset (or invalid: input_errors says so)."""
    value = settings.get('md_raid_xfs_resync_speed_outside_window')
    return uint(value) if value is not None and uint(value) else None


def limits(settings):
    """The resync speed limits to set as kernel parameters (``dev.raid.speed_limit_min`` ...), unset ones left out."""
    return dict(('dev.raid.' + key, uint(settings.get('md_raid_xfs_' + key))) for key in ('speed_limit_min', 'speed_limit_max')
                if settings.get('md_raid_xfs_' + key) is not None)


def plan(info, settings):
    """What of the systemd timers, the resync speed limits and Debian's monthly check differs on the host,
    so that each task runs only for that (the role's files are installed by ``template``, idempotent itself).

    Returns ``mask`` / ``start`` / ``stop`` (units), ``reset_failed`` (the distribution's timers left failed: systemd
    257, Debian 13, fails a timer masked while it runs - 'Unit to trigger vanished' - and lists it in
    ``systemctl --failed`` until reset), ``limits`` (the resync speed limits as kernel parameters,
    ``{'dev.raid.speed_limit_min': n}``, for the drop-in), ``set_now`` (those of them the kernel does not hold
    now, as ``md_info`` read them, for the module ``sysctl_runtime``: none on a converged host, so it does not
    run), ``autocheck`` (Debian's monthly check to turn off), ``stop_resync_window`` (the resync window's units to
    stop and disable, left from an earlier throttle), ``resync_window`` (``throttle`` KiB/s or None, the window's
    ``seconds``, the role's redundant ``arrays`` by name: what its files say) and ``mdadm`` (the module mdadm_array's
    entries: ``want``'s, with ``sync_speed_max`` - the throttle, V(system) without one, None while the window is
    open - for the redundant levels).
    """
    units = info['units']
    masked = [u for u in units if units[u]['enabled'] == 'masked']
    running = [u for u in units if units[u]['enabled'] == 'enabled' and units[u]['active'] == 'active']
    present = [u for u in units if units[u]['enabled'] not in ('not-found', 'masked', '')]
    policy = settings.get('md_raid_xfs_check_policy')
    throttle = resync_throttle(settings)
    timers = (['fstrim.timer'] if _bool(settings.get('md_raid_xfs_fstrim_timer')) else []) + (
        WINDOW_TIMERS if policy == 'window' else []) + ([RESYNC_WINDOW_TIMER] if throttle else [])
    # Outside the window the arrays are held to the throttle now; while the window's service runs, its own
    # start lifted it (left alone); without a throttle the role's arrays follow the system limit again.
    speed = None if resync_window_open(units) else ('%d' % throttle if throttle else 'system')
    arrays = want(settings)
    return {
        'mask': [u for u in DISTRO_TIMERS if u not in masked] if policy in ('disabled', 'window') else [],
        'reset_failed': [u for u in DISTRO_TIMERS if units.get(u, {}).get('active') == 'failed']
        if policy in ('disabled', 'window') else [],
        'start': [u for u in timers if u not in running],
        'stop': [u for u in WINDOW_TIMERS if u in present] if policy != 'window' else [],
        'stop_resync_window': [u for u in (RESYNC_WINDOW_TIMER, RESYNC_WINDOW_SERVICE) if u in present and not throttle],
        'resync_window': {'throttle': throttle, 'seconds': duration_seconds(settings.get('md_raid_xfs_check_duration')),
                          'arrays': [a['name'] for a in arrays if a['level'] != '0']},
        'mdadm': [dict(a['mdadm'], sync_speed_max=speed) if a['level'] != '0' else a['mdadm'] for a in arrays],
        'limits': limits(settings),
        'set_now': dict((key, value) for key, value in limits(settings).items()
                        if (info.get('sysctl') or {}).get(key[len('dev.raid.'):]) != value),
        'autocheck': policy in ('disabled', 'window') and info.get('autocheck') != 'false',
    }


def _md_results(md_result):
    return (md_result or {}).get('arrays') or []


def filesystems(info, settings, md_result=None, check_mode=False):
    """Per wanted array: filesystem and mount decisions from the latest ``md_info`` result and the
    ``mdadm_array`` result. ``xfs_mount`` is the entry for the module xfs_mount (null: no mount point,
    or no filesystem yet outside check mode)."""
    force = _bool(settings.get('md_raid_xfs_force'))
    results = _md_results(md_result)
    out = []
    for index, a in enumerate(want(settings)):
        md = (results[index] if index < len(results) else {}).get('array') or {}
        s = info['arrays'].get(a['name']) or {'exists': False, 'blkid': {}, 'kname': None}
        planned = not s['exists']
        blkid = s.get('blkid') or {}
        fstype, pttype = blkid.get('TYPE', ''), blkid.get('PTTYPE', '')
        foreign = a['mount'] is not None and _foreign(blkid)
        uuid = blkid.get('UUID') if fstype == 'xfs' else None
        live = info['mounts'].get(a['mount']) if a['mount'] is not None else None
        kname = s.get('kname')
        mounted = live is not None and kname is not None and (
            os.path.basename(live['source']) == kname or live['source'] == s.get('device'))
        cmp = compare(a['mount_opts'], live['options'] if mounted else [])
        fstab_want = ['UUID=%s' % uuid, a['mount'], 'xfs', a['fstab_opts'], '0', '0']
        fstab_ok = uuid is not None and info['fstab'].get(a['mount']) == fstab_want
        xfs_mount = None
        if a['mount'] is not None and (uuid is not None or check_mode):
            xfs_mount = {'path': a['mount'], 'src': 'UUID=%s' % (uuid or '(assigned-by-mkfs.xfs)'), 'opts': a['fstab_opts']}
        out.append({
            'name': a['name'], 'device': '/dev/md/%s' % a['name'], 'kname': kname, 'planned': planned,
            'status': md.get('status') or s.get('status') or 'absent',
            'fstype': fstype, 'pttype': pttype, 'foreign': foreign, 'uuid': uuid,
            'mount': a['mount'], 'mount_opts': a['mount_opts'], 'mkfs_opts': a['mkfs_opts'],
            'needs_mkfs': a['mount'] is not None and not planned and fstype != 'xfs' and (not foreign or force),
            'force_mkfs': foreign and force, 'mounted': mounted, 'fstab_ok': fstab_ok, 'xfs_mount': xfs_mount,
            'missing_opts': cmp['missing'], 'pending_opts': cmp['pending'],
            'live_opts': live['options'] if mounted else [], 'readahead': a['readahead'],
        })
    return out


def report(fs, info, md_result=None):
    """One entry per array for the ``md_raid_xfs_report`` fact: the mdadm_array result merged with the
    filesystem/mount state, and a one-line ``summary``."""
    results = _md_results(md_result)
    out = []
    for index, f in enumerate(fs):
        md = (results[index] if index < len(results) else {}).get('array') or {}
        arr = info['arrays'].get(f['name']) or {}
        status = md.get('status', 'absent')
        text = '%s: %s%s %s %s' % (f['name'], f['device'], ' (%s)' % f['kname'] if f['kname'] else '',
                                   md.get('level') or '?', status.upper() if status in ('degraded', 'inactive') else status)
        if md.get('missing_members'):
            text += ' missing %s' % ', '.join(md['missing_members'])
        if md.get('sync_percent') is not None:
            text += ' sync %s%%' % md['sync_percent']
        if f['mount']:
            text += ', %s%s' % (f['fstype'] or 'no filesystem', ' %s' % f['uuid'] if f['uuid'] else '')
            text += ', mounted at %s' % f['mount'] if f['mounted'] else ', NOT mounted at %s' % f['mount']
        if f['pending_opts']:
            text += ', options pending until the next mount: %s' % ','.join(f['pending_opts'])
        if arr.get('read_ahead_kb') is not None:
            text += ', read_ahead_kb %s' % arr['read_ahead_kb']
        entry = dict(f)
        entry.update({
            'level': md.get('level'), 'status': status, 'uuid_md': md.get('uuid'), 'members': md.get('members', []),
            'missing_members': md.get('missing_members', []), 'degraded': md.get('degraded'),
            'sync_percent': md.get('sync_percent'), 'read_ahead_kb': arr.get('read_ahead_kb'), 'summary': text,
        })
        out.append(entry)
    return out
