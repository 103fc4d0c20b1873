# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""mdadm_array replayed against mdadm / wipefs / blkid / lsblk outputs and sysfs snapshots
recorded on the local_nvme lab guest (tests/unit/fixtures/README.md)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import md
from ansible_collections.inferops.node.plugins.modules import mdadm_array
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import (
    BY_ID, FakeSystem, INDEX, MODEL, fixture, run_module,
)
from ansible_collections.inferops.node.tests.unit.module_harness import C_LOCALE

MODEL_UUID = 'ae809e5b:1362128b:161f63bf:74fd1500'
INDEX_UUID = 'aa3a12d1:73e91904:dc5350fb:bb8f6975'
MODEL_LINE = fixture('mdadm', 'raid0.brief.txt').strip()
CREATE_MODEL = ['mdadm', '--create', '/dev/md/model', '--name=model', '--level=0', '--raid-devices=4', '--chunk=512',
                '--run', '/dev/nvme0n1', '/dev/nvme1n1', '/dev/nvme2n1', '/dev/nvme3n1']
ASSEMBLE_MODEL = ['mdadm', '--assemble', '/dev/md/model', '--uuid=' + MODEL_UUID, '--run',
                  '/dev/nvme0n1', '/dev/nvme1n1', '/dev/nvme2n1', '/dev/nvme3n1']
SETTLE = ['udevadm', 'settle', '--timeout=30']


def model_args(conf, **extra):
    args = {'name': 'model', 'level': '0', 'chunk_kb': 512, 'devices': list(MODEL), 'mdadm_conf': str(conf)}
    args.update(extra)
    return args


def answer_model_running(system):
    system.on(['mdadm', '--detail', '--export', '/dev/md127'], out='@mdadm/raid0.export.txt')
    system.on(['mdadm', '--detail', '/dev/md127'], out='@mdadm/raid0.detail.txt')


def answer_index(system, state):
    system.on(['mdadm', '--detail', '--export', '/dev/md126'], out='@mdadm/%s.export.txt' % state)
    system.on(['mdadm', '--detail', '/dev/md126'], out='@mdadm/%s.detail.txt' % state)


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / 'mdadm.conf'
    path.write_text(fixture('mdadm_conf', 'debian_default.conf'))
    return path


def changing(system):
    return [c for c in system.calls if c[:2] in (['mdadm', '--create'], ['mdadm', '--assemble'], ['mdadm', '--stop'],
                                                 ['mdadm', '--zero-superblock'], ['wipefs', '--all'])]


# ---------------------------------------------------------------- create / idempotence

def test_create_raid0_then_idempotent(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.blank_members(['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1'])
    system.on(CREATE_MODEL, out='@mdadm/create_raid0.txt', err='@mdadm/create_raid0.txt.stderr', then='raid0')
    system.on(SETTLE)
    answer_model_running(system)
    failed, result = run_module(mdadm_array.main, model_args(conf), diff=True)
    assert not failed, result
    assert result['changed'] and result['actions'] == ['created', 'conf_updated']
    assert result['commands'] == [CREATE_MODEL]
    assert result['members'] == [{'path': MODEL[i], 'device': '/dev/nvme%dn1' % i, 'kname': 'nvme%dn1' % i} for i in range(4)]
    array = result['array']
    assert (array['kname'], array['uuid'], array['md_name'], array['level']) == ('md127', MODEL_UUID, 'node1:model', 'raid0')
    assert (array['status'], array['raid_disks'], array['chunk_kb'], array['metadata']) == ('clean', 4, 512, '1.2')
    assert array['missing_members'] == [] and array['sync_percent'] is None
    assert [m['role'] for m in array['members']] == ['0', '1', '2', '3']
    assert result['conf_line'] == MODEL_LINE
    assert result['conf_changed'] and result['initramfs_update_needed']
    text = conf.read_text()
    assert text.startswith(fixture('mdadm_conf', 'debian_default.conf').rstrip('\n'))
    assert text.endswith('\n# inferops.node mdadm_array: model\n%s\n' % MODEL_LINE)
    assert result['diff'][1]['after'] == text
    assert 'member: /dev/nvme3n1 role 3' in result['diff'][0]['after']

    system.calls[:] = []
    failed, again = run_module(mdadm_array.main, model_args(conf))
    assert not failed and not again['changed'], again
    assert again['actions'] == [] and not again['initramfs_update_needed']
    assert changing(system) == []


def test_create_check_mode_changes_nothing(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.blank_members(['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1'])
    before = conf.read_text()
    failed, result = run_module(mdadm_array.main, model_args(conf), check_mode=True, diff=True)
    assert not failed, result
    assert result['changed'] and result['actions'] == ['created', 'conf_updated']
    assert result['commands'] == [CREATE_MODEL]
    assert changing(system) == []
    assert conf.read_text() == before
    # The probes ran (reads, in the C locale); the create and udev settle were only recorded.
    assert [e['argv'] for e in result['command_log'] if e['ran']] == system.calls
    assert system.environ == [C_LOCALE] * len(system.calls)
    assert [e['argv'] for e in result['command_log'] if not e['ran']] == [CREATE_MODEL, ['udevadm', 'settle', '--timeout=30']]
    assert result['array']['status'] == 'absent' and result['array']['uuid'] == '<assigned at creation>'
    assert result['initramfs_update_needed']
    assert 'ARRAY /dev/md/model metadata=1.2 name=<homehost>:model' in result['diff'][1]['after']


def test_existing_clean_array_only_conf(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    failed, result = run_module(mdadm_array.main, model_args(conf), check_mode=True)
    assert not failed, result
    assert result['actions'] == ['conf_updated'] and result['commands'] == []
    assert result['array']['status'] == 'clean'


def test_conf_written_without_existing_file(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    conf = tmp_path / 'etc' / 'mdadm' / 'mdadm.conf'
    failed, result = run_module(mdadm_array.main, model_args(conf))
    assert not failed and result['conf_changed']
    assert conf.read_text() == '# inferops.node mdadm_array: model\n%s\n' % MODEL_LINE


def test_update_conf_false(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    failed, result = run_module(mdadm_array.main, model_args(conf, update_conf=False))
    assert not failed and not result['changed'] and result['conf_line'] is None


def boot_initrd(system, conf, age):
    """A running kernel whose initramfs is ``age`` seconds older than ``conf`` (negative: newer)."""
    os.makedirs(system.path('/proc/sys/kernel'), exist_ok=True)
    with open(system.path('/proc/sys/kernel/osrelease'), 'w') as handle:
        handle.write('6.1.0-57-amd64\n')
    initrd = system.path('/boot/initrd.img-6.1.0-57-amd64')
    os.makedirs(os.path.dirname(initrd), exist_ok=True)
    with open(initrd, 'w') as handle:
        handle.write('initramfs')
    mtime = os.stat(str(conf)).st_mtime - age
    os.utime(initrd, (mtime, mtime))


def test_update_initramfs_when_conf_changes(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    system.on(['update-initramfs', '-u'])
    boot_initrd(system, conf, -60)
    failed, result = run_module(mdadm_array.main, model_args(conf, update_initramfs=True), check_mode=True)
    assert not failed and result['changed'] and result['initramfs_updated']
    assert result['commands'] == [['update-initramfs', '-u']] and system.ran('update-initramfs') == []
    failed, result = run_module(mdadm_array.main, model_args(conf, update_initramfs=True))
    assert not failed and result['conf_changed'] and result['initramfs_updated']
    assert result['actions'] == ['conf_updated', 'initramfs_updated']
    assert system.ran('update-initramfs') == [['update-initramfs', '-u']]
    # What update-initramfs leaves: an initramfs newer than mdadm.conf; nothing to do.
    boot_initrd(system, conf, -60)
    again = run_module(mdadm_array.main, model_args(conf, update_initramfs=True), check_mode=True)[1]
    assert not again['changed'] and not again['initramfs_updated'] and again['commands'] == []


def test_update_initramfs_when_the_initramfs_is_older(tmp_path, monkeypatch, conf):
    """mdadm.conf already right, but a refresh failed or was skipped before: it runs now, and check mode says so."""
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    system.on(['update-initramfs', '-u'])
    run_module(mdadm_array.main, model_args(conf))
    boot_initrd(system, conf, 60)
    failed, result = run_module(mdadm_array.main, model_args(conf, update_initramfs=True), check_mode=True, diff=True)
    assert not failed and not result['conf_changed'] and result['changed'] and result['initramfs_updated']
    # The rebuild is the only change: the diff shows it (the arrays and mdadm.conf entries are the same before and after).
    assert result['diff'][-1] == {
        'before_header': '/boot/initrd.img-6.1.0-57-amd64', 'after_header': '/boot/initrd.img-6.1.0-57-amd64',
        'before': 'copy of %s: out of date\n' % conf, 'after': 'rebuilt by update-initramfs -u\n'}
    assert all(entry['before'] == entry['after'] for entry in result['diff'][:-1])
    # Without the option only the conf change is reported, for a handler.
    failed, result = run_module(mdadm_array.main, model_args(conf))
    assert not failed and not result['changed'] and not result['initramfs_updated']
    assert system.ran('update-initramfs') == []


def test_update_initramfs_failure_fails(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    system.on(['update-initramfs', '-u'], rc=1, err='E: /boot is full')
    failed, result = run_module(mdadm_array.main, model_args(conf, update_initramfs=True))
    assert failed and result['msg'] == 'update-initramfs -u failed (rc=1): E: /boot is full'
    assert result['conf_changed'] and not result['initramfs_updated']


# ---------------------------------------------------------------- reported states

@pytest.mark.parametrize('state, status, percent, missing, roles', [
    ('raid10_resync', 'resyncing', 0.2, [], {'nvme4n1': '0', 'nvme5n1': '1'}),
    ('raid10', 'clean', None, [], {'nvme4n1': '0', 'nvme5n1': '1'}),
    ('raid10_faulty', 'degraded', None, [INDEX[1]], {'nvme4n1': '0', 'nvme5n1': 'faulty'}),
    ('raid10_degraded', 'degraded', None, [INDEX[1]], {'nvme4n1': '0'}),
    ('raid10_recovering', 'recovering', 0.6, [INDEX[1]], {'nvme4n1': '0', 'nvme5n1': '1'}),
])
def test_raid10_states(tmp_path, monkeypatch, conf, state, status, percent, missing, roles):
    snapshot = 'raid10_clean' if state == 'raid10' else state
    system = FakeSystem(tmp_path, monkeypatch, snapshot)
    answer_index(system, state)
    failed, result = run_module(mdadm_array.main, {'name': 'index', 'level': 10, 'devices': list(INDEX), 'mdadm_conf': str(conf)})
    assert not failed, result
    array = result['array']
    assert (array['kname'], array['uuid'], array['level'], array['chunk_kb']) == ('md126', INDEX_UUID, 'raid10', 512)
    assert array['status'] == status
    assert array['sync_percent'] == percent
    assert array['missing_members'] == missing
    assert dict((m['kname'], m['role']) for m in array['members']) == roles
    assert result['actions'] == ['conf_updated'] and changing(system) == []
    if status == 'resyncing':
        # /proc/mdstat of the snapshot, read a moment after mdstat/raid10_resync.txt
        assert (array['sync_action'], array['sync_speed'], array['sync_finish']) == ('resync', '345K/sec', '50.0min')
        assert array['state'] == ['clean', 'resyncing']
    if status == 'degraded':
        assert array['degraded'] == 1 and 'degraded' in array['state']


# ---------------------------------------------------------------- assemble

def _answer_stopped(system):
    for kname in ('nvme0n1', 'nvme1n1', 'nvme2n1'):
        system.on(['mdadm', '--examine', '--export', '/dev/%s' % kname], out='@mdadm/stopped.examine_nvme0n1.txt')
    system.on(['mdadm', '--examine', '--export', '/dev/nvme3n1'], out='@mdadm/stopped.examine_nvme3n1.txt')
    system.on(ASSEMBLE_MODEL, err='mdadm: /dev/md/model has been started with 4 drives.\n', then='raid0')
    system.on(SETTLE)
    answer_model_running(system)


def test_stopped_array_is_assembled(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'stopped')
    _answer_stopped(system)
    failed, result = run_module(mdadm_array.main, model_args(conf, state='assembled'))
    assert not failed, result
    assert result['actions'] == ['assembled', 'conf_updated'] and result['commands'] == [ASSEMBLE_MODEL]
    assert result['array']['status'] == 'clean'


def test_inactive_array_is_stopped_and_assembled(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'inactive_md127')
    system.on(['mdadm', '--detail', '--export', '/dev/md127'], out='@mdadm/inactive_md127.export.txt')
    system.on(['mdadm', '--detail', '/dev/md127'], out='@mdadm/inactive_md127.detail.txt')
    system.on(['mdadm', '--stop', '/dev/md127'], err='mdadm: stopped /dev/md127\n', then='stopped')
    _answer_stopped(system)
    failed, result = run_module(mdadm_array.main, model_args(conf), diff=True)
    assert not failed, result
    assert result['actions'] == ['stopped', 'assembled', 'conf_updated']
    assert result['commands'] == [['mdadm', '--stop', '/dev/md127'], ASSEMBLE_MODEL]
    assert 'status: inactive' in result['diff'][0]['before'] and 'status: clean' in result['diff'][0]['after']


def test_inactive_array_check_mode(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'inactive_md127')
    system.on(['mdadm', '--detail', '--export', '/dev/md127'], out='@mdadm/inactive_md127.export.txt')
    system.on(['mdadm', '--detail', '/dev/md127'], out='@mdadm/inactive_md127.detail.txt')
    # still inactive in check mode: nvme0n1 is held by md127, the others carry the stopped superblock
    _answer_stopped(system)
    failed, result = run_module(mdadm_array.main, model_args(conf), check_mode=True)
    assert not failed, result
    assert result['actions'] == ['stopped', 'assembled', 'conf_updated'] and changing(system) == []
    assert result['array']['uuid'] == MODEL_UUID
    assert result['conf_line'] == MODEL_LINE


def test_assembled_never_creates(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.blank_members(['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1'])
    failed, result = run_module(mdadm_array.main, model_args(conf, state='assembled'))
    assert failed and "state=assembled never creates" in result['msg']
    assert changing(system) == []


# ---------------------------------------------------------------- refusing

def test_running_array_with_other_members_is_not_recreated(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    failed, result = run_module(mdadm_array.main, model_args(conf, devices=MODEL[:3] + [INDEX[0]]))
    assert failed and changing(system) == []
    msg = result['msg']
    assert ('array /dev/md/model (md127) exists and differs from the request: members are nvme0n1, nvme1n1, nvme2n1, '
            'nvme3n1, requested nvme0n1, nvme1n1, nvme2n1, nvme4n1') in msg
    assert 'Current members: [/dev/nvme0n1 (role 0), /dev/nvme1n1 (role 1), /dev/nvme2n1 (role 2), /dev/nvme3n1 (role 3)]' in msg
    assert 'requested: [%s (/dev/nvme0n1), %s (/dev/nvme1n1), %s (/dev/nvme2n1), %s (/dev/nvme4n1)]' % (
        MODEL[0], MODEL[1], MODEL[2], INDEX[0]) in msg


@pytest.mark.parametrize('extra, needle', [
    ({'devices': MODEL[:3]}, 'it has 4 RAID slots, requested 3 members'),
    ({'level': '10', 'chunk_kb': None}, 'level is raid0, requested RAID10'),
    ({'chunk_kb': 64}, 'chunk is 512 KiB, requested 64 KiB'),
])
def test_running_array_mismatch(tmp_path, monkeypatch, conf, extra, needle):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    failed, result = run_module(mdadm_array.main, model_args(conf, **extra))
    assert failed and needle in result['msg'], result['msg']
    assert changing(system) == []


def test_stopped_array_with_fewer_members_requested(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'stopped')
    _answer_stopped(system)
    failed, result = run_module(mdadm_array.main, model_args(conf, devices=MODEL[:2]))
    assert failed and "stopped array 'model' (UUID %s) differs from the request: it has 4 RAID slots, requested 2" % MODEL_UUID in result['msg']
    assert changing(system) == []


def test_members_in_another_array(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    for kname in ('nvme0n1', 'nvme1n1'):
        dev = '/dev/%s' % kname
        system.on(['mdadm', '--examine', '--export', dev], out='@mdadm/raid0.examine_member.txt')
        system.on(['lsblk', '--json', '-O', dev], out='@lsblk/md_member.json')
        system.on(['wipefs', '--no-act', '--json', dev], out='@wipefs/md_member.json')
        system.on(['blkid', '-p', '-o', 'export', dev], out='@blkid/md_member.txt')
    for force in (False, True):
        failed, result = run_module(mdadm_array.main, {'name': 'scratch', 'level': 1, 'devices': MODEL[:2],
                                                       'mdadm_conf': str(conf), 'force': force})
        assert failed
        assert "cannot create array 'scratch', members are not free" in result['msg']
        assert '%s (/dev/nvme0n1): held by md127' % MODEL[0] in result['msg']
        assert ('linux_raid_member signature at offset 0x1000' in result['msg']) is (not force)
    assert changing(system) == []


def _answer_signatures(system, mounted):
    system.on(['mdadm', '--detail', '--export', '/dev/md127'], out='@mdadm/raid0.export.txt')
    system.on(['mdadm', '--examine', '--export', '/dev/nvme4n1'], rc=1, out='@mdadm/fresh.examine_nvme4n1.txt',
              err='@mdadm/fresh.examine_nvme4n1.txt.stderr')
    system.on(['mdadm', '--examine', '--export', '/dev/nvme5n1'], rc=1, out='@mdadm/examine_fresh.txt',
              err='@mdadm/examine_fresh.txt.stderr')
    system.on(['lsblk', '--json', '-O', '/dev/nvme4n1'], out='@lsblk/dos.json')
    system.on(['wipefs', '--no-act', '--json', '/dev/nvme4n1'], out='@wipefs/dos.json')
    system.on(['blkid', '-p', '-o', 'export', '/dev/nvme4n1'], out='@blkid/dos.txt')
    system.on(['lsblk', '--json', '-O', '/dev/nvme5n1'], out='@lsblk/xfs_mounted.json' if mounted else '@lsblk/xfs.json')
    system.on(['wipefs', '--no-act', '--json', '/dev/nvme5n1'], out='@wipefs/xfs.json')
    system.on(['blkid', '-p', '-o', 'export', '/dev/nvme5n1'], out='@blkid/xfs.txt')


def test_signatures_block_creation(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'partitioned')
    _answer_signatures(system, mounted=True)
    failed, result = run_module(mdadm_array.main, {'name': 'index', 'level': 10, 'devices': list(INDEX), 'mdadm_conf': str(conf)})
    assert failed and changing(system) == []
    msg = result['msg']
    assert '%s (/dev/nvme4n1): has partitions nvme4n1p1' % INDEX[0] in msg
    assert '%s (/dev/nvme4n1): partition table dos' % INDEX[0] in msg
    assert '%s (/dev/nvme5n1): mounted at /mnt' % INDEX[1] in msg
    assert '%s (/dev/nvme5n1): xfs signature at offset 0x0 (UUID 7818b878-0184-4568-8611-eced46e00bc0)' % INDEX[1] in msg
    assert 'force=true wipes signatures' in msg
    # force does not override a mount
    failed, result = run_module(mdadm_array.main, {'name': 'index', 'level': 10, 'devices': list(INDEX),
                                                   'mdadm_conf': str(conf), 'force': True})
    assert failed and 'mounted at /mnt' in result['msg'] and 'partition table' not in result['msg']
    assert changing(system) == []


def test_force_wipes_then_creates(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'partitioned')
    _answer_signatures(system, mounted=False)
    wipe = ['wipefs', '--all', '--force', '/dev/nvme4n1', '/dev/nvme5n1']
    create = ['mdadm', '--create', '/dev/md/index', '--name=index', '--level=10', '--raid-devices=2', '--chunk=512',
              '--layout=n2', '--run', '/dev/nvme4n1', '/dev/nvme5n1']
    system.on(wipe)
    system.on(create, out='@mdadm/create_raid10.txt', err='@mdadm/create_raid10.txt.stderr', then='raid10_resync')
    system.on(SETTLE)
    answer_index(system, 'raid10_resync')
    failed, result = run_module(mdadm_array.main, {'name': 'index', 'level': 'raid10', 'chunk_kb': 512, 'layout': 'n2',
                                                   'devices': list(INDEX), 'mdadm_conf': str(conf), 'force': True})
    assert not failed, result
    assert result['commands'] == [wipe, create]
    assert result['actions'] == ['wiped', 'created', 'conf_updated']
    # what was destroyed is named, member by member (also printed as a warning)
    wiped = ' | '.join(result['wiped'])
    assert '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0 (/dev/nvme4n1): has partitions nvme4n1p1' in wiped
    assert '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX1 (/dev/nvme5n1): xfs signature at offset 0x0' in wiped
    assert result['array']['status'] == 'resyncing' and result['array']['sync_percent'] == 0.2


# ---------------------------------------------------------------- validation (nothing runs)

@pytest.mark.parametrize('args, needle', [
    ({'level': 10, 'devices': MODEL[:3]}, 'devices: RAID10 (two copies) needs an even number of members (2, 4, ...), got 3: '),
    ({'level': 10, 'layout': 'n3', 'devices': MODEL[:4]}, 'devices: RAID10 with layout n3 (3 copies) needs a multiple of 3 members, got 4'),
    ({'level': 10, 'layout': 'x2'}, "layout='x2': must be a RAID10 layout: n2, f2 or o2"),
    ({'level': 10, 'layout': 'n1'}, "layout='n1': keeps a single copy"),
    ({'chunk_kb': 384}, 'chunk_kb=384: must be a power of two between 4 and 65536 (KiB)'),
    ({'chunk_kb': 2}, 'chunk_kb=2: must be a power of two between 4 and 65536'),
    ({'level': '7'}, "level='7' is not a supported RAID level"),
    ({'level': 'raid4'}, "level='raid4' is not a supported RAID level"),
    ({'level': None}, 'level is required with state=present'),
    ({'level': 1, 'chunk_kb': 64, 'devices': MODEL[:2]}, 'chunk_kb=64: RAID1 has no chunk size'),
    ({'level': 0, 'layout': 'n2'}, "layout='n2': only RAID10 (and RAID5/6) has a layout"),
    ({'level': 5, 'chunk_kb': None, 'devices': MODEL[:2]}, 'devices: RAID5 needs at least 3 members, got 2'),
    ({'level': 0, 'devices': MODEL[:1]}, 'devices: RAID0 needs at least 2 members, got 1'),
    ({'devices': MODEL[:3] + ['/dev/nvme0n1']}, "devices[3]='/dev/nvme0n1' is /dev/nvme0n1, the same device as %r (duplicate member)" % MODEL[0]),
    ({'devices': MODEL[:3] + [MODEL[2]]}, "devices[3]=%r is /dev/nvme2n1, the same device as %r" % (MODEL[2], MODEL[2])),
    ({'devices': MODEL[:3] + ['/dev/nvme0']}, "devices[3]='/dev/nvme0': /dev/nvme0 (resolves to /dev/nvme0) is not a block device"),
    ({'devices': MODEL[:3] + ['/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_GONE']}, 'does not exist'),
    ({'devices': []}, 'devices is required with state=present'),
    ({'name': 'bad name'}, "name='bad name': must be 1-32 letters"),
    ({'metadata': '2.0'}, "metadata='2.0' is not an md superblock format"),
    ({'state': 'absent'}, "state=absent destroys array 'model' (stop + zero superblocks); it requires force=true"),
    ({'bitmap': 'internal'}, "bitmap='internal': RAID0 keeps no redundancy, so a write-intent bitmap has nothing to resync"),
    ({'sync_speed_max': 'fast'}, "sync_speed_max='fast': must be a positive whole number of KiB/s or system"),
])
def test_validation_before_anything(tmp_path, monkeypatch, conf, args, needle):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    failed, result = run_module(mdadm_array.main, model_args(conf, **args))
    assert failed, result
    assert needle in result['msg'], result['msg']
    assert system.calls == []


def test_raid10_two_members_is_accepted():
    params = {'name': 'index', 'state': 'present', 'level': '10', 'devices': INDEX, 'chunk_kb': None, 'layout': None,
              'metadata': None, 'bitmap': None, 'sync_speed_max': None, 'force': False}
    assert mdadm_array.validate(params) == ('10', 2)
    params['devices'] = MODEL
    assert mdadm_array.validate(params) == ('10', 2)


# ---------------------------------------------------------------- absent

def test_absent_stops_and_zeroes(tmp_path, monkeypatch, conf):
    conf.write_text(conf.read_text() + '\n# inferops.node mdadm_array: model\n%s\n' % MODEL_LINE)
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    stop = ['mdadm', '--stop', '/dev/md127']
    zero = ['mdadm', '--zero-superblock', '/dev/nvme0n1', '/dev/nvme1n1', '/dev/nvme2n1', '/dev/nvme3n1']
    system.on(stop, err='@mdadm/stop.txt.stderr', then='stopped')
    system.on(zero, then='fresh')
    failed, result = run_module(mdadm_array.main, {'name': 'model', 'state': 'absent', 'force': True, 'mdadm_conf': str(conf)})
    assert not failed, result
    assert result['commands'] == [stop, zero]
    assert result['actions'] == ['stopped', 'zeroed', 'conf_updated'] and result['initramfs_update_needed']
    assert 'model' not in conf.read_text()
    assert conf.read_text() == fixture('mdadm_conf', 'debian_default.conf').rstrip('\n') + '\n'
    system.calls[:] = []
    system.blank_members(['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1'])
    failed, again = run_module(mdadm_array.main, {'name': 'model', 'state': 'absent', 'force': True, 'devices': list(MODEL),
                                                  'mdadm_conf': str(conf)})
    assert not failed and not again['changed'], again


# ---------------------------------------------------------------- list form (arrays)

CREATE_INDEX = ['mdadm', '--create', '/dev/md/index', '--name=index', '--level=10', '--raid-devices=2', '--run',
                '/dev/nvme4n1', '/dev/nvme5n1']


def model_entry(**extra):
    entry = {'name': 'model', 'level': '0', 'chunk_kb': 512, 'devices': list(MODEL)}
    entry.update(extra)
    return entry


def index_entry(**extra):
    entry = {'name': 'index', 'level': '10', 'devices': list(INDEX)}
    entry.update(extra)
    return entry


def list_args(conf, *entries, **extra):
    args = {'arrays': list(entries), 'mdadm_conf': str(conf)}
    args.update(extra)
    return args


@pytest.fixture
def conf_writes(monkeypatch):
    """Paths written through textfile.write_text_atomic, in order."""
    writes = []
    real = mdadm_array.textfile.write_text_atomic

    def write(module, path, content, **kwargs):
        writes.append(path)
        return real(module, path, content, **kwargs)
    monkeypatch.setattr(mdadm_array.textfile, 'write_text_atomic', write)
    return writes


def _answer_two_fresh(system):
    system.blank_members(['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1', 'nvme4n1', 'nvme5n1'])
    system.on(CREATE_MODEL, out='@mdadm/create_raid0.txt', err='@mdadm/create_raid0.txt.stderr', then='raid0')
    system.on(CREATE_INDEX, out='@mdadm/create_raid10.txt', err='@mdadm/create_raid10.txt.stderr', then='raid10_resync')
    system.on(SETTLE)
    answer_model_running(system)
    answer_index(system, 'raid10_resync')


def test_list_creates_two_arrays_then_idempotent(tmp_path, monkeypatch, conf, conf_writes):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    _answer_two_fresh(system)
    failed, result = run_module(mdadm_array.main, list_args(conf, model_entry(), index_entry()), diff=True)
    assert not failed, result
    assert changing(system) == [CREATE_MODEL, CREATE_INDEX]
    assert result['changed'] and result['conf_changed'] and result['initramfs_update_needed']
    assert result['commands'] == [CREATE_MODEL, CREATE_INDEX]
    assert result['actions'] == ['created', 'conf_updated']
    assert 'array' not in result and 'conf_line' not in result and 'members' not in result
    model, index = result['arrays']
    assert (model['name'], model['actions'], model['commands']) == ('model', ['created', 'conf_updated'], [CREATE_MODEL])
    assert (index['name'], index['actions'], index['commands']) == ('index', ['created', 'conf_updated'], [CREATE_INDEX])
    assert model['changed'] and index['changed'] and model['conf_changed'] and index['conf_changed']
    assert (model['array']['kname'], model['array']['uuid'], model['array']['status']) == ('md127', MODEL_UUID, 'clean')
    assert (index['array']['kname'], index['array']['uuid'], index['array']['status']) == ('md126', INDEX_UUID, 'resyncing')
    assert [m['kname'] for m in index['members']] == ['nvme4n1', 'nvme5n1']
    assert (model['conf_line'], index['conf_line']) == (MODEL_LINE, INDEX_LINE)
    # mdadm.conf written once, with both managed lines in request order
    assert conf_writes == [str(conf)]
    text = conf.read_text()
    assert text == DEFAULT.rstrip('\n') + '\n\n' + MANAGED + '\n# inferops.node mdadm_array: index\n%s\n' % INDEX_LINE
    assert [d['before_header'] for d in result['diff']] == ['md array model', 'md array index', str(conf)]
    assert 'member: /dev/nvme5n1 role 1' in result['diff'][1]['after'] and result['diff'][2]['after'] == text

    system.calls[:] = []
    conf_writes[:] = []
    failed, again = run_module(mdadm_array.main, list_args(conf, model_entry(), index_entry()))
    assert not failed and not again['changed'], again
    assert again['actions'] == [] and again['commands'] == [] and not again['initramfs_update_needed']
    assert [(a['name'], a['changed'], a['actions']) for a in again['arrays']] == [('model', False, []), ('index', False, [])]
    assert changing(system) == [] and conf_writes == [] and conf.read_text() == text


def test_list_check_mode_changes_nothing(tmp_path, monkeypatch, conf, conf_writes):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    _answer_two_fresh(system)
    before = conf.read_text()
    failed, result = run_module(mdadm_array.main, list_args(conf, model_entry(), index_entry()), check_mode=True, diff=True)
    assert not failed, result
    assert result['changed'] and result['initramfs_update_needed']
    assert result['commands'] == [CREATE_MODEL, CREATE_INDEX]
    assert changing(system) == [] and conf_writes == [] and conf.read_text() == before
    assert [a['array']['status'] for a in result['arrays']] == ['absent', 'absent']
    assert len(result['diff']) == 3
    assert 'ARRAY /dev/md/model metadata=1.2 name=<homehost>:model' in result['diff'][2]['after']
    assert 'ARRAY /dev/md/index metadata=1.2 name=<homehost>:index' in result['diff'][2]['after']


def test_list_single_element_matches_single_form(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'raid0')
    answer_model_running(system)
    failed, single = run_module(mdadm_array.main, model_args(conf), check_mode=True)
    failed_list, listed = run_module(mdadm_array.main, list_args(conf, model_entry()), check_mode=True)
    assert not failed and not failed_list
    assert single['arrays'] == listed['arrays']
    assert single['arrays'][0]['array'] == single['array'] and single['arrays'][0]['actions'] == single['actions']
    assert listed['actions'] == ['conf_updated'] and listed['conf_changed']


@pytest.mark.parametrize('entries, needle', [
    ([model_entry(), index_entry(chunk_kb=384)], 'arrays[1] (index): chunk_kb=384: must be a power of two'),
    ([model_entry(), index_entry(devices=INDEX[:1])],
     'arrays[1] (index): devices: RAID10 (two copies) needs an even number of members (2, 4, ...), got 1'),
    ([model_entry(), index_entry(devices=[INDEX[0], BY_ID + 'GONE'])], 'arrays[1] (index): devices[1]='),
    ([model_entry(), model_entry(devices=list(INDEX), level='1', chunk_kb=None)],
     "arrays[1] (model): name 'model' is also used by arrays[0]"),
    ([model_entry(), index_entry(devices=[INDEX[0], '/dev/nvme3n1'])],
     'arrays[1] (index): devices: /dev/nvme3n1 (/dev/nvme3n1) is also a member of arrays[0] (model) as %s' % MODEL[3]),
    ([model_entry(devices=MODEL[:3] + [INDEX[1]]), index_entry()],
     'arrays[1] (index): devices: %s (/dev/nvme5n1) is also a member of arrays[0] (model) as %s' % (INDEX[1], INDEX[1])),
    ([model_entry(name='bad name')], "arrays[0] (bad name): name='bad name': must be 1-32 letters"),
    ([model_entry(), index_entry(state='absent')], "arrays[1] (index): state=absent destroys array 'index'"),
])
def test_list_validation_before_anything(tmp_path, monkeypatch, conf, conf_writes, entries, needle):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    _answer_two_fresh(system)
    before = conf.read_text()
    failed, result = run_module(mdadm_array.main, list_args(conf, *entries))
    assert failed, result
    assert needle in result['msg'], result['msg']
    assert system.calls == [] and conf_writes == [] and conf.read_text() == before
    assert result['arrays'] == [] and not result['changed']


def test_list_failure_in_second_array_keeps_the_first(tmp_path, monkeypatch, conf, conf_writes):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    _answer_two_fresh(system)
    failed, result = run_module(mdadm_array.main, list_args(conf, model_entry(), index_entry(state='assembled')))
    assert failed
    assert result['msg'].startswith("arrays[1] (index): array 'index' is not running")
    assert 'state=assembled never creates' in result['msg']
    assert changing(system) == [CREATE_MODEL]
    model, index = result['arrays']
    assert model['actions'] == ['created', 'conf_updated'] and model['array']['uuid'] == MODEL_UUID
    assert index['failed'] and index['msg'] == result['msg'] and index['actions'] == [] and index['array'] is None
    assert result['changed'] and result['conf_changed'] and result['commands'] == [CREATE_MODEL]
    # the array that was created is recorded; the failed one is not
    assert conf_writes == [str(conf)]
    assert conf.read_text().endswith(MANAGED) and 'index' not in conf.read_text()


@pytest.mark.parametrize('args, needle', [
    ({'name': 'model', 'arrays': [model_entry()]}, 'parameters are mutually exclusive: arrays|name'),
    ({'level': '0', 'arrays': [model_entry()]}, 'parameters are mutually exclusive: arrays|level'),
    ({'state': 'present', 'arrays': [model_entry()]}, 'parameters are mutually exclusive: arrays|state'),
    ({'devices': list(MODEL)}, 'one of the following is required: name, arrays'),
    ({'arrays': [{'level': '0', 'devices': list(MODEL)}]}, 'missing required arguments: name found in arrays'),
])
def test_list_argument_errors(tmp_path, monkeypatch, conf, args, needle):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    failed, result = run_module(mdadm_array.main, dict(args, mdadm_conf=str(conf)))
    assert failed and needle in result['msg'], result['msg']
    assert system.calls == []


def test_list_empty_changes_nothing(tmp_path, monkeypatch, conf, conf_writes):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    failed, result = run_module(mdadm_array.main, list_args(conf))
    assert not failed and not result['changed'] and result['arrays'] == []
    assert system.calls == [] and conf_writes == []


# ---------------------------------------------------------------- mdadm.conf editing (table)

DEFAULT = fixture('mdadm_conf', 'debian_default.conf')
SCAN = fixture('mdadm', 'scan.txt')
INDEX_LINE = SCAN.splitlines()[0]
MANAGED = '# inferops.node mdadm_array: model\n%s\n' % MODEL_LINE


@pytest.mark.parametrize('before, new_line, after', [
    (DEFAULT, MODEL_LINE, DEFAULT.rstrip('\n') + '\n\n' + MANAGED),
    (DEFAULT.rstrip('\n') + '\n\n' + MANAGED, MODEL_LINE, DEFAULT.rstrip('\n') + '\n\n' + MANAGED),
    # mdadm --detail --scan >> mdadm.conf: the model line is taken over in place, index kept
    (DEFAULT + SCAN, MODEL_LINE, DEFAULT + INDEX_LINE + '\n' + MANAGED),
    # a stale managed line (other UUID) is replaced
    (MANAGED.replace(MODEL_UUID, '11111111:22222222:33333333:44444444') + INDEX_LINE + '\n', MODEL_LINE, MANAGED + INDEX_LINE + '\n'),
    # continuation lines belong to the statement
    ('ARRAY /dev/md/model metadata=1.2\n   UUID=%s\nMAILADDR root\n' % MODEL_UUID, MODEL_LINE, MANAGED + 'MAILADDR root\n'),
    # removal
    (DEFAULT + INDEX_LINE + '\n' + MANAGED, None, DEFAULT + INDEX_LINE + '\n'),
    ('', MODEL_LINE, MANAGED),
    (None, None, ''),
])
def test_update_conf_text(before, new_line, after):
    assert mdadm_array.update_conf_text(before, 'model', '/dev/md/model', MODEL_UUID, new_line) == after


def test_kernel_uuid_to_mdadm():
    assert md.kernel_uuid_to_mdadm('ae809e5b-1362-128b-161f-63bf74fd1500') == MODEL_UUID
    assert md.kernel_uuid_to_mdadm('') is None


# ---------------------------------------------------------------- bitmap and resync limit (issue 33 item 10)

def test_create_with_bitmap_and_held_resync(tmp_path, monkeypatch, conf):
    """A new RAID10 array is created with its bitmap and held to its resync limit from its first resync."""
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.blank_members(['nvme4n1', 'nvme5n1'])
    create = CREATE_INDEX[:6] + ['--bitmap=internal'] + CREATE_INDEX[6:]
    hold = ['tee', '/sys/block/md126/md/sync_speed_max']
    system.on(create, out='@mdadm/create_raid10.txt', err='@mdadm/create_raid10.txt.stderr', then='raid10_resync')
    system.on(SETTLE)
    system.on(hold, out='2000\n')
    answer_index(system, 'raid10_resync')
    failed, result = run_module(mdadm_array.main, list_args(conf, index_entry(bitmap='internal', sync_speed_max='2000')))
    assert not failed, result
    assert result['commands'] == [create, hold]
    assert result['actions'] == ['created', 'sync_speed_max', 'conf_updated']


def test_create_check_mode_names_the_held_resync(tmp_path, monkeypatch, conf):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.blank_members(['nvme4n1', 'nvme5n1'])
    failed, result = run_module(mdadm_array.main, list_args(conf, index_entry(bitmap='internal', sync_speed_max='2000')),
                                check_mode=True)
    assert not failed, result
    assert result['actions'] == ['created', 'sync_speed_max', 'conf_updated']
    assert result['commands'][-1] == ['tee', '/sys/block/</dev/md/index>/md/sync_speed_max']
    assert changing(system) == [] and [c for c in system.calls if c[0] == 'tee'] == []
