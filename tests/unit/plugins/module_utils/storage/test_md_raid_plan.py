# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The md RAID rules and the md_raid_xfs plan (module_utils/storage/md_raid_plan.py): every validator with good
and bad input and its message; the host checks and plans on md_info results replayed from the
recordings of tests/unit/fixtures/md_info."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan as plan
from ansible_collections.inferops.node.plugins.modules import md_info
from ansible_collections.inferops.node.tests.unit.module_harness import run_module
from ansible_collections.inferops.node.tests.unit.plugins.modules.test_md_info import (
    BAD_CALENDAR, BY_ID, GOOD_CALENDAR, INDEX, MODELS, UNITS, Guest,
)

OPTS = 'noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k'
# What fstab says for them: the boot waits up to 300 s for an array, as before local-fs.target, then goes on.
FSTAB_OPTS = OPTS + ',nofail,x-systemd.device-timeout=300s,x-systemd.before=local-fs.target'
# The resync limits the converged guest's kernel held when md_info's fixture was recorded (the role had set them).
SYSCTL_CONVERGED = {'speed_limit_min': 10000, 'speed_limit_max': 50000}


def settings(**overrides):
    """The lab inventory's values (inventories/lab/group_vars/local_nvme.yml) over the role defaults."""
    base = {
        'md_raid_xfs_arrays': [
            {'name': 'models', 'level': '0', 'chunk_kb': 512, 'devices': list(MODELS), 'mount': '/data/models'},
            {'name': 'index', 'level': '10', 'chunk_kb': 512, 'devices': list(INDEX), 'mount': '/data/index'},
        ],
        'md_raid_xfs_force': False, 'md_raid_xfs_mount_opts': OPTS, 'md_raid_xfs_mdadm_conf': '/etc/mdadm/mdadm.conf',
        'md_raid_xfs_update_initramfs': True, 'md_raid_xfs_speed_limit_min': 10000, 'md_raid_xfs_speed_limit_max': 50000,
        'md_raid_xfs_sysctl_file': '/etc/sysctl.d/91-inferops-md-raid.conf', 'md_raid_xfs_check_policy': 'window',
        'md_raid_xfs_check_start': GOOD_CALENDAR, 'md_raid_xfs_check_continue': GOOD_CALENDAR,
        'md_raid_xfs_check_duration': '3 hours', 'md_raid_xfs_fstrim_timer': True,
        'md_raid_xfs_readahead_rules_file': '/etc/udev/rules.d/61-inferops-readahead.rules',
        'md_raid_xfs_resync_speed_outside_window': None, 'md_raid_xfs_boot_timeout': 300,
    }
    base.update(overrides)
    return base


def with_array(index, **changes):
    s = settings()
    entry = s['md_raid_xfs_arrays'][index]
    for key, value in changes.items():
        if value is None and key != 'mount':
            entry.pop(key, None)
        else:
            entry[key] = value
    return s


# ---------------------------------------------------------------- shared rules (also mdadm_array's)

@pytest.mark.parametrize('name, problem', [
    ('models', None), ('a.b_c-9', None), ('x' * 32, None),
    ('x' * 33, 'must be 1-32 letters, digits, _, . or -'), ('bad name', 'must be 1-32 letters, digits, _, . or -'),
    ('', 'must be 1-32 letters, digits, _, . or -'), (7, 'must be 1-32 letters, digits, _, . or -'),
])
def test_name_problem(name, problem):
    assert plan.name_problem(name) == problem


@pytest.mark.parametrize('chunk, level, problem', [
    (4, '0', None), (512, '10', None), ('512', '0', None), (65536, '0', None),
    (2, '0', 'must be a power of two between 4 and 65536 (KiB)'),
    (384, '0', 'must be a power of two between 4 and 65536 (KiB)'),
    (131072, '0', 'must be a power of two between 4 and 65536 (KiB)'),
    (True, '0', 'must be a power of two between 4 and 65536 (KiB)'),
    ('64k', '10', 'must be a power of two between 4 and 65536 (KiB)'),
    (64, '1', 'RAID1 has no chunk size; remove it'),
])
def test_chunk_problem(chunk, level, problem):
    assert plan.chunk_problem(chunk, level) == problem


@pytest.mark.parametrize('level, layout, problem', [
    ('10', None, None), ('10', 'f2', None), ('10', 'n3', None), ('5', 'left-symmetric', None),
    ('10', 'x2', 'must be a RAID10 layout: n2, f2 or o2 (near, far, offset; n3 ... keep more copies)'),
    ('10', 'n1', 'keeps a single copy; RAID10 needs at least 2'),
    ('0', 'n2', 'only RAID10 (and RAID5/6) has a layout; remove it'),
    ('1', 'f2', 'only RAID10 (and RAID5/6) has a layout; remove it'),
])
def test_layout_problem(level, layout, problem):
    assert plan.layout_problem(level, layout) == problem


@pytest.mark.parametrize('level, count, layout, problem', [
    ('0', 2, None, None), ('1', 2, None, None), ('10', 2, None, None), ('10', 4, 'f2', None), ('10', 6, 'n3', None),
    ('5', 3, None, None), ('6', 4, None, None),
    ('0', 1, None, 'RAID0 needs at least 2 members, got 1'),
    ('1', 0, None, 'RAID1 needs at least 2 members, got 0'),
    ('5', 2, None, 'RAID5 needs at least 3 members, got 2'),
    ('6', 3, None, 'RAID6 needs at least 4 members, got 3'),
    ('10', 3, None, 'RAID10 (two copies) needs an even number of members (2, 4, ...), got 3'),
    ('10', 1, 'o2', 'RAID10 (two copies) needs an even number of members (2, 4, ...), got 1'),
    ('10', 4, 'n3', 'RAID10 with layout n3 (3 copies) needs a multiple of 3 members, got 4'),
])
def test_member_count_problem(level, count, layout, problem):
    assert plan.member_count_problem(level, count, layout) == problem


@pytest.mark.parametrize('array, level, chunk, want, problems', [
    ({'level': 'raid0', 'chunk_kb': 512, 'raid_disks': 2, 'members': ['a', 'b']}, '0', 512, ['a', 'b'], []),
    ({'level': 'raid0', 'chunk_kb': 512, 'raid_disks': 2, 'members': ['a', 'b']}, '10', 256, ['a', 'b'],
     ['level is raid0, requested RAID10', 'chunk is 512 KiB, requested 256 KiB']),
    ({'level': 'raid0', 'chunk_kb': 512, 'raid_disks': 2, 'members': ['a', 'b']}, '0', None, ['a', 'b', 'c'],
     ['it has 2 RAID slots, requested 3 members (a, b, c)']),
    ({'level': 'raid0', 'raid_disks': 2, 'members': [{'kname': 'a'}, {'kname': 'x'}]}, '0', None, ['a', 'b'],
     ['members are a, x, requested a, b']),
    # degraded: a removed member is no difference; an inactive array is not compared by members
    ({'level': 'raid10', 'raid_disks': 2, 'degraded': 1, 'members': ['a']}, '10', None, ['a', 'b'], []),
    ({'level': 'raid10', 'raid_disks': 2, 'status': 'inactive', 'members': ['a']}, '10', None, ['a', 'c'], []),
])
def test_array_differences(array, level, chunk, want, problems):
    assert plan.array_differences(array, level, chunk, want) == problems


# ---------------------------------------------------------------- role input

def test_lab_values_are_valid():
    assert plan.input_errors(settings()) == []
    assert plan.input_errors(settings(md_raid_xfs_force='true', md_raid_xfs_speed_limit_min=None,
                                      md_raid_xfs_check_policy='unmanaged', md_raid_xfs_check_start=None)) == []


@pytest.mark.parametrize('s, messages', [
    (settings(md_raid_xfs_arrays={'name': 'x'}), ['md_raid_xfs_arrays = {"name": "x"}: must be a list of arrays']),
    (settings(md_raid_xfs_arrays=['models']),
     ['md_raid_xfs_arrays[0] = "models": must be a mapping (name, level, devices, ...)']),
    (with_array(0, size='1T'), ['md_raid_xfs_arrays[0] (models): unknown key "size" (known: name, level, devices, '
                                'chunk_kb, layout, bitmap, mount, mount_opts, read_ahead_kb)']),
    (with_array(0, name='my models'), ['md_raid_xfs_arrays[0] (my models).name = "my models": must be 1-32 letters, '
                                       'digits, _, . or -']),
    (with_array(1, name='models'), ['md_raid_xfs_arrays[1] (models).name = "models": duplicate array name']),
    (with_array(0, level='5'), ['md_raid_xfs_arrays[0] (models).level = "5": must be 0, 1 or 10']),
    (with_array(0, level=True), ['md_raid_xfs_arrays[0] (models).level = true: must be 0, 1 or 10']),
    (with_array(0, devices='/dev/nvme0n1'), ['md_raid_xfs_arrays[0] (models).devices = "/dev/nvme0n1": must be a list '
                                             'of member device paths']),
    (with_array(0, devices=MODELS[:1] + ['nvme1n1']), [
        'md_raid_xfs_arrays[0] (models).devices[1] = "nvme1n1": must be a device path under /dev/ (use /dev/disk/by-id/...)']),
    (with_array(0, devices=[MODELS[0], MODELS[0]]), [
        'md_raid_xfs_arrays[0] (models).devices[1] = "%s": duplicate member (already listed in '
        'md_raid_xfs_arrays[models])' % MODELS[0]]),
    (with_array(1, devices=[INDEX[0], MODELS[3]]), [
        'md_raid_xfs_arrays[1] (index).devices[1] = "%s": duplicate member (already listed in '
        'md_raid_xfs_arrays[models])' % MODELS[3]]),
    (with_array(1, devices=INDEX + [BY_ID + 'X']), [
        'md_raid_xfs_arrays[1] (index).devices: RAID10 (two copies) needs an even number of members (2, 4, ...), '
        'got 3: %s, %s, %s' % (INDEX[0], INDEX[1], BY_ID + 'X')]),
    (with_array(0, devices=MODELS[:1]), [
        'md_raid_xfs_arrays[0] (models).devices: RAID0 needs at least 2 members, got 1: %s' % MODELS[0]]),
    (with_array(0, chunk_kb=384), [
        'md_raid_xfs_arrays[0] (models).chunk_kb = 384: must be a power of two between 4 and 65536 (KiB)']),
    (with_array(1, level='1', chunk_kb=64), [
        'md_raid_xfs_arrays[1] (index).chunk_kb = 64: RAID1 has no chunk size; remove it']),
    (with_array(0, layout='n2'), [
        'md_raid_xfs_arrays[0] (models).layout = "n2": only RAID10 (and RAID5/6) has a layout; remove it']),
    (with_array(1, layout='z2'), [
        'md_raid_xfs_arrays[1] (index).layout = "z2": must be a RAID10 layout: n2, f2 or o2 (near, far, offset; '
        'n3 ... keep more copies)']),
    (with_array(0, mount='/var'), [
        'md_raid_xfs_arrays[0] (models).mount = "/var": must be an absolute path without blanks or a trailing /, '
        'and not a system directory']),
    (with_array(0, mount='/data/models/'), [
        'md_raid_xfs_arrays[0] (models).mount = "/data/models/": must be an absolute path without blanks or a '
        'trailing /, and not a system directory']),
    (with_array(1, mount='/data/models'), [
        'md_raid_xfs_arrays[1] (index).mount = "/data/models": used by another array']),
    (with_array(0, mount_opts='noatime,,x'), [
        'md_raid_xfs_arrays[0] (models).mount_opts = "noatime,,x": empty item (leading, trailing or doubled comma)',
        'md_raid_xfs_arrays[0] (models).mount_opts = "noatime,,x": x: unknown option']),
    (with_array(0, read_ahead_kb=1001), [
        'md_raid_xfs_arrays[0] (models).read_ahead_kb = 1001: must be a non-negative integer multiple of 4 (KiB) '
        'or null']),
    (settings(md_raid_xfs_force='maybe'), [
        'md_raid_xfs_force = "maybe": must be a boolean (true/false, yes/no, on/off, 1/0)']),
    (settings(md_raid_xfs_mount_opts='noatime,relatime,inode64'), ['md_raid_xfs_mount_opts = "noatime,relatime,inode64"']),
    (settings(md_raid_xfs_mdadm_conf='mdadm.conf'), ['md_raid_xfs_mdadm_conf = "mdadm.conf": must be an absolute path']),
    (settings(md_raid_xfs_speed_limit_min=0), [
        'md_raid_xfs_speed_limit_min = 0: must be a positive integer (KiB/s) or null']),
    (settings(md_raid_xfs_speed_limit_max='fast'), [
        'md_raid_xfs_speed_limit_max = "fast": must be a positive integer (KiB/s) or null']),
    (settings(md_raid_xfs_speed_limit_min=90000), [
        'md_raid_xfs_speed_limit_min = 90000 is above md_raid_xfs_speed_limit_max = 50000']),
    (settings(md_raid_xfs_sysctl_file='/etc/sysctl.conf'), [
        'md_raid_xfs_sysctl_file = "/etc/sysctl.conf": must be a .conf file directly in /etc/sysctl.d/']),
    (settings(md_raid_xfs_readahead_rules_file='/etc/udev/x.rules'), [
        'md_raid_xfs_readahead_rules_file = "/etc/udev/x.rules": must be a .rules file directly in /etc/udev/rules.d/']),
    (settings(md_raid_xfs_check_policy='weekly'), [
        'md_raid_xfs_check_policy = "weekly": must be unmanaged, disabled or window']),
    (settings(md_raid_xfs_check_start='Sun "2"'), [
        'md_raid_xfs_check_start = "Sun \\"2\\"": must be a systemd calendar expression (OnCalendar=)']),
    (settings(md_raid_xfs_check_duration='forever'), [
        'md_raid_xfs_check_duration = "forever": must read "<n> minutes" or "<n> hours"']),
    (with_array(0, bitmap='internal'), [
        'md_raid_xfs_arrays[0] (models).bitmap = "internal": RAID0 keeps no redundancy, so a write-intent bitmap '
        'has nothing to resync; remove it']),
    (with_array(1, bitmap='yes'), [
        'md_raid_xfs_arrays[1] (index).bitmap = "yes": must be internal, none or null (not managed)']),
    (settings(md_raid_xfs_resync_speed_outside_window=0), [
        'md_raid_xfs_resync_speed_outside_window = 0: must be a positive integer (KiB/s) or null']),
    (settings(md_raid_xfs_resync_speed_outside_window='slow'), [
        'md_raid_xfs_resync_speed_outside_window = "slow": must be a positive integer (KiB/s) or null']),
    (settings(md_raid_xfs_resync_speed_outside_window=10000, md_raid_xfs_check_policy='disabled'), [
        'md_raid_xfs_resync_speed_outside_window = 10000: needs md_raid_xfs_check_policy: window (the maintenance '
        'window it is lifted in), got "disabled"']),
])
def test_input_errors(s, messages):
    errors = plan.input_errors(s)
    assert len(errors) == len(messages), errors
    for error, message in zip(errors, messages):
        assert error.startswith(message), (error, message)


def test_input_errors_all_at_once():
    s = with_array(0, level='5', chunk_kb=3, mount='/etc')
    s['md_raid_xfs_speed_limit_min'] = -1
    assert [e.split(':')[0] for e in plan.input_errors(s)] == [
        'md_raid_xfs_arrays[0] (models).level = "5"', 'md_raid_xfs_arrays[0] (models).chunk_kb = 3',
        'md_raid_xfs_arrays[0] (models).mount = "/etc"', 'md_raid_xfs_speed_limit_min = -1']


def test_want_defaults_and_geometry():
    s = settings()
    s['md_raid_xfs_arrays'][1].pop('chunk_kb')
    s['md_raid_xfs_arrays'].append({'name': 'scratch', 'level': 'RAID1', 'devices': ['/dev/a', '/dev/b'],
                                    'read_ahead_kb': '1024', 'mount_opts': 'noatime'})
    models, index, scratch = plan.want(s)
    assert (models['level'], models['chunk_kb'], models['layout'], models['data_disks'], models['mkfs_opts']) == (
        '0', 512, None, 4, '-d su=512k,sw=4')
    assert models['mdadm'] == {'name': 'models', 'level': '0', 'devices': MODELS, 'chunk_kb': 512}
    assert models['info'] == {'name': 'models', 'devices': MODELS, 'mount': '/data/models'}
    assert (index['chunk_kb'], index['layout'], index['data_disks'], index['mkfs_opts']) == (512, 'n2', 1, '-d su=512k,sw=1')
    assert index['mdadm'] == {'name': 'index', 'level': '10', 'devices': INDEX, 'chunk_kb': 512, 'layout': 'n2'}
    assert (scratch['level'], scratch['chunk_kb'], scratch['mkfs_opts'], scratch['mount'], scratch['mount_opts']) == (
        '1', None, '', None, 'noatime')
    assert scratch['readahead'] == {'device': '/dev/md/scratch', 'read_ahead_kb': 1024}
    assert models['mount_opts'] == OPTS and models['readahead'] == {'device': '/dev/md/models'}


# ---------------------------------------------------------------- role host checks and plans (recorded md_info results)

def read(tmp_path, monkeypatch, state, s):
    arrays = ['md126', 'md127'] if state != 'fresh' else []
    Guest(tmp_path, monkeypatch, state, arrays=arrays)
    args = {'arrays': [a['info'] for a in plan.want(s)], 'units': UNITS,
            'calendars': [GOOD_CALENDAR] if s['md_raid_xfs_check_policy'] == 'window' else []}
    failed, result = run_module(md_info.main, args)
    assert not failed, result
    return result


def test_host_fresh_is_ready_and_plans_everything(tmp_path, monkeypatch):
    s = settings()
    info = read(tmp_path, monkeypatch, 'fresh', s)
    assert plan.host_errors(info, s) == []
    fs = plan.filesystems(info, s)
    assert [(f['planned'], f['needs_mkfs'], f['xfs_mount'], f['status']) for f in fs] == [
        (True, False, None, 'absent'), (True, False, None, 'absent')]
    assert plan.filesystems(info, s, check_mode=True)[0]['xfs_mount'] == {
        'path': '/data/models', 'src': 'UUID=(assigned-by-mkfs.xfs)', 'opts': FSTAB_OPTS}
    todo = plan.plan(info, s)
    for key in ('stop_resync_window', 'resync_window', 'mdadm'):   # test_plan_resync_throttle's
        todo.pop(key)
    assert todo == {
        'mask': ['mdcheck_start.timer', 'mdcheck_continue.timer'], 'reset_failed': [],
        'start': ['inferops-mdcheck-start.timer', 'inferops-mdcheck-continue.timer'],
        'stop': [], 'limits': {'dev.raid.speed_limit_min': 10000, 'dev.raid.speed_limit_max': 50000},
        # The fresh guest's kernel holds its defaults (1000 and 200000): both to set now.
        'set_now': {'dev.raid.speed_limit_min': 10000, 'dev.raid.speed_limit_max': 50000},
        'autocheck': True}


def test_host_converged_arrays(tmp_path, monkeypatch):
    s = settings()
    info = read(tmp_path, monkeypatch, 'arrays', s)
    assert plan.host_errors(info, s) == []
    models, index = plan.filesystems(info, s)
    # Recorded before fstab carried nofail: the entry is rewritten once (xfs_mount remounts, never unmounts).
    assert (models['kname'], models['fstype'], models['mounted'], models['fstab_ok'], models['needs_mkfs']) == (
        'md127', 'xfs', True, False, False)
    assert models['xfs_mount'] == {'path': '/data/models', 'src': 'UUID=30e939a0-d46d-4438-ac46-814cc3415c0c',
                                   'opts': FSTAB_OPTS}
    info['fstab']['/data/models'] = ['UUID=30e939a0-d46d-4438-ac46-814cc3415c0c', '/data/models', 'xfs', FSTAB_OPTS,
                                     '0', '0']
    assert plan.filesystems(info, s)[0]['fstab_ok'] is True
    assert (models['missing_opts'], models['pending_opts']) == ([], [])
    assert (index['mounted'], index['fstab_ok'], index['uuid'] is not None) == (False, False, True)
    todo = plan.plan(info, s)
    assert todo['limits'] == {'dev.raid.speed_limit_min': 10000, 'dev.raid.speed_limit_max': 50000}
    assert (info['sysctl'], todo['set_now']) == (SYSCTL_CONVERGED, {})
    md_result = {'arrays': [{'array': {'level': 'raid0', 'status': 'clean', 'uuid': 'u', 'members': [],
                                       'missing_members': [], 'degraded': 0, 'sync_percent': None}}, {}]}
    report = plan.report(plan.filesystems(info, s, md_result), info, md_result)
    assert report[0]['summary'] == ('models: /dev/md/models (md127) raid0 clean, xfs 30e939a0-d46d-4438-ac46-814cc3415c0c, '
                                    'mounted at /data/models, read_ahead_kb %s' % info['arrays']['models']['read_ahead_kb'])
    assert report[1]['summary'].startswith('index: /dev/md/index (md126) ? absent, xfs ')
    assert report[1]['summary'].endswith(', NOT mounted at /data/index, options pending until the next mount: '
                                         'attr2,inode64,logbufs=8,logbsize=256k, read_ahead_kb %s'
                                         % info['arrays']['index']['read_ahead_kb'])


def test_host_degraded_index_is_no_error(tmp_path, monkeypatch):
    s = settings()
    info = read(tmp_path, monkeypatch, 'degraded', s)
    assert plan.host_errors(info, s) == []
    md_result = {'arrays': [{}, {'array': {'level': 'raid10', 'status': 'degraded', 'missing_members': [INDEX[1]]}}]}
    report = plan.report(plan.filesystems(info, s, md_result), info, md_result)
    assert report[1]['summary'].startswith('index: /dev/md/index (md126) raid10 DEGRADED missing %s, xfs' % INDEX[1])
    assert report[1]['status'] == 'degraded' and report[1]['missing_members'] == [INDEX[1]]


@pytest.mark.parametrize('change, force, messages', [
    # another chunk on the existing array: never re-created
    (lambda s: s['md_raid_xfs_arrays'][0].update(chunk_kb=256), False, [
        'md_raid_xfs_arrays[models]: /dev/md/models (md127) exists and differs: chunk is 512 KiB, requested 256 KiB. '
        'Arrays are never re-created; fix the variable or the array by hand']),
    (lambda s: s['md_raid_xfs_arrays'][1].update(level='1', chunk_kb=None), False, [
        'md_raid_xfs_arrays[index]: /dev/md/index (md126) exists and differs: level is raid10, requested RAID1.']),
    (lambda s: s['md_raid_xfs_arrays'][0].update(devices=MODELS[:3] + [BY_ID + 'NOSUCH9']), False, [
        'md_raid_xfs_arrays[models].devices: %s does not exist' % (BY_ID + 'NOSUCH9'),
        'md_raid_xfs_arrays[models]: /dev/md/models (md127) exists and differs: it has 4 RAID slots, requested 3 members']),
    (lambda s: s['md_raid_xfs_arrays'][0].update(devices=MODELS[:3] + [MODELS[0] + '_1']), False, [
        'md_raid_xfs_arrays[models].devices: %s_1 is /dev/nvme0n1, the same device as %s (duplicate member)' % (
            MODELS[0], MODELS[0]),
        'md_raid_xfs_arrays[models]: /dev/md/models (md127) exists and differs']),
    # the index drives requested for a new array: held by md126 (force does not help)
    (lambda s: s['md_raid_xfs_arrays'].append({'name': 'scratch', 'level': '1', 'devices': ['/dev/nvme0']}), True, [
        'md_raid_xfs_arrays[scratch].devices: /dev/nvme0 is not a block device (/dev/nvme0)']),
    (lambda s: s['md_raid_xfs_arrays'][1].update(mount='/'), False, [
        'md_raid_xfs_arrays[index].mount = /: already mounted from /dev/vda1 (ext4); unmount it first']),
    (lambda s: s.update(md_raid_xfs_check_start=BAD_CALENDAR), False, [
        'md_raid_xfs_check_start = "Someday 25:61": systemd-analyze calendar rejects it']),
])
def test_host_errors(tmp_path, monkeypatch, change, force, messages):
    s = settings(md_raid_xfs_force=force)
    change(s)
    guest_info = read(tmp_path, monkeypatch, 'arrays', s)
    errors = plan.host_errors(guest_info, s)
    assert len(errors) == len(messages), errors
    for error, message in zip(errors, messages):
        assert error.startswith(message), (error, message)


def test_host_data_on_members_refused_unless_forced(tmp_path, monkeypatch):
    """The removed index drive carries index's superblock: for another array it holds data."""
    s = settings(md_raid_xfs_arrays=[{'name': 'scratch', 'level': '1', 'devices': [INDEX[1], MODELS[0]]}])
    info = read(tmp_path, monkeypatch, 'degraded', s)
    errors = plan.host_errors(info, s)
    assert errors == [
        'md_raid_xfs_arrays[scratch].devices: %s (/dev/nvme5n1) carries the md superblock of another array '
        '(node1:index, UUID 84c66811-c03e-8ebf-5d6a-4acf3a687755); refusing to overwrite it '
        '(md_raid_xfs_force: true wipes it)' % INDEX[1],
        'md_raid_xfs_arrays[scratch].devices: %s (/dev/nvme0n1) is held by md127' % MODELS[0]]
    s['md_raid_xfs_force'] = 'yes'
    assert plan.host_errors(info, s) == [errors[1]]


def test_host_foreign_filesystem_on_array(tmp_path, monkeypatch):
    s = settings()
    info = copy.deepcopy(read(tmp_path, monkeypatch, 'arrays', s))
    info['arrays']['index']['blkid'] = {'TYPE': 'ext4', 'UUID': 'e'}
    assert plan.host_errors(info, s) == [
        'md_raid_xfs_arrays[index]: /dev/md/index (md126) holds a filesystem (ext4), not XFS; refusing to overwrite it '
        '(md_raid_xfs_force: true wipes it)']
    fs = plan.filesystems(info, settings(md_raid_xfs_force=True))
    assert (fs[1]['foreign'], fs[1]['needs_mkfs'], fs[1]['force_mkfs'], fs[1]['uuid']) == (True, True, True, None)


def test_plan_units():
    info = {'arrays': {},
            'units': {'fstrim.timer': {'enabled': 'enabled', 'active': 'active'},
                      'mdcheck_start.timer': {'enabled': 'masked', 'active': 'inactive'},
                      'mdcheck_continue.timer': {'enabled': 'disabled', 'active': 'inactive'},
                      'inferops-mdcheck-start.timer': {'enabled': 'enabled', 'active': 'active'},
                      'inferops-mdcheck-continue.timer': {'enabled': 'not-found', 'active': 'inactive'}},
            'sysctl': {'speed_limit_min': None, 'speed_limit_max': None}, 'autocheck': 'false'}
    s = settings(md_raid_xfs_check_policy='disabled', md_raid_xfs_fstrim_timer=False)
    todo = plan.plan(info, s)
    mdadm = [dict(a['mdadm']) for a in plan.want(s)]
    mdadm[1]['sync_speed_max'] = 'system'   # no throttle: the redundant array follows the system limit
    assert todo == {'mask': ['mdcheck_continue.timer'], 'reset_failed': [], 'start': [], 'stop': ['inferops-mdcheck-start.timer'],
                    'stop_resync_window': [],
                    'resync_window': {'throttle': None, 'seconds': 10800, 'arrays': ['index']},
                    'mdadm': mdadm,
                    'limits': {'dev.raid.speed_limit_min': 10000, 'dev.raid.speed_limit_max': 50000},
                    'set_now': {'dev.raid.speed_limit_min': 10000, 'dev.raid.speed_limit_max': 50000}, 'autocheck': False}
    # A kernel that holds them already: nothing to set now (sysctl_runtime does not run); the drop-in keeps both.
    info['sysctl'] = {'speed_limit_min': 10000, 'speed_limit_max': 50000}
    assert plan.plan(info, s)['set_now'] == {}
    info['sysctl'] = {'speed_limit_min': 10000, 'speed_limit_max': 200000}
    assert plan.plan(info, s)['set_now'] == {'dev.raid.speed_limit_max': 50000}
    # Debian 13's systemd 257 after an earlier run masked a running timer: masked, but failed - reset, not masked again.
    info['units']['mdcheck_start.timer']['active'] = 'failed'
    assert (plan.plan(info, s)['mask'], plan.plan(info, s)['reset_failed']) == (['mdcheck_continue.timer'], ['mdcheck_start.timer'])
    assert plan.plan(info, settings(md_raid_xfs_check_policy='system'))['reset_failed'] == []


# ---------------------------------------------------------------- bitmap and the resync throttle (issue 33 item 10)

@pytest.mark.parametrize('level, bitmap, problem', [
    ('10', None, None), ('10', 'internal', None), ('10', 'none', None), ('1', 'internal', None), ('0', 'none', None),
    ('0', 'internal', 'RAID0 keeps no redundancy, so a write-intent bitmap has nothing to resync; remove it'),
    ('10', 'external', 'must be internal, none or null (not managed)'),
])
def test_bitmap_problem(level, bitmap, problem):
    assert plan.bitmap_problem(level, bitmap) == problem


@pytest.mark.parametrize('value, problem', [
    (None, None), ('system', None), ('10000', None), (10000, None),
    ('0', 'must be a positive whole number of KiB/s or system'), ('fast', 'must be a positive whole number of KiB/s or system'),
    ('-5', 'must be a positive whole number of KiB/s or system'),
])
def test_sync_speed_problem(value, problem):
    assert plan.sync_speed_problem(value) == problem


CLEAN = {'status': 'clean', 'bitmap': 'none', 'sync_speed_max_kb': 200000, 'sync_speed_max_local': False}


@pytest.mark.parametrize('array, bitmap, speed, todo', [
    # Nothing requested, or the array holds it already: nothing to do.
    (CLEAN, None, None, {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': None}),
    (CLEAN, 'none', 'system', {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': None}),
    (dict(CLEAN, bitmap='internal', sync_speed_max_kb=10000, sync_speed_max_local=True), 'internal', '10000',
     {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': None}),
    # A bitmap to add, a throttle to set.
    (CLEAN, 'internal', '10000', {'bitmap': 'internal', 'bitmap_busy': False, 'sync_speed_max': '10000'}),
    # Another local limit than the throttle; a local limit when the system's is asked for.
    (dict(CLEAN, sync_speed_max_kb=5000, sync_speed_max_local=True), None, '10000',
     {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': '10000'}),
    (dict(CLEAN, sync_speed_max_kb=10000, sync_speed_max_local=True), None, 'system',
     {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': 'system'}),
    # The system limit equal to the throttle is not the throttle (a later sysctl change would lift it).
    (dict(CLEAN, sync_speed_max_kb=10000), None, '10000', {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': '10000'}),
    # While the array resyncs the kernel refuses a bitmap change: busy, not planned; the throttle still applies.
    (dict(CLEAN, status='resyncing'), 'internal', '10000', {'bitmap': None, 'bitmap_busy': True, 'sync_speed_max': '10000'}),
    (dict(CLEAN, status='recovering', bitmap='internal'), 'none', None, {'bitmap': None, 'bitmap_busy': True, 'sync_speed_max': None}),
    # Attributes the kernel does not show (RAID0 has neither) are left alone.
    ({'status': 'clean', 'bitmap': None, 'sync_speed_max_kb': None, 'sync_speed_max_local': None}, 'internal', '10000',
     {'bitmap': None, 'bitmap_busy': False, 'sync_speed_max': None}),
])
def test_array_tuning(array, bitmap, speed, todo):
    assert plan.array_tuning(array, bitmap, speed) == todo


@pytest.mark.parametrize('duration, seconds', [
    ('3 hours', 10800), ('1 hour', 3600), ('90 minutes', 5400), ('1 minute', 60), ('0 hours', None), ('3h', None), (3, None),
])
def test_duration_seconds(duration, seconds):
    assert plan.duration_seconds(duration) == seconds


def test_plan_resync_throttle():
    units = dict((u, {'enabled': 'not-found', 'active': 'inactive'}) for u in (
        'fstrim.timer', 'mdcheck_start.timer', 'mdcheck_continue.timer', 'inferops-mdcheck-start.timer',
        'inferops-mdcheck-continue.timer', plan.RESYNC_WINDOW_TIMER, plan.RESYNC_WINDOW_SERVICE))
    info = {'arrays': {}, 'units': units, 'sysctl': {'speed_limit_min': 10000, 'speed_limit_max': 50000},
            'autocheck': 'false'}
    s = with_array(1, bitmap='internal')
    s['md_raid_xfs_resync_speed_outside_window'] = '20000'   # -e gives a string
    assert plan.input_errors(s) == []
    todo = plan.plan(info, s)
    assert todo['resync_window'] == {'throttle': 20000, 'seconds': 10800, 'arrays': ['index']}
    assert plan.RESYNC_WINDOW_TIMER in todo['start'] and todo['stop_resync_window'] == []
    # The RAID0 array is not given a limit (it has no resync); the RAID10 one the throttle and its bitmap.
    assert 'sync_speed_max' not in todo['mdadm'][0] and 'bitmap' not in todo['mdadm'][0]
    assert todo['mdadm'][1]['sync_speed_max'] == '20000' and todo['mdadm'][1]['bitmap'] == 'internal'
    # While the window's service runs, the arrays are left as its start set them.
    units[plan.RESYNC_WINDOW_SERVICE] = {'enabled': 'static', 'active': 'active'}
    units[plan.RESYNC_WINDOW_TIMER] = {'enabled': 'enabled', 'active': 'active'}
    todo = plan.plan(info, s)
    assert todo['mdadm'][1]['sync_speed_max'] is None and plan.RESYNC_WINDOW_TIMER not in todo['start']
    # The throttle removed: its units stopped, the arrays back on the system limit (the window's service too,
    # which also ends any window running now).
    s['md_raid_xfs_resync_speed_outside_window'] = None
    units[plan.RESYNC_WINDOW_SERVICE] = {'enabled': 'static', 'active': 'inactive'}
    todo = plan.plan(info, s)
    assert todo['stop_resync_window'] == [plan.RESYNC_WINDOW_TIMER, plan.RESYNC_WINDOW_SERVICE]
    assert todo['mdadm'][1]['sync_speed_max'] == 'system' and todo['resync_window']['throttle'] is None


@pytest.mark.parametrize('opts, timeout, fstab', [
    (OPTS, 300, FSTAB_OPTS),
    # What the operator wrote stays: their own nofail, their own device timeout.
    ('noatime,nofail', 120, 'noatime,nofail,x-systemd.device-timeout=120s,x-systemd.before=local-fs.target'),
    ('noatime,x-systemd.device-timeout=10min,x-systemd.before=local-fs.target', 300,
     'noatime,x-systemd.device-timeout=10min,x-systemd.before=local-fs.target,nofail'),
])
def test_boot_options(opts, timeout, fstab):
    assert plan.boot_options(opts, timeout) == fstab


@pytest.mark.parametrize('value', [0, 3601, 'soon', None, -5])
def test_boot_timeout_refused(value):
    assert plan.input_errors(settings(md_raid_xfs_boot_timeout=value)) == [
        'md_raid_xfs_boot_timeout = %s: must be a number of seconds from 1 to 3600' % json.dumps(value)]
