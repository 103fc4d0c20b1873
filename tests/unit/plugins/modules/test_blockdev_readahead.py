# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""blockdev_readahead replayed on sysfs snapshots of the local_nvme lab guest."""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.node.plugins.modules import blockdev_readahead
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import FakeSystem, INDEX, MODEL, fixture, run_module

NVME4_WWID = 'nvme.1b36-4c4142494e44455830-51454d55204e564d65204374726c-00000001'
NVME0_WWN = 'nvme.1b36-4c41424d4f44454c30-51454d55204e564d65204374726c-00000001'
MODEL_KUUID = 'ae809e5b-1362-128b-161f-63bf74fd1500'
RA = '/sys/block/%s/queue/read_ahead_kb'


@pytest.fixture
def raid(tmp_path, monkeypatch):
    """RAID0 model=md127 (read_ahead_kb 4096) and RAID10 index=md126 (1024), drives at 128."""
    system = FakeSystem(tmp_path, monkeypatch, 'raid10_resync')
    system.on(['udevadm', 'info', '--query=property', '--name=/dev/nvme0n1'], out='@udevadm/nvme0n1.txt')
    for kname in ('nvme4n1', 'nvme5n1', 'md127', 'md126'):
        system.on(['udevadm', 'info', '--query=property', '--name=/dev/%s' % kname], rc=1)
    return system


def ra(system, kname):
    return int(system.read(RA % kname))


def test_md_defaults_match_kernel(raid):
    """No value: twice the stripe width - what the kernel itself set (4096 for 4x512K RAID0, 1024 for 2-disk RAID10)."""
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': '/dev/md/model'}, {'device': '/dev/md/index'}]})
    assert not failed, result
    assert not result['changed']
    model, index = result['devices']
    assert (model['kname'], model['requested_kb'], model['source'], model['status']) == ('md127', 4096, 'md_stripe', 'unchanged')
    assert '512 KiB chunk x 4 data disks = 2048 KiB stripe' in model['note']
    assert (index['kname'], index['requested_kb'], index['before'], index['status']) == ('md126', 1024, 1024, 'unchanged')
    assert raid.calls == []


def test_set_drives_by_id_and_read_back(raid):
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0]}, {'device': INDEX[1], 'read_ahead_kb': 512}], 'read_ahead_kb': 256})
    assert not failed, result
    assert result['changed']
    first, second = result['devices']
    assert (first['kname'], first['kind'], first['transport']) == ('nvme4n1', 'nvme', 'pcie')
    assert (first['before'], first['after'], first['source'], first['status']) == (128, 256, 'top-level', 'changed')
    assert (second['kname'], second['after'], second['source']) == ('nvme5n1', 512, 'device')
    assert ra(raid, 'nvme4n1') == 256 and ra(raid, 'nvme5n1') == 512
    assert result['udev_reload_needed'] is False and result['rules_changed'] is False
    failed, again = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0]}, {'device': INDEX[1], 'read_ahead_kb': 512}], 'read_ahead_kb': 256})
    assert not again['changed'] and [d['status'] for d in again['devices']] == ['unchanged', 'unchanged']


def test_sectors(raid):
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': MODEL[0], 'read_ahead_sectors': 2048}]})
    assert not failed, result
    assert result['devices'][0]['requested_kb'] == 1024
    assert ra(raid, 'nvme0n1') == 1024


def test_larger_value_is_kept(raid):
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': '/dev/md/model', 'read_ahead_kb': 1024}]})
    assert not failed and not result['changed']
    entry = result['devices'][0]
    assert (entry['status'], entry['before'], entry['after']) == ('kept', 4096, 4096)
    assert 'kept larger current value 4096 KiB (requested 1024 KiB' in entry['note']
    assert ra(raid, 'md127') == 4096


def test_allow_decrease(raid):
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/md/model', 'read_ahead_kb': 1024}], 'allow_decrease': True})
    assert not failed and result['changed']
    assert result['devices'][0]['status'] == 'changed'
    assert ra(raid, 'md127') == 1024


def test_check_mode_and_diff(raid):
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0], 'read_ahead_kb': 2048}], 'persistent': 'present',
        'rules_file': str(raid.tmp / 'rules.d' / '61-inferops-readahead.rules')}, check_mode=True, diff=True)
    assert not failed, result
    assert result['changed'] and result['udev_reload_needed']
    assert result['devices'][0]['after'] == 2048
    assert ra(raid, 'nvme4n1') == 128
    assert not (raid.tmp / 'rules.d').exists()
    sysfs_diff, rules_diff = result['diff']
    assert sysfs_diff['before'] == '%s (nvme4n1): 128\n' % INDEX[0]
    assert sysfs_diff['after'] == '%s (nvme4n1): 2048\n' % INDEX[0]
    assert rules_diff['before'] == ''
    assert 'ENV{ID_WWN}=="%s", ATTR{queue/read_ahead_kb}="2048"' % NVME4_WWID in rules_diff['after']


def test_persistent_rules(raid):
    rules = raid.tmp / '61-inferops-readahead.rules'
    args = {'devices': [{'device': '/dev/md/model'}, {'device': MODEL[0] + '_1', 'read_ahead_kb': 256},
                        {'device': INDEX[0], 'read_ahead_kb': 128}],
            'persistent': 'present', 'rules_file': str(rules)}
    failed, result = run_module(blockdev_readahead.main, args)
    assert not failed, result
    assert result['changed'] and result['rules_changed'] and result['udev_reload_needed']
    text = rules.read_text()
    assert oct(os.stat(str(rules)).st_mode & 0o777) == '0o644'
    lines = [line for line in text.splitlines() if not line.startswith('#')]
    assert lines == [
        'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="md*", ATTR{md/uuid}=="%s", ATTR{queue/read_ahead_kb}="4096"' % MODEL_KUUID,
        'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="%s", '
        'ATTR{queue/read_ahead_kb}="256"' % NVME0_WWN,
        'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="%s", '
        'ATTR{queue/read_ahead_kb}="128"' % NVME4_WWID,
    ]
    assert '# device: /dev/md/model\n' in text
    assert [d['rule_match'] for d in result['devices']][0] == 'KERNEL=="md*", ATTR{md/uuid}=="%s"' % MODEL_KUUID
    # idempotent
    failed, again = run_module(blockdev_readahead.main, args)
    assert not failed and not again['changed'] and not again['udev_reload_needed']
    # another call for one device keeps the others' rules
    failed, other = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0], 'read_ahead_kb': 512}], 'persistent': 'present', 'rules_file': str(rules)})
    assert other['rules_changed']
    assert rules.read_text().count('ACTION==') == 3 and 'ATTR{queue/read_ahead_kb}="512"' in rules.read_text()
    # absent removes this device's rule only, then the file
    failed, removed = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0], 'read_ahead_kb': 512}], 'persistent': 'absent', 'rules_file': str(rules)})
    assert removed['changed'] and rules.read_text().count('ACTION==') == 2
    failed, gone = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/md/model'}, {'device': MODEL[0], 'read_ahead_kb': 256}],
        'persistent': 'absent', 'rules_file': str(rules)})
    assert gone['rules_changed'] and not rules.exists()


def test_kernel_names_swapped_after_reboot_change_nothing(raid):
    # md126/md127 swap between boots; the rule matches the array UUID and the file must stay
    # as it is when only the kernel name or the path used to name the device differs.
    rules = raid.tmp / '61-inferops-readahead.rules'
    failed, first = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/md/model'}], 'persistent': 'present', 'rules_file': str(rules)})
    assert not failed and first['rules_changed']
    written = rules.read_text()
    rules.write_text(written.replace('# device: /dev/md/model', '# device: /dev/md/model (md126)'))
    kept = rules.read_text()
    failed, again = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/md127'}], 'persistent': 'present', 'rules_file': str(rules)})
    assert not failed and not again['changed'] and not again['rules_changed'], again
    assert rules.read_text() == kept


def test_kept_value_goes_into_rule(raid):
    rules = raid.tmp / 'ra.rules'
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/md/model', 'read_ahead_kb': 1024}], 'persistent': 'present', 'rules_file': str(rules)})
    assert result['devices'][0]['status'] == 'kept'
    assert 'ATTR{queue/read_ahead_kb}="4096"' in rules.read_text()


def test_foreign_lines_are_kept(raid):
    rules = raid.tmp / 'ra.rules'
    rules.write_text('# hand-written\nACTION=="add", KERNEL=="sd*", ATTR{queue/scheduler}="none"\n')
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[1], 'read_ahead_kb': 128}], 'persistent': 'present', 'rules_file': str(rules)})
    assert not failed, result
    assert 'ATTR{queue/scheduler}="none"' in rules.read_text()


@pytest.mark.parametrize('args, message', [
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': -8}]}, "devices[0].read_ahead_kb=-8 is negative"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 'lots'}]}, "devices[0].read_ahead_kb='lots' is not an integer"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 4.5}]}, "devices[0].read_ahead_kb=4.5 is not an integer"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': True}]}, "devices[0].read_ahead_kb=True is not an integer"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 130}]}, "devices[0].read_ahead_kb=130 is not a multiple of the 4 KiB page size"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_sectors': 9}]}, "devices[0].read_ahead_sectors=9 is not a multiple of 8 sectors"),
    ({'devices': [{'device': INDEX[0]}], 'read_ahead_kb': '-1'}, "read_ahead_kb='-1' is negative"),
    ({'devices': [{'device': INDEX[0]}], 'read_ahead_sectors': 'x'}, "read_ahead_sectors='x' is not an integer"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 256}, {'device': '/dev/disk/by-id/nvme-NOPE', 'read_ahead_kb': 256}]},
     "devices[1].device='/dev/disk/by-id/nvme-NOPE': device /dev/disk/by-id/nvme-NOPE does not exist"),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 256}, {'device': '/dev/nvme0', 'read_ahead_kb': 256}]},
     "devices[1].device='/dev/nvme0'"),
    ({'devices': [{'device': INDEX[0]}]}, "devices[0].device='%s': no read_ahead_kb or read_ahead_sectors given" % INDEX[0]),
    ({'devices': [{'device': INDEX[0], 'read_ahead_kb': 256}, {'device': '/dev/nvme4n1', 'read_ahead_kb': 512}]},
     "devices[1].device='/dev/nvme4n1' is nvme4n1, already requested as"),
    ({'devices': []}, 'devices must name at least one device'),
])
def test_invalid_input_fails_before_any_change(raid, args, message):
    failed, result = run_module(blockdev_readahead.main, args)
    assert failed
    assert message in result['msg']
    assert ra(raid, 'nvme4n1') == 128 and ra(raid, 'nvme5n1') == 128 and ra(raid, 'md127') == 4096


def test_mutually_exclusive(raid):
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': INDEX[0], 'read_ahead_kb': 128, 'read_ahead_sectors': 256}]})
    assert failed and 'mutually exclusive' in result['msg']


def test_partition_is_refused(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'partitioned')
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': '/dev/nvme4n1p1', 'read_ahead_kb': 256}]})
    assert failed and 'resolves to partition nvme4n1p1' in result['msg']
    assert system.calls == []


def test_inactive_md_has_no_default(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'inactive_md127')
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': '/dev/md127'}]})
    assert failed and "devices[0].device='/dev/md127': no read_ahead_kb given and no md default" in result['msg']


def test_write_error_is_reported(raid):
    raid.fail_writes(RA % 'nvme4n1', 22)
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': INDEX[0], 'read_ahead_kb': 256}]})
    assert failed and 'nvme4n1' in result['msg'] and 'Invalid argument' in result['msg']


def test_readback_mismatch_fails(raid, monkeypatch):
    from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
    monkeypatch.setattr(sysfs, 'write_attr', lambda path, value: None)
    failed, result = run_module(blockdev_readahead.main, {'devices': [{'device': INDEX[0], 'read_ahead_kb': 256}]})
    assert failed and 'wrote read_ahead_kb=256 but the kernel reports 128' in result['msg']


def test_udev_serial_fallback(raid):
    """Without ID_WWN (udev) or wwid (sysfs), the rule matches ID_SERIAL and the namespace id."""
    os.unlink(raid.path('/sys/block/nvme0n1/wwid'))
    props = fixture('udevadm', 'nvme0n1.txt').replace('ID_WWN=', 'X_WWN=')
    raid.on(['udevadm', 'info', '--query=property', '--name=/dev/nvme0n1'], out=props)
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': MODEL[0], 'read_ahead_kb': 256}], 'persistent': 'present', 'rules_file': str(raid.tmp / 'r.rules')})
    assert not failed, result
    assert result['devices'][0]['rule_match'] == \
        'KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_SERIAL}=="QEMU_NVMe_Ctrl_LABMODEL0_1", ATTR{nsid}=="1"'


def test_nvme_of_and_dm(tmp_path, monkeypatch):
    """Pass 3 recording: nvme6n1 over nvmet-tcp (multipath head) and dm-0 (labdm, no DM_UUID)."""
    system = FakeSystem(tmp_path, monkeypatch, 'fabrics_dm')
    system.on(['udevadm', 'info', '--query=property', '--name=/dev/nvme6n1'], out='@udevadm/nvme_of.txt')
    system.on(['udevadm', 'info', '--query=property', '--name=/dev/dm-0'], out='@udevadm/dm_labdm.txt')
    rules = tmp_path / 'ra.rules'
    failed, result = run_module(blockdev_readahead.main, {
        'devices': [{'device': '/dev/disk/by-id/nvme-uuid.7732c940-152c-43d6-b25e-5d05071a4597', 'read_ahead_kb': 1024},
                    {'device': '/dev/mapper/labdm', 'read_ahead_kb': 2048}],
        'persistent': 'present', 'rules_file': str(rules)})
    assert not failed, result
    nvme, dm = result['devices']
    assert (nvme['kname'], nvme['kind'], nvme['transport'], nvme['after']) == ('nvme6n1', 'nvme-of', 'tcp', 1024)
    assert nvme['rule_match'] == 'KERNEL=="nvme*", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="uuid.7732c940-152c-43d6-b25e-5d05071a4597"'
    assert (dm['kname'], dm['kind'], dm['after']) == ('dm-0', 'dm', 2048)
    assert dm['rule_match'] == 'KERNEL=="dm-*", ENV{DM_NAME}=="labdm"'
    assert ra(system, 'nvme6n1') == 1024 and ra(system, 'dm-0') == 2048
