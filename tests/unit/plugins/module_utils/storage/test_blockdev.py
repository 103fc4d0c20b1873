# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils.blockdev against outputs recorded on the local_nvme lab guest."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.storage import blockdev
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import (
    FakeSystem, INDEX, MODEL, fixture, fixture_path,
)

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'blockdev_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)


def _subset(actual, expected, where):
    for key, value in expected.items():
        assert key in actual, '%s: no %s' % (where, key)
        if isinstance(value, dict) and isinstance(actual[key], dict):
            _subset(actual[key], value, '%s.%s' % (where, key))
        else:
            assert actual[key] == value, '%s.%s: %r != %r' % (where, key, actual[key], value)


@pytest.mark.parametrize('case', CASES['mdstat'], ids=lambda c: c['fixture'])
def test_parse_mdstat(case):
    parsed = blockdev.parse_mdstat(fixture('mdstat', case['fixture']))
    assert parsed['personalities'] == ['linear', 'multipath', 'raid0', 'raid1', 'raid6', 'raid5', 'raid4', 'raid10']
    assert sorted(parsed['arrays']) == sorted(case['arrays'])
    for name, expected in case['arrays'].items():
        array = dict(parsed['arrays'][name])
        array['faulty'] = [m['name'] for m in array['members'] if m['faulty']]
        array['spare'] = [m['name'] for m in array['members'] if m['spare']]
        array['members'] = [m['name'] for m in array['members']]
        _subset(array, expected, name)


@pytest.mark.parametrize('case', CASES['mdadm_detail'], ids=lambda c: c['fixture'])
def test_parse_mdadm_detail(case):
    parsed = blockdev.parse_mdadm_detail(fixture('mdadm', case['fixture']))
    if 'device' in case:
        assert parsed['device'] == case['device']
    _subset(parsed['fields'], case.get('fields', {}), 'fields')
    assert parsed['state'] == case['state']
    if 'sync_status' in case:
        assert parsed['sync_status'] == case['sync_status']
    assert len(parsed['devices']) == len(case['devices'])
    for row, expected in zip(parsed['devices'], case['devices']):
        _subset(row, expected, 'devices')


@pytest.mark.parametrize('case', CASES['mdadm_export'], ids=lambda c: c['fixture'])
def test_parse_mdadm_export(case):
    parsed = blockdev.parse_mdadm_export(fixture('mdadm', case['fixture']))
    _subset(parsed, case['keys'], 'export')
    assert blockdev.md_members_from_export(parsed) == case['members']


@pytest.mark.parametrize('value, expected', [
    ('0 / 2093056', (0, 2093056, 0.0)),
    ('5632 / 2093056', (5632, 2093056, 0.3)),
    ('none', (None, None, None)),
    ('delayed', (None, None, None)),
    (None, (None, None, None)),
])
def test_parse_sync_completed(value, expected):
    assert blockdev.parse_sync_completed(value) == expected


@pytest.mark.parametrize('level, expected', [('raid10', '10'), (10, '10'), ('RAID0', '0'), ('1', '1'), ('linear', 'linear')])
def test_md_level_number(level, expected):
    assert blockdev.md_level_number(level) == expected


@pytest.mark.parametrize('case', CASES['stripe'], ids=lambda c: c['snapshot'])
def test_md_stripe_width(tmp_path, monkeypatch, case):
    FakeSystem(tmp_path, monkeypatch, case['snapshot'])
    width, explanation = blockdev.md_stripe_width_kb(case['kname'])
    assert width == case['width_kb']
    assert case['kname'] in explanation


def test_md_default_read_ahead_is_twice_the_stripe():
    # The recorded local_nvme models array: RAID0, 4 x 512 KiB chunks = 2048 KiB stripe -> 4096 KiB.
    assert blockdev.md_default_read_ahead_kb(2048) == 4096


def test_md_sysfs_state_resync(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'raid10_resync')
    state = blockdev.md_sysfs_state('md126')
    assert state['level'] == 'raid10'
    assert state['raid_disks'] == 2
    assert state['chunk_kb'] == 512
    assert state['layout'] == 258
    assert state['sync_action'] == 'resync'
    assert (state['sync_done'], state['sync_total']) == (0, 2093056)
    assert state['uuid'] == 'aa3a12d1-73e9-1904-dc53-50fbbb8f6975'
    assert state['members'] == [{'kname': 'nvme4n1', 'slot': '0', 'state': 'in_sync'},
                                {'kname': 'nvme5n1', 'slot': '1', 'state': 'in_sync'}]


def test_md_sysfs_state_faulty(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'raid10_faulty')
    state = blockdev.md_sysfs_state('md126')
    assert state['degraded'] == 1
    assert {'kname': 'nvme5n1', 'slot': 'none', 'state': 'faulty'} in state['members']


@pytest.mark.parametrize('path, kname', [
    (MODEL[0], 'nvme0n1'),
    (INDEX[1], 'nvme5n1'),
    (MODEL[2] + '_1', 'nvme2n1'),
    ('/dev/disk/by-id/nvme-nvme.1b36-4c41424d4f44454c33-51454d55204e564d65204374726c-00000001', 'nvme3n1'),
    ('/dev/nvme1n1', 'nvme1n1'),
    ('nvme1n1', 'nvme1n1'),
    ('/dev/md/model', 'md127'),
    ('/dev/disk/by-id/md-uuid-ae809e5b:1362128b:161f63bf:74fd1500', 'md127'),
    ('/dev/md127', 'md127'),
])
def test_resolve_device(tmp_path, monkeypatch, path, kname):
    FakeSystem(tmp_path, monkeypatch, 'raid0')
    assert blockdev.resolve_device(path) == {'path': path, 'device': '/dev/' + kname, 'kname': kname}


@pytest.mark.parametrize('path, message', [
    ('/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_NOPE', 'does not exist'),
    ('/dev/md/index', 'does not exist'),
    ('/dev/nvme0', 'is not a block device'),
    ('/sys/class/block/nvme0n1', 'not a block device node in /dev'),
    ('', 'is not a device path'),
])
def test_resolve_device_errors(tmp_path, monkeypatch, path, message):
    FakeSystem(tmp_path, monkeypatch, 'raid0')
    with pytest.raises(blockdev.BlockDevError) as err:
        blockdev.resolve_device(path)
    assert message in str(err.value)
    if path:
        assert path in str(err.value)


@pytest.mark.parametrize('snapshot, kname, kind, transport, partition', [
    ('raid0', 'nvme0n1', 'nvme', 'pcie', False),
    ('raid0', 'md127', 'md', None, False),
    ('partitioned', 'nvme4n1p1', 'partition', None, True),
    ('raid0', 'vda', 'disk', None, False),
    # NVMe-oF over TCP with native multipath: the namespace head's "device" is the subsystem
    ('fabrics_dm', 'nvme6n1', 'nvme-of', 'tcp', False),
    ('fabrics_dm', 'nvme6c6n1', 'nvme-of', 'tcp', False),
    ('fabrics_dm', 'dm-0', 'dm', None, False),
])
def test_device_kind(tmp_path, monkeypatch, snapshot, kname, kind, transport, partition):
    FakeSystem(tmp_path, monkeypatch, snapshot)
    assert blockdev.device_kind(kname) == {'kind': kind, 'transport': transport, 'partition': partition}


def test_holders_and_partitions(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'partitioned')
    assert blockdev.holders('nvme0n1') == ['md127']
    assert blockdev.holders('nvme4n1') == []
    assert blockdev.partitions('nvme4n1') == ['nvme4n1p1']
    assert blockdev.partitions('nvme0n1') == []


class _Module(object):
    """Just enough AnsibleModule for the probing helpers' CommandRunner."""

    check_mode = False
    run_command_environ_update = {}

    def run_command(self, *args, **kwargs):
        # resolved at call time: FakeSystem patches AnsibleModule.run_command (and checks the C locale)
        return basic.AnsibleModule.run_command(self, *args, **kwargs)

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return name


def _runner():
    return CommandRunner(_Module())


@pytest.mark.parametrize('case', CASES['usage'], ids=lambda c: c['name'])
def test_probe_usage(tmp_path, monkeypatch, case):
    system = FakeSystem(tmp_path, monkeypatch, case['snapshot'])
    dev = '/dev/%s' % case['kname']
    system.on(['wipefs', '--no-act', '--json', dev], out='@wipefs/%s' % case['wipefs'])
    if case['blkid']:
        system.on(['blkid', '-p', '-o', 'export', dev], out='@blkid/%s' % case['blkid'])
    else:
        system.on(['blkid', '-p', '-o', 'export', dev], rc=2)
    system.on(['lsblk', '--json', '-O', dev], out='@lsblk/%s' % case['lsblk'])
    findings = blockdev.probe_usage(_runner(), dev, case['kname'])
    assert sorted(set(f['kind'] for f in findings)) == sorted(case['kinds'])
    assert sorted(set(f['kind'] for f in findings if f['in_use'])) == sorted(case.get('in_use', [k for k in case['kinds'] if k == 'mounted']))
    details = ' | '.join(f['detail'] for f in findings)
    for needle in case.get('details', []):
        assert needle in details


def test_wipefs_and_blkid_raw(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.on(['wipefs', '--no-act', '--json', '/dev/nvme0n1'], out='@wipefs/md_member.json')
    system.on(['wipefs', '--no-act', '--json', '/dev/nvme1n1'], out='')
    system.on(['blkid', '-p', '-o', 'export', '/dev/nvme0n1'], out='@blkid/md_member.txt')
    system.on(['blkid', '-p', '-o', 'export', '/dev/nvme1n1'], rc=4, err='blkid: error')
    module = _runner()
    assert blockdev.wipefs_probe(module, '/dev/nvme0n1') == [{
        'device': 'nvme0n1', 'offset': '0x1000', 'type': 'linux_raid_member',
        'uuid': 'ae809e5b-1362-128b-161f-63bf74fd1500', 'label': 'node1:model'}]
    assert blockdev.wipefs_probe(module, '/dev/nvme1n1') == []
    tags = blockdev.blkid_probe(module, '/dev/nvme0n1')
    assert tags['TYPE'] == 'linux_raid_member' and tags['LABEL'] == 'node1:model'
    with pytest.raises(blockdev.BlockDevError, match='rc=4'):
        blockdev.blkid_probe(module, '/dev/nvme1n1')


def test_udev_properties(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    system.on(['udevadm', 'info', '--query=property', '--name=/dev/nvme0n1'], out='@udevadm/nvme0n1.txt')
    system.on(['udevadm', 'info', '--query=property', '--name=/dev/nvme9n1'], rc=1)
    props = blockdev.udev_properties(_runner(), '/dev/nvme0n1')
    assert props['ID_WWN'] == 'nvme.1b36-4c41424d4f44454c30-51454d55204e564d65204374726c-00000001'
    assert props['ID_SERIAL'] == 'QEMU_NVMe_Ctrl_LABMODEL0_1'
    assert blockdev.udev_properties(_runner(), '/dev/nvme9n1') == {}


def test_lsblk_all_fresh_lists_the_six_drives():
    import json
    names = [d['name'] for d in json.loads(fixture('lsblk', 'all_fresh.json'))['blockdevices']]
    assert set('nvme%dn1' % i for i in range(6)) <= set(names)
    assert os.path.exists(fixture_path('nvme', 'list.json'))


@pytest.mark.parametrize('path, kname', [
    ('/dev/mapper/labdm', 'dm-0'),
    ('/dev/disk/by-id/dm-name-labdm', 'dm-0'),
    ('/dev/disk/by-id/nvme-uuid.7732c940-152c-43d6-b25e-5d05071a4597', 'nvme6n1'),
    ('/dev/disk/by-id/nvme-Linux_dd6325a06db6b137b40e', 'nvme6n1'),
])
def test_resolve_fabrics_and_dm(tmp_path, monkeypatch, path, kname):
    FakeSystem(tmp_path, monkeypatch, 'fabrics_dm')
    assert blockdev.resolve_device(path)['kname'] == kname
