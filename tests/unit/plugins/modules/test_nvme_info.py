# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvme_info replayed on lab guest irqrec (fixtures/info/converged: after the nvme_sched role set
read_ahead_kb 2048 and scheduler none on the six QEMU drives), checked against ``nvme list -v -o json``
recorded at the same moment."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.common import pci, sysfs
from ansible_collections.inferops.node.plugins.modules import nvme_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, fixture, run_module
from ansible_collections.inferops.node.tests.unit.plugins.modules.test_nvme_connect import Host


class Guest(FakeHost):
    fixtures = 'info'
    snapshot_file = '%s/snapshot.json'


@pytest.fixture
def guest(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'converged')


def nvme_cli_view():
    """Controller name -> (model, serial, firmware, transport, address, [namespaces]) from nvme-cli."""
    view = {}
    for subsystem in json.loads(fixture('info', 'converged/nvme_list_verbose.json'))['Devices'][0]['Subsystems']:
        for ctrl in subsystem['Controllers']:
            view[ctrl['Controller']] = (ctrl['ModelNumber'], ctrl['SerialNumber'], ctrl['Firmware'], ctrl['Transport'],
                                        ctrl['Address'], [ns['NameSpace'] for ns in ctrl['Namespaces']])
    return view


def test_controllers_match_nvme_cli(guest):
    failed, result = run_module(nvme_info.main, {})
    assert not failed and result['changed'] is False and guest.calls == []
    mine = dict((c['name'], (c['model'], c['serial'], c['firmware'], c['transport'], c['pci_address'], c['namespaces']))
                for c in result['controllers'])
    assert mine == nvme_cli_view()


def test_controller_fields(guest):
    dummy, result = run_module(nvme_info.main, {})
    ctrl = result['controllers'][0]
    assert ctrl['name'] == 'nvme0' and ctrl['driver'] == 'nvme' and ctrl['state'] == 'live'
    assert ctrl['subsysnqn'] == 'nqn.2019-08.org.qemu:LABMODEL0'
    assert ctrl['io_queues'] == 2 and ctrl['queue_size'] == 1024
    # A one-node guest: the firmware gives no node (-1).
    assert ctrl['numa_node'] is None
    # QEMU's emulated NVMe has no PCIe capability: the kernel says Unknown / 0 / 255 - all null.
    assert ctrl['pci_link'] == {'current_speed': None, 'current_gts': None, 'current_width': None,
                                'max_speed': None, 'max_gts': None, 'max_width': None, 'downgraded': None}


def test_namespaces(guest):
    dummy, result = run_module(nvme_info.main, {})
    names = [ns['name'] for ns in result['namespaces']]
    assert names == ['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1', 'nvme4n1', 'nvme5n1']
    ns = result['namespaces'][4]
    assert ns['serial'] == 'LABINDEX0' and ns['model'] == 'QEMU NVMe Ctrl' and ns['firmware'] == '7.2.22'
    assert ns['controllers'] == ['nvme4'] and ns['pci_address'] == '0000:00:07.0' and ns['transport'] == 'pcie'
    assert ns['by_id'] == '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0'
    assert ns['by_id_all'][:2] == [ns['by_id'], ns['by_id'] + '_1']
    assert ns['size_bytes'] == 1073741824 and ns['nsid'] == 1 and ns['holders'] == []
    queue = ns['queue']
    # What the nvme_sched role set (lab inventory: none, 2048).
    assert queue['scheduler'] == 'none' and queue['schedulers'] == ['none', 'mq-deadline']
    assert queue['read_ahead_kb'] == 2048 and queue['nr_requests'] == 1023
    assert queue['max_sectors_kb'] == 512 and queue['rotational'] is False and queue['write_cache'] == 'write back'
    assert queue['nr_hw_queues'] == 2 and queue['hw_queue_cpus'] == ['0', '1']


def test_missing_files_are_null(guest):
    """Files a kernel or a VM lacks give null, never an error (here: a namespace's queue directory gone)."""
    import shutil
    shutil.rmtree(guest.path(sysfs.realpath('/sys/class/block/nvme5n1') + '/queue'))
    dummy, result = run_module(nvme_info.main, {})
    queue = result['namespaces'][5]['queue']
    assert queue['scheduler'] is None and queue['schedulers'] == [] and queue['read_ahead_kb'] is None


@pytest.mark.parametrize('text, gts', [('16.0 GT/s PCIe', 16.0), ('2.5 GT/s', 2.5), ('Unknown', None), ('', None), (None, None)])
def test_parse_link_speed(text, gts):
    assert pci.parse_link_speed(text) == gts


def test_check_mode_reads_the_same(guest):
    assert run_module(nvme_info.main, {}) == run_module(nvme_info.main, {}, check_mode=True)


def test_pci_link_of_a_real_drive(guest):
    """A drive trained at x2 8 GT/s where it can do x4 16 GT/s (values as a Gen4 drive's sysfs shows them)."""
    base = '/sys/bus/pci/devices/0000:00:03.0/'
    for name, value in (('current_link_speed', '8.0 GT/s PCIe'), ('current_link_width', '2'),
                        ('max_link_speed', '16.0 GT/s PCIe'), ('max_link_width', '4')):
        with open(guest.path(sysfs.realpath(base + name)), 'w') as handle:
            handle.write(value + '\n')
    assert pci.link('0000:00:03.0') == {
        'current_speed': '8.0 GT/s PCIe', 'current_gts': 8.0, 'current_width': 2,
        'max_speed': '16.0 GT/s PCIe', 'max_gts': 16.0, 'max_width': 4, 'downgraded': True}


@pytest.mark.parametrize('tree', ['converged', 'sysfs_two_paths.json'])
def test_every_returned_field_is_documented(tmp_path, monkeypatch, tree):
    """RETURN names every key of a controller and a namespace: a local drive (irqrec) and the two fabric paths of
    the NVMe-oF lab's initiator (fixtures/nvme/nvmeof), whose address, host identity and reconnect fields the
    audit's fabric checks read."""
    if tree == 'converged':
        Guest(tmp_path, monkeypatch, tree)
    else:
        Host(tmp_path, monkeypatch, tree)
    dummy, result = run_module(nvme_info.main, {})
    documented = yaml.safe_load(nvme_info.RETURN)
    for key in ('controllers', 'namespaces'):
        fields = documented[key]['contains']
        assert result[key] and sorted(set(k for entry in result[key] for k in entry) - set(fields)) == []
    fabric = [c for c in result['controllers'] if c['transport'] != 'pcie']
    if fabric:
        assert fabric[0]['addr'] == {'traddr': '10.77.0.10', 'trsvcid': '4420', 'src_addr': '10.77.0.21'}
        assert (fabric[0]['cntrltype'], fabric[0]['ctrl_loss_tmo'], fabric[0]['reconnect_delay']) == ('io', 120, 2)
        assert fabric[1]['paths'] == [{'name': 'nvme0c1n1', 'ana_state': 'optimized'},
                                      {'name': 'nvme0c1n2', 'ana_state': 'optimized'}]


class Clock(object):
    """time.monotonic/time.sleep of nvme_info: each sleep advances the clock and may swap compute1's tree."""

    def __init__(self, host, monkeypatch, live_after=None):
        self.now, self.sleeps, self.host, self.live_after = 0.0, 0, host, live_after
        monkeypatch.setattr(nvme_info.time, 'monotonic', lambda: self.now)
        monkeypatch.setattr(nvme_info.time, 'sleep', self.sleep)

    def sleep(self, seconds):
        self.now += seconds
        self.sleeps += 1
        if self.sleeps == self.live_after:
            self.host.load('sysfs_rdma_live.json')


def test_settling_names_a_reconnecting_controller_without_waiting(tmp_path, monkeypatch):
    """target1's rdma port down: nvme1 is connecting; settle_timeout 0 (the default) reads at once."""
    clock = Clock(Host(tmp_path, monkeypatch, 'sysfs_rdma_connecting.json'), monkeypatch)
    failed, result = run_module(nvme_info.main, {})
    assert not failed and result['settling'] == ['nvme1'] and clock.sleeps == 0
    assert [c['state'] for c in result['controllers'] if c['name'] == 'nvme1'] == ['connecting']


def test_settle_timeout_waits_for_the_reconnect(tmp_path, monkeypatch):
    """The controller comes back live after 3 s: the read is the live one, nothing left settling."""
    clock = Clock(Host(tmp_path, monkeypatch, 'sysfs_rdma_connecting.json'), monkeypatch, live_after=3)
    failed, result = run_module(nvme_info.main, {'settle_timeout': 60})
    assert not failed and result['settling'] == [] and clock.sleeps == 3
    assert [c['state'] for c in result['controllers'] if c['transport'] == 'rdma'] == ['live']


def test_settle_timeout_gives_up_and_reads_what_is_there(tmp_path, monkeypatch):
    clock = Clock(Host(tmp_path, monkeypatch, 'sysfs_rdma_connecting.json'), monkeypatch)
    failed, result = run_module(nvme_info.main, {'settle_timeout': 5})
    assert not failed and result['settling'] == ['nvme1'] and clock.now == 5.0


def test_settle_timeout_does_not_wait_on_a_live_fabric(tmp_path, monkeypatch):
    clock = Clock(Host(tmp_path, monkeypatch, 'sysfs_rdma_live.json'), monkeypatch)
    failed, result = run_module(nvme_info.main, {'settle_timeout': 60})
    assert not failed and result['settling'] == [] and clock.sleeps == 0


def test_negative_settle_timeout_is_refused(tmp_path, monkeypatch):
    Host(tmp_path, monkeypatch, 'sysfs_rdma_live.json')
    failed, result = run_module(nvme_info.main, {'settle_timeout': -1})
    assert failed and result['msg'] == 'settle_timeout = -1: must be 0 or more seconds'
