# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of the local storage: md arrays (present, healthy, level/chunk/members by serial, their ARRAY
line in mdadm.conf and its initramfs copy, read-ahead),
their mounts, mount options, XFS stripe geometry, file types and free space (on ``md_info``), the NVMe queues of
the nvme_sched role (on ``nvme_info``) and the fstrim timer. The NVMe queues and the fstrim timer are judged on
the hosts of the local_nvme group only (the other checks follow md_raid_xfs_arrays, empty elsewhere). The wanted
values are the roles' own: ``md_raid_plan.want`` over the md_raid_xfs variables, ``nvme_queue.select``/``drift``
over the nvme_sched variables, ``mount_options.compare``."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev, md_raid_plan, mount_options, nvme_queue
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, read, require_group
from ansible_collections.inferops.node.plugins.module_utils.audit.nvme import drive

# What the md/XFS checks compare with: the md_raid_xfs role's arrays, mount options, boot and maintenance settings.
MD_VARIABLES = (
    'md_raid_xfs_arrays',
    'md_raid_xfs_mount_opts',
    'md_raid_xfs_update_initramfs',
    'md_raid_xfs_resync_speed_outside_window',
    'md_raid_xfs_fstrim_timer',
)
# What the NVMe queue check compares with: the nvme_sched role's settings and selection.
SCHED_VARIABLES = (
    'nvme_sched_scheduler',
    'nvme_sched_read_ahead_kb',
    'nvme_sched_nr_requests',
    'nvme_sched_models',
    'nvme_sched_serials',
)

__all__ = ['CHECKS']

FIX_MD = 'role md_raid_xfs (tag md_raid_xfs)'
# A rebuild loads the surviving members for hours: the operator picks the window.
FIX_MD_HEALTH = ('replace the failed drive, then add it by hand in a rebuild window: mdadm --manage <array> --add <drive> '
                 '(md_raid_xfs reports a degraded array, it never adds members)')
# The group playbooks/local_nvme.yml runs nvme_sched and md_raid_xfs on (playbooks/vars/site_roles.yml). Their
# defaults hold on every host, so a check that judges a host by a default alone runs on this group only - an
# NVMe-oF initiator's namespaces at its role's 4096 KiB are no nvme_sched drift from 2048.
LOCAL_NVME = 'local_nvme'


def _arrays(expected):
    return md_raid_plan.want({'md_raid_xfs_arrays': expected.get('md_raid_xfs_arrays') or [],
                              'md_raid_xfs_mount_opts': expected.get('md_raid_xfs_mount_opts')})


def _subject(want):
    return '/dev/md/%s' % want['name']


def _running(check, info, expected, results, mounted=False):
    """``(want, found)`` of every array of md_raid_xfs_arrays that runs (with a mount point when ``mounted``); a
    SKIP in ``results`` for one that does not (storage.md_present reports it)."""
    arrays = info.get('arrays') or {}
    for want in _arrays(expected):
        if mounted and not want['mount']:
            continue
        found = arrays.get(want['name']) or {}
        if found.get('exists'):
            yield want, found
        else:
            results.append(check.skip('array does not run (storage.md_present)',
                                      subject=want['mount'] if mounted else _subject(want)))


@Check('storage.md_present', 'Every array of md_raid_xfs_arrays runs', 'critical', '/proc/mdstat, mdadm --detail', FIX_MD, variables=MD_VARIABLES)
def md_present(check, reads, expected):
    arrays = read(reads, 'md_info', 'arrays')
    results = []
    for want in _arrays(expected):
        found = arrays.get(want['name']) or {}
        observed = found.get('kname') if found.get('exists') else None
        if observed:
            results.append(check.passed(_subject(want), 'running', '%s (%s)' % (observed, found.get('status'))))
        else:
            results.append(check.fail(_subject(want), 'running', 'absent', 'array %s does not run' % want['name']))
    return results


@Check('storage.md_health', 'Array clean: not degraded, no faulty member', 'critical',
       '/sys/block/<md>/md/{degraded,array_state,sync_action}, mdadm --detail',
       FIX_MD_HEALTH, variables=MD_VARIABLES)
def md_health(check, reads, expected):
    results = []
    for want, found in _running(check, read(reads, 'md_info'), expected, results):
        status = found.get('status')
        observed = {'status': status, 'degraded': found.get('degraded'), 'failed': found.get('failed'),
                    'sync_action': found.get('sync_action'), 'sync_percent': found.get('sync_percent')}
        if status in ('degraded', 'inactive') or found.get('degraded') or found.get('failed'):
            results.append(check.fail(_subject(want), 'clean', observed, '%s: %s' % (want['name'], found.get('summary'))))
        elif status in md_raid_plan.BUSY_STATUSES:
            results.append(check.warn(_subject(want), 'clean', observed, '%s %s %s%%' % (
                want['name'], status, found.get('sync_percent'))))
        else:
            results.append(check.passed(_subject(want), 'clean', observed))
    return results


@Check('storage.md_layout', 'Array level, chunk and members (by serial) as md_raid_xfs_arrays', 'major',
       'mdadm --detail --export, /dev/disk/by-id', FIX_MD + ' - a different layout needs a rebuild', variables=MD_VARIABLES)
def md_layout(check, reads, expected):
    info = read(reads, 'md_info')
    members = info.get('members') or {}
    results = []
    for want, found in _running(check, info, expected, results):
        # The requested paths as md_info resolved them: kernel names for the rule, serials for people.
        want_knames = [(members.get(path) or {}).get('kname') or path for path in want['devices']]
        want_serials = [(members.get(path) or {}).get('serial') or path for path in want['devices']]
        problems = md_raid_plan.array_differences(found, want['level'], want['chunk_kb'], want_knames)
        lost = [(members.get(path) or {}).get('serial') or path for path in want['devices']
                if (members.get(path) or {}).get('array') != want['name'] or (members.get(path) or {}).get('role') in
                (None, 'faulty', 'spare')]
        if lost:
            problems.append('not an active member: %s' % ', '.join(lost))
        observed = {'level': found.get('level'), 'chunk_kb': found.get('chunk_kb'),
                    'members': sorted(m.get('serial') or m.get('kname') for m in found.get('members') or [])}
        wanted = {'level': 'raid%s' % want['level'], 'chunk_kb': want['chunk_kb'], 'members': sorted(want_serials)}
        if problems:
            results.append(check.fail(_subject(want), wanted, observed, '; '.join(problems)))
        else:
            results.append(check.passed(_subject(want), wanted, observed))
    return results


@Check('storage.md_conf', 'mdadm.conf names every array by its UUID, and the initramfs was built after it', 'major',
       'mdadm.conf ARRAY lines, the mtimes of mdadm.conf and /boot/initrd.img-<kernel> (md_info)',
       FIX_MD + ': it writes the ARRAY line and runs update-initramfs -u', variables=MD_VARIABLES)
def md_conf(check, reads, expected):
    """The configuration the next boot assembles the arrays by: without its ARRAY line (or with an initramfs
    older than mdadm.conf, whose copy the early boot reads) an array may come up as md127, not /dev/md/<name>,
    and its mount fails. The initramfs is compared by time, not unpacked: a newer initramfs was built from the
    mdadm.conf of its time."""
    info = read(reads, 'md_info')
    conf_arrays = read(reads, 'md_info', 'conf_arrays')
    initramfs = info.get('initramfs') or {}
    path = initramfs.get('conf') or '/etc/mdadm/mdadm.conf'
    judge_initramfs = expected.get('md_raid_xfs_update_initramfs', True) not in (False, 'false', 'no', 0)
    results = []
    for want, found in _running(check, info, expected, results):
        device, uuid = _subject(want), (found.get('uuid') or '').lower()
        wanted = 'ARRAY %s UUID=%s' % (device, found.get('uuid'))
        lines = [a for a in conf_arrays if (a.get('uuid') or '').lower() == uuid]
        if not lines:
            results.append(check.fail(device, wanted, None, 'no ARRAY line for UUID %s in %s: the next boot may assemble '
                                      'the array under another name (md127) and its mount fail' % (found.get('uuid'), path)))
        elif lines[0].get('device') not in (device, want['name']):
            observed = 'ARRAY %s UUID=%s' % (lines[0].get('device'), lines[0].get('uuid'))
            results.append(check.fail(device, wanted, observed, 'the ARRAY line for UUID %s in %s names %s'
                                      % (found.get('uuid'), path, lines[0].get('device'))))
        elif (judge_initramfs and initramfs.get('initrd_mtime') is not None and initramfs.get('conf_mtime') is not None
              and initramfs['initrd_mtime'] < initramfs['conf_mtime']):
            results.append(check.fail(device, wanted, 'initramfs older than %s' % path,
                                      '%s changed after %s was built: the early boot assembles from the older copy'
                                      % (path, initramfs.get('initrd'))))
        else:
            results.append(check.passed(device, wanted, 'ARRAY %s UUID=%s' % (lines[0].get('device'), lines[0].get('uuid'))))
    return results


@Check('storage.mount', 'Array filesystem mounted with the role\'s options', 'critical',
       'findmnt -J -l -o TARGET,SOURCE,FSTYPE,OPTIONS', FIX_MD + ' (remount; logbufs/logbsize at the next mount)', variables=MD_VARIABLES)
def mount(check, reads, expected):
    info = read(reads, 'md_info')
    mounts = info.get('mounts') or {}
    results = []
    for want, found in _running(check, info, expected, results, mounted=True):
        subject = want['mount']
        live = mounts.get(want['mount'])
        if want['mount'] not in (found.get('mounted_at') or []) or not live:
            results.append(check.fail(subject, {'device': _subject(want), 'options': want['mount_opts']},
                                      {'mounted_at': found.get('mounted_at'), 'top': live},
                                      '%s is not mounted at %s' % (_subject(want), want['mount'])))
            continue
        diff = mount_options.compare(want['mount_opts'], live.get('options'))
        observed = ','.join(live.get('options') or [])
        if diff['missing']:
            results.append(check.fail(subject, want['mount_opts'], observed, 'options missing: %s (%s)' % (
                ','.join(diff['missing']), 'remount applies %s' % ','.join(diff['remount']) if diff['remount']
                else 'applied at the next mount')))
        else:
            results.append(check.passed(subject, want['mount_opts'], observed))
    return results


@Check('storage.xfs_stripe', 'XFS stripe unit and width match the array (chunk, data disks)', 'major',
       'findmnt -J -l -o TARGET,SOURCE,FSTYPE,OPTIONS (sunit, swidth in 512-byte sectors)',
       'role md_raid_xfs creates XFS with -d su=<chunk>k,sw=<data disks>; an existing filesystem is kept: '
       'recreate it (data loss) or accept it', variables=MD_VARIABLES)
def xfs_stripe(check, reads, expected):
    info = read(reads, 'md_info')
    mounts = info.get('mounts') or {}
    results = []
    for want, dummy in _running(check, info, expected, results, mounted=True):
        live = mounts.get(want['mount']) or {}
        if not want['chunk_kb']:
            results.append(check.skip('RAID%s has no stripe' % want['level'], subject=want['mount']))
            continue
        if live.get('fstype') != 'xfs':
            results.append(check.skip('no XFS mounted at %s (storage.mount)' % want['mount'], subject=want['mount']))
            continue
        options = dict(o.split('=', 1) for o in live.get('options') or [] if '=' in o)
        # The kernel shows sunit/swidth in 512-byte sectors.
        wanted = {'sunit': want['chunk_kb'] * 2, 'swidth': want['chunk_kb'] * 2 * want['data_disks']}
        observed = dict((key, int(options[key]) if options.get(key, '').isdigit() else None) for key in wanted)
        results.append(check.compare(want['mount'], wanted, observed, 'XFS on %s has sunit=%s swidth=%s, the array '
                                     '(chunk %d KiB, %d data disks) wants sunit=%d swidth=%d' % (
                                         want['mount'], observed['sunit'], observed['swidth'], want['chunk_kb'],
                                         want['data_disks'], wanted['sunit'], wanted['swidth'])))
    return results


def _xfs_of(check, reads, expected, results):
    """``(want, filesystem)`` of every running array with a filesystem mounted on its mount point
    (md_info's ``filesystems``); a SKIP in ``results`` for one without."""
    info = read(reads, 'md_info')
    filesystems = read(reads, 'md_info', 'filesystems')
    for want, dummy in _running(check, info, expected, results, mounted=True):
        found = filesystems.get(want['mount'])
        if not found:
            results.append(check.skip('nothing mounted at %s (storage.mount)' % want['mount'], subject=want['mount']))
        else:
            yield want, found


@Check('storage.xfs_ftype', 'XFS of every array records file types (ftype=1)', 'major', 'xfs_info <mount>',
       'role md_raid_xfs makes XFS with ftype=1 (mkfs.xfs default since xfsprogs 4.2); an existing filesystem is kept: '
       'recreate it (data loss) with md_raid_xfs_force', variables=MD_VARIABLES)
def xfs_ftype(check, reads, expected):
    results = []
    for want, found in _xfs_of(check, reads, expected, results):
        if found.get('fstype') != 'xfs':
            results.append(check.skip('%s is %s, not XFS' % (want['mount'], found.get('fstype')), subject=want['mount']))
        elif not found.get('xfs'):
            results.append(check.skip('xfs_info could not read %s (md_info warned)' % want['mount'], subject=want['mount']))
        else:
            # ftype=0 is a V4 (or old) filesystem: overlayfs refuses it as a container image store, and
            # every directory scan (a model repository poll) costs an inode read per entry.
            results.append(check.compare(want['mount'], 1, found['xfs'].get('ftype'),
                                         'XFS on %s has ftype=%s (crc=%s): directory entries do not record the file '
                                         'type' % (want['mount'], found['xfs'].get('ftype'), found['xfs'].get('crc'))))
    return results


@Check('storage.free_space', 'Free space on every array filesystem at least audit_min_free_percent', 'major',
       'findmnt -J -b -o TARGET,SIZE,AVAIL,USED --mountpoint <mount>',
       'remove models no longer served (role model_sync, state absent) or grow the array; a model that does not '
       'fit fails model_sync before it downloads', variables=MD_VARIABLES)
def free_space(check, reads, expected):
    minimum = expected.get('audit_min_free_percent')
    if minimum is None:
        return [check.skip('audit_min_free_percent is null')]
    results = []
    for want, found in _xfs_of(check, reads, expected, results):
        size, avail = found.get('size_bytes') or 0, found.get('avail_bytes') or 0
        percent = round(100.0 * avail / size, 1) if size else 0.0
        observed = {'avail_bytes': avail, 'size_bytes': size, 'avail_percent': percent}
        wanted = {'avail_percent_min': minimum}
        if percent >= minimum:
            results.append(check.passed(want['mount'], wanted, observed))
        else:
            results.append(check.fail(want['mount'], wanted, observed, '%s has %.1f %% free (%d of %d MiB), under %s %%' % (
                want['mount'], percent, avail // 2 ** 20, size // 2 ** 20, minimum)))
    return results


@Check('storage.md_readahead', 'Array read-ahead at least what md_raid_xfs sets', 'major',
       '/sys/block/<md>/queue/read_ahead_kb', FIX_MD + ' (blockdev_readahead and its udev rule)', variables=MD_VARIABLES)
def md_readahead(check, reads, expected):
    results = []
    for want, found in _running(check, read(reads, 'md_info'), expected, results):
        # The role's rule (blockdev_readahead): the array's read_ahead_kb, else twice the full stripe; a larger
        # current value is kept, so it passes.
        if want['read_ahead_kb'] is not None:
            wanted, source = int(want['read_ahead_kb']), 'md_raid_xfs_arrays[].read_ahead_kb'
        elif want['chunk_kb']:
            wanted = blockdev.md_default_read_ahead_kb(want['chunk_kb'] * want['data_disks'])
            source = '2 x stripe (chunk %d KiB x %d data disks)' % (want['chunk_kb'], want['data_disks'])
        else:
            results.append(check.skip('RAID%s has no stripe and no read_ahead_kb: the role sets none' % want['level'],
                                      subject=_subject(want)))
            continue
        observed = found.get('read_ahead_kb')
        expect = '>= %d KiB (%s)' % (wanted, source)
        if observed is None:
            results.append(check.skip('md_info read no read_ahead_kb of %s' % found.get('kname'), subject=_subject(want),
                                      expected=expect))
        elif observed < wanted:
            results.append(check.fail(_subject(want), expect, observed, '%s (%s) read-ahead %d KiB, the role sets %d KiB' % (
                want['name'], found.get('kname'), observed, wanted)))
        else:
            results.append(check.passed(_subject(want), expect, observed,
                                        None if observed == wanted else 'larger value kept, as the role does'))
    return results


@Check('storage.md_resync', 'Write-intent bitmap and resync throttle as md_raid_xfs sets them', 'major',
       '/sys/block/<md>/md/{bitmap/location,sync_speed_max}, systemctl show ' + md_raid_plan.RESYNC_WINDOW_SERVICE,
       FIX_MD + ' (md_raid_xfs_arrays[].bitmap, md_raid_xfs_resync_speed_outside_window)', variables=MD_VARIABLES)
def md_resync(check, reads, expected):
    """Seed 000's rebuild at peak: the bitmap an array asks for, and outside the maintenance window (its service
    not running) the array's own sync_speed_max at md_raid_xfs_resync_speed_outside_window."""
    info = read(reads, 'md_info')
    throttle = md_raid_plan.resync_throttle(expected)
    results = []
    for want, found in _running(check, info, expected, results):
        if want['level'] == '0' or (want['bitmap'] is None and throttle is None):
            results.append(check.skip('neither md_raid_xfs_arrays[].bitmap nor md_raid_xfs_resync_speed_outside_window '
                                      'applies to RAID%s %s' % (want['level'], want['name']), subject=_subject(want)))
            continue
        wanted, observed, problems = {}, {}, []
        if want['bitmap'] is not None:
            wanted['bitmap'], observed['bitmap'] = want['bitmap'], found.get('bitmap')
            if found.get('bitmap') != want['bitmap']:
                problems.append('write-intent bitmap %s, md_raid_xfs_arrays[].bitmap is %s' % (
                    found.get('bitmap'), want['bitmap']))
        if throttle is not None and md_raid_plan.resync_window_open(info.get('units') or {}):
            wanted['sync_speed_max'] = 'system (the maintenance window is open)'
            observed['sync_speed_max'] = found.get('sync_speed_max_kb')
        elif throttle is not None:
            wanted['sync_speed_max'] = '%d KiB/s (local)' % throttle
            source = 'local' if found.get('sync_speed_max_local') else 'system'
            observed['sync_speed_max'] = '%s KiB/s (%s)' % (found.get('sync_speed_max_kb'), source)
            if not (found.get('sync_speed_max_local') and found.get('sync_speed_max_kb') == throttle):
                problems.append('resync limit %s outside the maintenance window, md_raid_xfs_resync_speed_outside_window '
                                'is %d KiB/s' % (observed['sync_speed_max'], throttle))
        if problems:
            results.append(check.fail(_subject(want), wanted, observed, '%s: %s' % (want['name'], '; '.join(problems))))
        else:
            results.append(check.passed(_subject(want), wanted, observed))
    return results


@Check('storage.fstrim', 'fstrim.timer enabled and active', 'minor', 'systemctl show fstrim.timer',
       'role md_raid_xfs (md_raid_xfs_fstrim_timer)', variables=MD_VARIABLES)
def fstrim(check, reads, expected):
    require_group(expected, LOCAL_NVME, 'md_raid_xfs')
    units = read(reads, 'md_info', 'units')
    if not expected.get('md_raid_xfs_fstrim_timer'):
        return [check.skip('md_raid_xfs_fstrim_timer is false')]
    unit = units.get('fstrim.timer')
    if unit is None:
        return [check.skip('md_info was not asked for fstrim.timer')]
    observed = '%s/%s' % (unit.get('enabled'), unit.get('active'))
    return [check.compare('fstrim.timer', 'enabled/active', observed, 'fstrim.timer is %s' % observed)]


@Check('storage.nvme_queue', 'Scheduler, read-ahead and nr_requests of every NVMe namespace of nvme_sched', 'major',
       '/sys/block/<ns>/queue/{scheduler,read_ahead_kb,nr_requests}', 'role nvme_sched (tag nvme_sched)', variables=SCHED_VARIABLES)
def nvme_queue_settings(check, reads, expected):
    require_group(expected, LOCAL_NVME, 'nvme_sched')
    namespaces = read(reads, 'nvme_info', 'namespaces')
    scheduler, read_ahead_kb = expected.get('nvme_sched_scheduler'), expected.get('nvme_sched_read_ahead_kb')
    if scheduler is None or read_ahead_kb is None:
        return [check.skip('nvme_sched_scheduler / nvme_sched_read_ahead_kb unknown')]
    nr_requests = expected.get('nvme_sched_nr_requests')
    selected, dummy = nvme_queue.select(namespaces, expected.get('nvme_sched_models') or [],
                                        expected.get('nvme_sched_serials') or [])
    wanted = {'scheduler': scheduler, 'read_ahead_kb': int(read_ahead_kb)}
    if nr_requests is not None:
        wanted['nr_requests'] = int(nr_requests)
    results = []
    for ns in selected:
        subject = drive(ns)
        queue = ns.get('queue') or {}
        observed = dict((key, queue.get(key)) for key in wanted)
        drift = nvme_queue.drift([ns], scheduler, read_ahead_kb, nr_requests)
        if drift:
            results.append(check.fail(subject, wanted, observed, drift[0]['text']))
        else:
            results.append(check.passed(subject, wanted, observed))
    return results


CHECKS = [md_present, md_health, md_layout, md_conf, mount, xfs_stripe, xfs_ftype, free_space, md_readahead, md_resync,
          fstrim, nvme_queue_settings]
