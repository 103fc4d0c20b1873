# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""xfs_mount replayed on findmnt / mount output recorded on the local_nvme lab guest (fixtures/findmnt, fixtures/mount).

The guest's /dev/disk/by-uuid links (fixtures/mount/by-uuid.txt) and /etc/fstab are rebuilt under a temporary root
(``module_utils.sysfs.ROOT``); every command the module runs must be in the table, and the tests assert the exact list
and, through ``module_harness.patch_commands``, that each ran as an argument list in the C locale (``environ``).
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import xfs_mount
from ansible_collections.inferops.node.tests.unit.module_harness import C_LOCALE, command_environ, fixture, patch_commands, run_module

MODELS_UUID = 'd76342ac-1a95-45ed-b8de-f4dd8a5a9db1'  # md127, RAID0 models (by-uuid.txt)
INDEX_UUID = '16356add-1dc5-48b0-9803-e1b45376e548'   # md126, RAID10 index
OPTS = 'noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k'
FINDMNT = ['findmnt', '-J', '-l', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS']
FSTAB_FRESH = '/dev/vda1 / ext4 errors=remount-ro 0 1\n'
FSTAB_DONE = FSTAB_FRESH + (
    'UUID=%s /data/models xfs %s 0 0\n' % (MODELS_UUID, OPTS)
    + 'UUID=%s /data/index xfs %s 0 0\n' % (INDEX_UUID, OPTS))
MOUNTS = [{'path': '/data/models', 'src': 'UUID=' + MODELS_UUID, 'opts': OPTS},
          {'path': '/data/index', 'src': 'UUID=' + INDEX_UUID, 'opts': OPTS}]


class Guest(object):
    """The lab guest: by-uuid links, md device nodes, fstab; findmnt answers switch as mounts happen."""

    def __init__(self, tmp_path, monkeypatch, findmnt, fstab):
        self.root = str(tmp_path / 'guest')
        os.makedirs(os.path.join(self.root, 'dev/disk/by-uuid'))
        os.makedirs(os.path.join(self.root, 'etc'))
        for line in fixture('mount', 'by-uuid.txt').splitlines():
            fields = line.split()
            if len(fields) > 10 and fields[-2] == '->':
                target = fields[-1]
                os.symlink(target, os.path.join(self.root, 'dev/disk/by-uuid', fields[-3]))
                open(os.path.join(self.root, 'dev', os.path.basename(target)), 'w').close()
        with open(self.path('/etc/fstab'), 'w') as handle:
            handle.write(fstab)
        monkeypatch.setattr(sysfs, 'ROOT', self.root)
        self.findmnt = findmnt
        self.calls = []
        self.environ = []
        self.table = {}

        def run_command(module, args, **kwargs):
            self.environ.append(command_environ(module, kwargs))
            return self.run(list(args))
        patch_commands(monkeypatch, run_command)

    def path(self, target):
        return os.path.join(self.root, target.lstrip('/'))

    def fstab(self):
        with open(self.path('/etc/fstab')) as handle:
            return handle.read()

    def on(self, args, rc=0, out='', err='', findmnt=None):
        self.table[tuple(args)] = (rc, out, err, findmnt)

    def run(self, args):
        self.calls.append(args)
        if args == FINDMNT:
            return 0, fixture('findmnt', self.findmnt), ''
        if tuple(args) not in self.table:
            raise AssertionError('unexpected command %r' % (args,))
        rc, out, err, findmnt = self.table[tuple(args)]
        if findmnt:
            self.findmnt = findmnt
        return rc, out, err


def mount_cmd(path, uuid):
    return ['mount', '-t', 'xfs', '-o', OPTS, 'UUID=' + uuid, path]


def remount_cmd(path, dev, opts=OPTS):
    return ['mount', '-o', 'remount,' + opts, dev, path]


def test_fresh_mounts_then_fstab(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh.json', FSTAB_FRESH)
    guest.on(mount_cmd('/data/models', MODELS_UUID))
    guest.on(mount_cmd('/data/index', INDEX_UUID), findmnt='mounted.json')
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS}, diff=True)
    assert not failed, result
    assert result['changed'] and result['fstab_changed']
    assert guest.calls == [FINDMNT, mount_cmd('/data/models', MODELS_UUID), mount_cmd('/data/index', INDEX_UUID), FINDMNT]
    assert guest.environ == [C_LOCALE] * 4
    assert result['command_log'] == [{'argv': call, 'rc': 0, 'ran': True} for call in guest.calls]
    assert [m['action'] for m in result['mounts']] == ['mount', 'mount']
    assert [m['device'] for m in result['mounts']] == ['/dev/md127', '/dev/md126']
    assert result['mounts'][0]['after'][:3] == ['rw', 'noatime', 'nodiratime']
    assert result['mounts'][0]['pending'] == []
    assert guest.fstab() == FSTAB_DONE
    assert os.path.isdir(guest.path('/data/models'))
    assert result['diff'][0]['before'] == FSTAB_FRESH and result['diff'][0]['after'] == FSTAB_DONE


def test_second_run_changes_nothing(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS})
    assert not failed and not result['changed'], result
    assert guest.calls == [FINDMNT]
    assert result['commands'] == [] and [m['action'] for m in result['mounts']] == ['none', 'none']


def test_missing_flag_is_remounted_not_unmounted(tmp_path, monkeypatch):
    """/data/models remounted relatime by hand (models_relatime.json): a remount restores noatime."""
    guest = Guest(tmp_path, monkeypatch, 'models_relatime.json', FSTAB_DONE)
    guest.on(remount_cmd('/data/models', '/dev/md127'), findmnt='mounted.json')
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS}, diff=True)
    assert not failed and result['changed'], result
    assert guest.calls == [FINDMNT, remount_cmd('/data/models', '/dev/md127'), FINDMNT]
    models = result['mounts'][0]
    assert (models['action'], models['reason']) == ('remount', 'live options lack noatime,nodiratime')
    assert 'relatime' in models['before'] and 'noatime' in models['after']
    assert not result['fstab_changed'] and guest.fstab() == FSTAB_DONE
    assert '/data/models rw,relatime,' in result['diff'][1]['before']


def test_changed_fstab_options_are_tried_by_a_remount_first(tmp_path, monkeypatch):
    """Options a remount cannot show (logbufs=4) still go through the kernel before fstab names them."""
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    opts = OPTS.replace('logbufs=8', 'logbufs=4')
    guest.on(remount_cmd('/data/index', '/dev/md126', opts))
    failed, result = run_module(xfs_mount.main, {'mounts': [MOUNTS[0], dict(MOUNTS[1], opts=opts)]})
    assert not failed and result['changed'], result
    assert guest.calls == [FINDMNT, remount_cmd('/data/index', '/dev/md126', opts), FINDMNT]
    assert result['mounts'][1]['pending'] == ['logbufs=4']
    assert 'UUID=%s /data/index xfs %s 0 0' % (INDEX_UUID, opts) in guest.fstab()


def test_failed_remount_keeps_the_mount_and_fstab(tmp_path, monkeypatch):
    """The kernel refuses 'remount,ro,norecovery' (recorded rc 32): no umount is attempted, fstab unchanged."""
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    err = fixture('mount', 'remount_norecovery.stderr')
    guest.on(remount_cmd('/data/models', '/dev/md127', 'ro,norecovery'), rc=32, err=err.replace('/data/index', '/data/models'))
    guest.on(remount_cmd('/data/index', '/dev/md126', 'ro,norecovery'), rc=32, err=err, findmnt='after_failed_remount.json')
    mounts = [dict(m, opts='ro,norecovery') for m in MOUNTS]
    failed, result = run_module(xfs_mount.main, {'mounts': mounts})
    assert failed
    assert guest.calls == [FINDMNT, remount_cmd('/data/models', '/dev/md127', 'ro,norecovery'),
                           remount_cmd('/data/index', '/dev/md126', 'ro,norecovery'), FINDMNT]
    assert not any(c[0] == 'umount' for c in guest.calls)
    # read back after the failure (after_failed_remount.json): both still mounted with their old options
    assert [m['after'] == m['before'] for m in result['mounts']] == [True, True]
    assert guest.fstab() == FSTAB_DONE and not result['fstab_changed'] and not result['changed']
    assert "remount of /data/index with 'ro,norecovery' failed (rc 32: mount: /data/index: mount point not mounted or bad option." in result['msg']
    assert 'it stays mounted with its previous options (rw,noatime,nodiratime,attr2' in result['msg']
    assert 'its fstab entry was not changed' in result['msg']
    assert [m['failed'] for m in result['mounts']] == [True, True]
    assert 'dmesg(1) may have more information' in result['mounts'][1]['stderr']


def test_one_failure_does_not_stop_the_other_entry(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'models_relatime.json', FSTAB_FRESH)
    guest.on(remount_cmd('/data/models', '/dev/md127'), rc=32, err=fixture('mount', 'remount_norecovery.stderr'))
    guest.on(remount_cmd('/data/index', '/dev/md126'))
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS})
    assert failed
    fstab = guest.fstab()
    assert '/data/index xfs' in fstab and '/data/models' not in fstab
    assert [m['fstab_changed'] for m in result['mounts']] == [False, True]


def test_failed_mount(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh.json', FSTAB_FRESH)
    uuid = '00000000-0000-0000-0000-000000000000'
    guest.on(mount_cmd('/data/models', uuid), rc=1, err=fixture('mount', 'mount_unknown_uuid.stderr'))
    failed, result = run_module(xfs_mount.main, {'mounts': [dict(MOUNTS[0], src='UUID=' + uuid)]})
    assert failed
    assert 'mount of UUID=%s on /data/models' % uuid in result['msg']
    assert "can't find UUID=%s" % uuid in result['msg']
    assert 'it stays unmounted' in result['msg']
    assert guest.fstab() == FSTAB_FRESH and result['mounts'][0]['device'] is None


def test_other_filesystem_on_top_is_refused_before_any_change(tmp_path, monkeypatch):
    """tmpfs stacked on /data/index (index_tmpfs_on_top.json): refused, nothing run, fstab unchanged."""
    guest = Guest(tmp_path, monkeypatch, 'index_tmpfs_on_top.json', FSTAB_FRESH)
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS})
    assert failed
    assert guest.calls == [FINDMNT]
    assert result['msg'] == (
        'xfs_mount: refused, nothing was changed: /data/index holds tmpfs (tmpfs), wanted UUID=%s = /dev/md126 (xfs): '
        'refusing to touch it - a mounted filesystem is never replaced; unmount /data/index by hand or choose another mount point'
        % INDEX_UUID)
    assert guest.fstab() == FSTAB_FRESH


def test_other_device_is_refused(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': [dict(MOUNTS[1], path='/data/models')]})
    assert failed and guest.calls == [FINDMNT]
    assert '/data/models holds /dev/md127 (xfs), wanted UUID=%s = /dev/md126 (xfs)' % INDEX_UUID in result['msg']


def test_check_mode_predicts(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh.json', FSTAB_FRESH)
    mounts = [dict(MOUNTS[0], src='UUID=(assigned-by-mkfs.xfs)'), MOUNTS[1]]
    failed, result = run_module(xfs_mount.main, {'mounts': mounts}, check_mode=True, diff=True)
    assert not failed and result['changed'], result
    assert guest.calls == [FINDMNT]
    assert result['commands'] == [['mount', '-t', 'xfs', '-o', OPTS, 'UUID=(assigned-by-mkfs.xfs)', '/data/models'],
                                  mount_cmd('/data/index', INDEX_UUID)]
    assert guest.fstab() == FSTAB_FRESH and not os.path.exists(guest.path('/data/models'))
    assert 'UUID=(assigned-by-mkfs.xfs) /data/models xfs' in result['diff'][0]['after']


def test_check_mode_remount(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'models_relatime.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS}, check_mode=True)
    assert not failed and result['changed']
    assert guest.calls == [FINDMNT]
    assert result['commands'] == [remount_cmd('/data/models', '/dev/md127')]


def test_fstab_ignore(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_FRESH)
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS, 'fstab': 'ignore'})
    assert not failed and not result['changed'] and guest.calls == [FINDMNT]
    assert guest.fstab() == FSTAB_FRESH


def test_fstab_other_lines_kept_duplicates_merged(tmp_path, monkeypatch):
    fstab = FSTAB_FRESH + '# models\nUUID=old /data/models xfs relatime 0 0\nUUID=older /data/models xfs defaults 0 0\n'
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', fstab)
    guest.on(remount_cmd('/data/models', '/dev/md127'))
    failed, result = run_module(xfs_mount.main, {'mounts': MOUNTS[:1]})
    assert not failed, result
    assert guest.fstab() == FSTAB_FRESH + '# models\nUUID=%s /data/models xfs %s 0 0\n' % (MODELS_UUID, OPTS)


@pytest.mark.parametrize('opts, fragment', [
    ('noatime,,x', "mounts[0].opts = 'noatime,,x' (/data/models): empty item"),
    ('ro,rw', 'ro and rw: conflicting options'),
    ('logbufs=9', 'logbufs=9: must be an integer from 2 to 8'),
])
def test_invalid_options_refused_before_reading_anything(tmp_path, monkeypatch, opts, fragment):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': [dict(MOUNTS[0], opts=opts)]})
    assert failed and guest.calls == []
    assert result['msg'].startswith('xfs_mount: invalid input, nothing was changed: ')
    assert fragment in result['msg']


@pytest.mark.parametrize('entry, fragment', [
    ({'path': 'data/models'}, "mounts[0].path = 'data/models': must be an absolute path"),
    ({'path': '/data/models/'}, 'must be an absolute path without blanks or a trailing /'),
    ({'src': 'md127'}, "mounts[0].src = 'md127': must be UUID=..."),
])
def test_invalid_path_and_source(tmp_path, monkeypatch, entry, fragment):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': [dict(MOUNTS[0], **entry)]})
    assert failed and guest.calls == [] and fragment in result['msg'], result


def test_duplicate_path(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': [MOUNTS[0], MOUNTS[0]]})
    assert failed and "mounts[1].path = '/data/models': listed twice" in result['msg'] and guest.calls == []


def test_absent_unmounts_and_drops_the_fstab_entry(tmp_path, monkeypatch):
    """Only an entry that asks for it is unmounted; the other mount and fstab lines stay."""
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    guest.on(['umount', '/data/index'], findmnt='fresh.json')
    failed, result = run_module(xfs_mount.main, {'mounts': [MOUNTS[0], {'path': '/data/index', 'state': 'absent'}]})
    assert not failed and result['changed'], result
    assert guest.calls == [FINDMNT, ['umount', '/data/index'], FINDMNT]
    assert [m['action'] for m in result['mounts']] == ['none', 'unmount']
    assert result['mounts'][1]['after'] is None and result['mounts'][1]['fstab_changed']
    assert guest.fstab() == FSTAB_FRESH + 'UUID=%s /data/models xfs %s 0 0\n' % (MODELS_UUID, OPTS)


def test_absent_not_mounted_only_drops_the_fstab_entry(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh.json', FSTAB_DONE)
    failed, result = run_module(xfs_mount.main, {'mounts': [{'path': '/data/index', 'state': 'absent'}]}, check_mode=True)
    assert not failed and result['changed'] and result['commands'] == [], result
    assert guest.fstab() == FSTAB_DONE  # check mode
    failed, result = run_module(xfs_mount.main, {'mounts': [{'path': '/data/index', 'state': 'absent'}]})
    assert not failed and result['changed'] and guest.calls == [FINDMNT, FINDMNT]
    assert '/data/index' not in guest.fstab() and '/data/models' in guest.fstab()
    failed, result = run_module(xfs_mount.main, {'mounts': [{'path': '/data/index', 'state': 'absent'}]})
    assert not failed and not result['changed'], result


def test_absent_busy_stays_mounted_and_in_fstab(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'mounted.json', FSTAB_DONE)
    guest.on(['umount', '/data/index'], rc=32, err=fixture('mount', 'umount_busy.stderr'))
    failed, result = run_module(xfs_mount.main, {'mounts': [{'path': '/data/index', 'state': 'absent'}]})
    assert failed and not result['changed']
    assert guest.fstab() == FSTAB_DONE
    assert result['msg'] == (
        'xfs_mount: unmount of /data/index failed (rc 32: umount: /data/index: target is busy.); it stays mounted and '
        'its fstab entry was not removed; stop what uses it (fuser -vm /data/index) and run again')


def test_mounted_entry_needs_a_source(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh.json', FSTAB_FRESH)
    failed, result = run_module(xfs_mount.main, {'mounts': [{'path': '/data/models'}]})
    assert failed and guest.calls == []
    assert 'mounts[0].src: required with state=mounted (/data/models)' in result['msg']
