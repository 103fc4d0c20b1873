# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""md_info replayed against the outputs recorded on the local_nvme lab guest in three states
(tests/unit/fixtures/md_info/README.md): fresh, arrays built (models mounted), index degraded."""

from __future__ import annotations

import pytest

from ansible.module_utils import basic

import os

from ansible_collections.inferops.node.plugins.module_utils.storage import findmnt
from ansible_collections.inferops.node.plugins.module_utils.storage import xfs
from ansible_collections.inferops.node.plugins.modules import md_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, fixture_path, run_module

BY_ID = '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_'
MODELS = [BY_ID + 'LABMODEL%d' % i for i in range(4)]
INDEX = [BY_ID + 'LABINDEX%d' % i for i in range(2)]
DRIVES = ['nvme%dn1' % i for i in range(6)]
C_LOCALE = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}
UNITS = ['fstrim.timer', 'mdcheck_start.timer', 'mdcheck_continue.timer', 'inferops-mdcheck-start.timer',
         'inferops-mdcheck-continue.timer']
GOOD_CALENDAR = 'Sun *-*-1..7 02:00:00 UTC'
BAD_CALENDAR = 'Someday 25:61'
MODELS_UUID = '431e323b:3fb5221c:18dd7f80:dfc89c1d'
INDEX_UUID = '84c66811:c03e8ebf:5d6a4acf:3a687755'
REQUEST = [{'name': 'models', 'devices': MODELS, 'mount': '/data/models'},
           {'name': 'index', 'devices': INDEX, 'mount': '/data/index'}]


class Guest(FakeHost):
    """The recorded guest in one state; every command answered from fixtures/md_info/<state>/."""

    fixtures = 'md_info'
    snapshot_file = '%s/snapshot.json'

    def __init__(self, tmp_path, monkeypatch, state, arrays=()):
        # FakeHost records each call's environment (``environ``), UTHelper-style.
        super(Guest, self).__init__(tmp_path, monkeypatch, state)
        self.on(['udevadm', 'settle', '--timeout=60'])
        self.on(findmnt.FINDMNT, out='@%s/findmnt.json' % state)
        self.on(['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState'] + UNITS,
                out='@%s/systemctl_show.txt' % state)
        self.on(['systemd-analyze', 'calendar', GOOD_CALENDAR], out='@calendar_start.txt')
        self.on(['systemd-analyze', 'calendar', BAD_CALENDAR], rc=1, err='@calendar_bad.txt.stderr')
        for kname in list(arrays) + DRIVES:
            rc = 2 if state == 'fresh' else 0
            self.on(['blkid', '-p', '-o', 'export', '/dev/' + kname], out='@%s/blkid.%s.txt' % (state, kname), rc=rc)
            self.on(['wipefs', '--no-act', '--json', '/dev/' + kname], out='@%s/wipefs.%s.json' % (state, kname))
        for kname in arrays:
            self.on(['mdadm', '--detail', '--export', '/dev/' + kname], out='@%s/mdadm_detail_export.%s.txt' % (state, kname))
            self.on(['mdadm', '--detail', '/dev/' + kname], out='@%s/mdadm_detail.%s.txt' % (state, kname))
        # What was mounted on an array's mount point when the state was recorded.
        for name in ('models', 'index'):
            if os.path.exists(fixture_path('md_info', state, 'space.%s.json' % name)):
                self.on(xfs.space_argv('/data/' + name), out='@%s/space.%s.json' % (state, name))
                self.on(xfs.xfs_info_argv('/data/' + name), out='@%s/xfs_info.%s.txt' % (state, name))


def run(guest, **args):
    failed, result = run_module(md_info.main, dict({'arrays': REQUEST}, **args))
    assert not failed, result
    assert result['changed'] is False
    # Every command ran in the C locale, as argument lists.
    assert guest.environ == [C_LOCALE] * len(guest.calls) and guest.calls
    assert [entry['argv'] for entry in result['command_log']] == guest.calls
    return result


def test_fresh_guest(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh')
    result = run(guest, units=UNITS, calendars=[GOOD_CALENDAR, BAD_CALENDAR])
    assert sorted(result['arrays']) == ['index', 'models']
    models = result['arrays']['models']
    assert (models['exists'], models['kname'], models['requested'], models['mount']) == (False, None, True, '/data/models')
    assert models['summary'] == 'models: /dev/md/models does not exist'
    member = result['members'][MODELS[0]]
    assert (member['usage'], member['detail'], member['device'], member['kname']) == ('free', 'free', '/dev/nvme0n1', 'nvme0n1')
    assert (member['serial'], member['model'], member['size_bytes'], member['by_id']) == (
        'LABMODEL0', 'QEMU NVMe Ctrl', 1073741824, MODELS[0])
    assert member['signatures'] == [] and member['blkid'] == {} and member['role'] is None
    assert result['units']['fstrim.timer'] == {'enabled': 'enabled', 'active': 'active', 'load': 'loaded'}
    assert result['units']['inferops-mdcheck-start.timer']['enabled'] == 'not-found'
    assert result['calendars'] == {GOOD_CALENDAR: True, BAD_CALENDAR: False}
    assert 'files' not in result
    assert result['autocheck'] == 'true'
    assert result['mdcheck'] is True
    assert result['sysctl'] == {'speed_limit_min': 1000, 'speed_limit_max': 200000}
    assert result['initramfs']['initrd'] == '/boot/initrd.img-6.1.0-57-amd64'
    assert result['initramfs']['conf'] == '/etc/mdadm/mdadm.conf'
    assert result['mounts']['/']['source'] == '/dev/vda1'
    assert '/data/models' not in result['fstab']
    assert ['mdadm', '--detail', '--export', '/dev/md127'] not in guest.calls


def test_arrays_built_and_mounted(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'arrays', arrays=['md126', 'md127'])
    result = run(guest)
    models, index = result['arrays']['models'], result['arrays']['index']
    assert (models['kname'], models['uuid'], models['level'], models['chunk_kb'], models['raid_disks']) == (
        'md127', MODELS_UUID, 'raid0', 512, 4)
    assert (models['status'], models['degraded'], models['failed'], models['spare']) == ('clean', 0, 0, 0)
    assert (models['fstype'], models['mounted_at'], models['blkid']['TYPE']) == ('xfs', ['/data/models'], 'xfs')
    assert [s['type'] for s in models['signatures']] == ['xfs']
    assert [(m['device'], m['role'], m['serial'], m['by_id']) for m in models['members']] == [
        ('/dev/nvme%dn1' % i, str(i), 'LABMODEL%d' % i, MODELS[i]) for i in range(4)]
    assert models['summary'] == 'models: /dev/md/models (md127) raid0 clean, xfs mounted at /data/models'
    assert (index['kname'], index['uuid'], index['level'], index['status'], index['sync_action']) == (
        'md126', INDEX_UUID, 'raid10', 'clean', 'idle')
    assert (index['fstype'], index['mounted_at'], index['layout']) == ('xfs', [], 258)
    member = result['members'][MODELS[2]]
    assert (member['usage'], member['detail'], member['role'], member['holders']) == (
        'ours', 'member of md array models', '2', ['md127'])
    assert member['blkid']['TYPE'] == 'linux_raid_member' and member['signatures'][0]['label'] == 'node1:models'
    assert result['mounts']['/data/models'] == {
        'source': '/dev/md127', 'fstype': 'xfs',
        'options': ['rw', 'noatime', 'nodiratime', 'attr2', 'inode64', 'logbufs=8', 'logbsize=256k', 'sunit=1024',
                    'swidth=4096', 'noquota']}
    assert result['fstab']['/data/models'][1:] == ['/data/models', 'xfs',
                                                   'noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k', '0', '0']
    assert result['sysctl'] == {'speed_limit_min': 10000, 'speed_limit_max': 50000}
    # The recording made its arrays with mdadm --create by hand: Debian's mdadm.conf without an ARRAY line.
    assert result['conf_arrays'] == []


def test_degraded_index(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'degraded', arrays=['md126', 'md127'])
    result = run(guest)
    index = result['arrays']['index']
    assert (index['status'], index['degraded'], index['failed'], index['spare']) == ('degraded', 1, 0, 0)
    assert [(m['device'], m['role']) for m in index['members']] == [('/dev/nvme4n1', '0')]
    assert index['summary'] == 'index: /dev/md/index (md126) raid10 degraded (degraded 1), xfs'
    # The removed drive still carries the array's superblock: it is ours, in no slot.
    removed = result['members'][INDEX[1]]
    assert (removed['usage'], removed['role'], removed['holders']) == ('ours', None, [])


def test_other_array_and_foreign_data_and_missing(tmp_path, monkeypatch):
    """Requested under other names, the same drives are busy (held by another array) or missing."""
    guest = Guest(tmp_path, monkeypatch, 'arrays', arrays=['md126', 'md127'])
    request = [{'name': 'scratch', 'devices': [MODELS[0], BY_ID + 'NOSUCH9', '/dev/nvme0']}]
    result = run(guest, arrays=request)
    assert result['arrays']['scratch']['exists'] is False and result['arrays']['models']['requested'] is False
    assert result['members'][MODELS[0]]['usage'] == 'busy'
    assert result['members'][MODELS[0]]['detail'] == 'is held by md127'
    assert result['members'][BY_ID + 'NOSUCH9']['usage'] == 'missing'
    assert result['members']['/dev/nvme0']['usage'] == 'invalid'


def test_stopped_array_superblock_of_another_array(tmp_path, monkeypatch):
    """A drive whose superblock names another array is data, named with the array's label and UUID."""
    guest = Guest(tmp_path, monkeypatch, 'degraded', arrays=['md126', 'md127'])
    result = run(guest, arrays=[{'name': 'other', 'devices': [INDEX[1]]}])
    assert result['members'][INDEX[1]]['usage'] == 'data'
    assert result['members'][INDEX[1]]['detail'] == (
        'carries the md superblock of another array (node1:index, UUID %s)'
        % '84c66811-c03e-8ebf-5d6a-4acf3a687755')


def test_findmnt_failure_is_reported(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch, 'fresh')
    guest.on(findmnt.FINDMNT, rc=1, err='findmnt: boom')
    failed, result = run_module(md_info.main, {})
    assert failed and 'cannot read the mounts' in result['msg'] and 'findmnt: boom' in result['msg']


@pytest.mark.parametrize('mode', [True, False])
def test_check_mode_reads_the_same(tmp_path, monkeypatch, mode):
    guest = Guest(tmp_path, monkeypatch, 'arrays', arrays=['md126', 'md127'])
    failed, result = run_module(md_info.main, {'arrays': REQUEST}, check_mode=mode)
    assert not failed and not result['changed']
    assert result['arrays']['models']['status'] == 'clean'


def test_filesystems_of_the_mounted_arrays(tmp_path, monkeypatch):
    """Size, free space and XFS geometry of what is mounted on a requested array's mount point only."""
    guest = Guest(tmp_path, monkeypatch, 'arrays', arrays=['md126', 'md127'])
    result = run(guest)
    assert result['filesystems'] == {'/data/models': {
        'fstype': 'xfs', 'size_bytes': 4219469824, 'avail_bytes': 4155973632, 'used_bytes': 63496192,
        'xfs': {'block_size': 4096, 'sunit_bytes': 512 * 1024, 'swidth_bytes': 4 * 512 * 1024, 'ftype': 1,
                'crc': 1, 'reflink': 1, 'agcount': 8}}}
    # index (md126) is not mounted: nothing to read.
    assert ['xfs_info', '/data/index'] not in guest.calls


def test_filesystem_the_roles_would_not_make(tmp_path, monkeypatch):
    """misfit: index re-made as V4 XFS without file types, a 64K stripe, nearly full."""
    guest = Guest(tmp_path, monkeypatch, 'misfit', arrays=['md126', 'md127'])
    index = run(guest)['filesystems']['/data/index']
    assert (index['size_bytes'], index['avail_bytes']) == (1004535808, 26849280)
    assert index['xfs'] == {'block_size': 4096, 'sunit_bytes': 64 * 1024, 'swidth_bytes': 64 * 1024, 'ftype': 0,
                            'crc': 0, 'reflink': 0, 'agcount': 8}


def test_xfs_info_failure_warns_and_reads_the_rest(tmp_path, monkeypatch):
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda module, msg: warnings.append(msg))
    guest = Guest(tmp_path, monkeypatch, 'arrays', arrays=['md126', 'md127'])
    guest.on(xfs.xfs_info_argv('/data/models'), rc=1, err='xfs_info: /data/models is not a mounted XFS filesystem')
    result = run(guest)
    assert result['filesystems']['/data/models']['xfs'] is None
    assert result['filesystems']['/data/models']['avail_bytes'] == 4155973632
    assert warnings == ['md_info: xfs_info /data/models failed (rc 1): xfs_info: /data/models is not a mounted XFS filesystem']
