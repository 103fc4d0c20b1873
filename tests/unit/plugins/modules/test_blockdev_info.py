# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""blockdev_info on the local_nvme lab guest with its arrays built (tests/unit/fixtures/md_info/arrays: the sysfs
and /dev snapshot, and blkid's recorded answers), every command asserted with its C locale."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.modules import blockdev_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module

C_LOCALE = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}
LABMODEL0 = '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0'


class Guest(FakeHost):
    fixtures = 'md_info'
    snapshot_file = '%s/snapshot.json'

    def __init__(self, tmp_path, monkeypatch):
        super(Guest, self).__init__(tmp_path, monkeypatch, 'arrays')
        for kname in ('md127', 'nvme0n1'):
            self.on(['blkid', '-p', '-o', 'export', '/dev/' + kname], out='@arrays/blkid.%s.txt' % kname)


def read(devices, check_mode=False):
    failed, result = run_module(blockdev_info.main, {'devices': devices}, check_mode=check_mode)
    assert not failed and result['changed'] is False
    return result


def test_array_member_missing_and_not_a_block_device(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch)
    result = read(['/dev/md/models', LABMODEL0, '/dev/disk/by-id/nvme-NOSUCH', '/dev/nvme0'], check_mode=True)
    models, member, missing, controller = result['devices']
    assert models['path'] == '/dev/md/models' and models['exists']
    assert (models['device'], models['kname'], models['kind'], models['transport']) == ('/dev/md127', 'md127', 'md', None)
    assert models['size_bytes'] == 8372224 * 512 and models['read_ahead_kb'] == 4096 and models['holders'] == []
    assert (models['fstype'], models['uuid'], models['label']) == ('xfs', '30e939a0-d46d-4438-ac46-814cc3415c0c', None)
    assert models['blkid']['USAGE'] == 'filesystem' and models['problem'] is None
    # A by-id link of a PCIe namespace that is an array member: the md superblock is what blkid finds.
    assert (member['device'], member['kind'], member['transport']) == ('/dev/nvme0n1', 'nvme', 'pcie')
    assert member['holders'] == ['md127'] and member['fstype'] == 'linux_raid_member'
    assert member['label'] == 'node1:models'
    assert missing['exists'] is False and missing['device'] is None
    assert missing['problem'] == 'device /dev/disk/by-id/nvme-NOSUCH does not exist'
    # The controller's character device: there, not a block device, never probed.
    assert controller['exists'] is True and controller['kname'] is None
    assert controller['problem'].startswith('/dev/nvme0 (resolves to /dev/nvme0) is not a block device')
    # Only the two block devices were probed, read-only, in check mode too, in the C locale.
    assert guest.calls == [['blkid', '-p', '-o', 'export', '/dev/md127'], ['blkid', '-p', '-o', 'export', '/dev/nvme0n1']]
    assert guest.environ == [C_LOCALE] * 2
    assert [c['argv'] for c in result['command_log']] == guest.calls


def test_empty_device_and_failed_probe(tmp_path, monkeypatch):
    guest = Guest(tmp_path, monkeypatch)
    guest.on(['blkid', '-p', '-o', 'export', '/dev/nvme1n1'], rc=2)  # nothing found
    guest.on(['blkid', '-p', '-o', 'export', '/dev/nvme2n1'], rc=4, err='blkid: error: /dev/nvme2n1: Input/output error')
    empty, failed = read(['nvme1n1', '/dev/nvme2n1'])['devices']
    assert empty['exists'] and empty['blkid'] == {} and empty['fstype'] is None and empty['problem'] is None
    assert failed['fstype'] is None and failed['problem'] == (
        'blkid -p -o export /dev/nvme2n1 failed (rc=4): blkid: error: /dev/nvme2n1: Input/output error')
