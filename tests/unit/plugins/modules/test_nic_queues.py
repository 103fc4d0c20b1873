# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nic_queues and nic_info replayed on the recorded lab guest with a 2-queue virtio NIC (fixtures/nic):
``fresh`` after boot, ``applied`` after CPU groups ["1", "0"] were applied. Neither module runs a command."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import nic_info
from ansible_collections.inferops.node.plugins.modules import nic_queues
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module

MAC = '52:54:00:88:00:01'
ARGS = {'interfaces': [{'mac': MAC}], 'cpu_groups': ['1', '0']}


class Guest(FakeHost):
    fixtures = 'nic'
    snapshot_file = '%s.json'


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'fresh')


@pytest.fixture
def applied(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'applied')


def masks(guest):
    base = '/sys/class/net/enp0s17/queues/'
    return [sysfs.read_attr(base + q) for q in ('rx-0/rps_cpus', 'rx-1/rps_cpus', 'tx-0/xps_cpus', 'tx-1/xps_cpus')]


def test_apply_on_fresh_then_idempotent(fresh):
    assert masks(fresh) == ['0', '0', '1', '2']
    failed, result = run_module(nic_queues.main, ARGS, diff=True)
    assert not failed and result['changed'] is True, result
    assert fresh.calls == []
    assert result['interfaces'] == [{'index': 0, 'name': 'enp0s17', 'mac': MAC, 'pci_address': '0000:00:11.0',
                                     'cpu_groups': ['1', '0']}]
    assert masks(fresh) == ['2', '1', '2', '1']
    assert dict((e['name'], (e['before'], e['after'], e['status'])) for e in result['irqs']) == {
        'virtio2-input.0': ('0', '1', 'changed'), 'virtio2-output.0': ('1', '1', 'unchanged'),
        'virtio2-input.1': ('1', '0', 'changed'), 'virtio2-output.1': ('0', '0', 'unchanged')}
    assert result['irqbalance_socket'] is None
    assert 'enp0s17 rx-0: 2\n' in result['diff']['after'] and 'enp0s17 rx-0: 0\n' in result['diff']['before']
    failed, result = run_module(nic_queues.main, ARGS)
    assert not failed and result['changed'] is False


def test_check_mode_writes_nothing(fresh):
    failed, result = run_module(nic_queues.main, ARGS, check_mode=True)
    assert not failed and result['changed'] is True
    assert [q['after'] for q in result['queues']] == ['2', '1', '2', '1']
    assert masks(fresh) == ['0', '0', '1', '2']
    assert fresh.read('/proc/irq/32/smp_affinity_list') == '0\n'


def test_applied_is_unchanged(applied):
    failed, result = run_module(nic_queues.main, {'interfaces': [{'pci_address': '00:11.0', 'cpu_groups': ['1', '0']}]})
    assert not failed and result['changed'] is False
    assert set(q['status'] for q in result['queues']) == {'unchanged'}


def test_unknown_mac_refused_before_any_change(fresh):
    failed, result = run_module(nic_queues.main, {'interfaces': [{'mac': MAC}, {'mac': '52:54:00:88:00:99'}],
                                                  'cpu_groups': ['1', '0']})
    assert failed
    assert result['msg'].startswith('nothing was changed: interfaces[1].mac = "52:54:00:88:00:99": no interface '
                                    'on this host has this mac (interfaces: enp0s17 (mac 52:54:00:88:00:01')
    assert masks(fresh) == ['0', '0', '1', '2']


def test_single_queue_nic_has_no_xps_and_is_not_a_failure(fresh):
    # enp0s2, the recorded guest's first NIC, has one queue pair: its tx-0/xps_cpus reads ENOENT (the
    # recording has no such file) - a single transmit queue has nothing to steer. RPS and the IRQ still apply.
    failed, result = run_module(nic_queues.main, {'interfaces': [{'name': 'enp0s2'}], 'cpu_groups': ['1']})
    assert not failed and result['changed'] is True, result
    assert [(q['queue'], q['status'], q['msg']) for q in result['queues']] == [
        ('rx-0', 'changed', None), ('tx-0', 'unchanged', 'one transmit queue: no XPS to set')]
    assert sysfs.read_attr('/sys/class/net/enp0s2/queues/rx-0/rps_cpus') == '2'


def test_offline_cpu_refused(fresh):
    failed, result = run_module(nic_queues.main, {'interfaces': [{'name': 'enp0s17'}], 'cpu_groups': ['0-3']})
    assert failed and result['msg'] == (
        'nothing was changed: cpu_groups = ["0-3"]: group 0 has CPU(s) 2-3 that are not online (online: 0-1)')


def test_nic_info(applied):
    failed, result = run_module(nic_info.main, {'names': ['enp0s17']})
    assert not failed and result['changed'] is False and applied.calls == []
    assert result['online_cpus'] == '0-1' and result['nr_cpu_ids'] == 2
    assert result['irqbalance_pid'] is None and result['irqbalance_socket'] is None
    (nic,) = result['interfaces']
    assert (nic['name'], nic['mac'], nic['pci_address'], nic['driver'], nic['rx_queues'], nic['tx_queues']) == (
        'enp0s17', MAC, '0000:00:11.0', 'virtio_net', 2, 2)
    assert [(q['queue'], q['rps_cpus'], q['rps_cpulist']) for q in nic['rx']] == [(0, '2', '1'), (1, '1', '0')]
    assert [(v['name'], v['direction'], v['queue']) for v in nic['irqs']][:2] == [
        ('virtio2-config', None, None), ('virtio2-input.0', 'rx', 0)]


def test_nic_info_reads_the_role_unit(applied):
    # Recorded on the local_nvme scenario's converged guest (fixtures/nic/README.md).
    show = ['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState',
            'inferops-nic-queues.service']
    applied.on(show, out='@unit_enabled.txt')
    failed, result = run_module(nic_info.main, {'names': ['enp0s17'], 'units': ['inferops-nic-queues.service']})
    assert not failed and applied.calls == [show]
    assert result['units'] == {'inferops-nic-queues.service': {'enabled': 'enabled', 'active': 'inactive',
                                                               'load': 'loaded'}}
    # Without units systemd is not asked.
    failed, result = run_module(nic_info.main, {'names': ['enp0s17']})
    assert not failed and result['units'] == {} and applied.calls == [show]


def test_nic_info_every_interface(fresh):
    failed, result = run_module(nic_info.main, {}, check_mode=True)
    assert not failed and [i['name'] for i in result['interfaces']] == ['enp0s17', 'enp0s2', 'lo']
