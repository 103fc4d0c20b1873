# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""irq_info replayed on lab guest irqrec (fixtures/info): ``fresh`` right after boot, ``converged`` after
the nvme_sched and irq_affinity roles ran with the lab inventory (see fixtures/info/README.md)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.modules import irq_info
from ansible_collections.inferops.node.tests.unit.module_harness import C_LOCALE, FakeHost, fixture, run_module

SHOW = ['systemctl', 'show', '-p', 'Id', '-p', 'LoadState', '-p', 'ActiveState', '-p', 'UnitFileState',
        '-p', 'ExecMainPID', 'irqbalance.service', 'inferops-irq-pin.service']


class Guest(FakeHost):
    """FakeHost records each command's environment (``environ``): it must be the C locale."""

    fixtures = 'info'
    snapshot_file = '%s/snapshot.json'


@pytest.fixture
def converged(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'converged').on(SHOW, out='@converged/systemctl_show.txt')


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    # The fresh recording asked systemctl about irqbalance.service alone (the pin unit did not exist).
    return Guest(tmp_path, monkeypatch, 'fresh').on(SHOW, out='@fresh/systemctl_irqbalance.txt')


def by_name(result):
    return dict((entry['name'], entry) for entry in result['irqs'])


def test_fresh_table(fresh):
    failed, result = run_module(irq_info.main, {})
    assert not failed and result['changed'] is False
    assert fresh.calls == [SHOW] and fresh.environ == [C_LOCALE]
    assert result['command_log'] == [{'argv': SHOW, 'rc': 0, 'ran': True}]
    assert result['online_cpus'] == '0-1'
    irqs = by_name(result)
    timer = irqs['timer']
    assert timer['irq'] == 0 and timer['chip'] == 'IO-APIC' and timer['pci_address'] is None and timer['managed'] is None
    admin, io = irqs['nvme0q0'], irqs['nvme0q1']
    assert admin['pci_address'] == io['pci_address'] == '0000:00:03.0'
    assert admin['driver'] == 'nvme' and admin['nvme_controller'] == 'nvme0' and admin['nvme_queue'] == 0
    # Without debugfs or a record only the driver rule tells: I/O queues managed, the admin queue unknown.
    assert io['managed'] is True and io['managed_source'] == 'driver' and io['nvme_queue'] == 1
    assert admin['managed'] is None and admin['managed_source'] is None
    assert admin['count'] == sum(admin['counts']) and len(admin['counts']) == 2
    assert admin['smp_affinity_list'] and admin['effective_affinity_list']
    assert result['record_of_this_boot'] is False
    assert result['boot_id'] == json.loads(fixture('info', 'fresh/snapshot.json'))['files'][
        '/proc/sys/kernel/random/boot_id'].strip()


def test_fresh_devices_group_the_vectors(fresh):
    dummy, result = run_module(irq_info.main, {})
    devices = dict((d['pci_address'], d) for d in result['devices'])
    nvme0 = devices['0000:00:03.0']
    assert nvme0['driver'] == 'nvme' and nvme0['irqs'] == sorted(nvme0['irqs'])
    assert sorted(nvme0['names']) == ['nvme0q0', 'nvme0q1', 'nvme0q2']
    assert len(nvme0['managed_irqs']) == 2 and len(nvme0['unknown_irqs']) == 1


def test_fresh_irqbalance_stock(fresh):
    dummy, result = run_module(irq_info.main, {})
    balance = result['irqbalance']
    assert balance['installed'] and balance['active']
    assert balance['banned_cpus'] is None and balance['policyscript'] is None
    assert balance['env_file']['variables'] == {}
    assert result['units']['irqbalance.service'] == {
        'load_state': 'loaded', 'active_state': 'active', 'unit_file_state': 'enabled', 'main_pid': 291}


def test_converged_knows_the_pins_and_the_record(converged):
    failed, result = run_module(irq_info.main, {})
    assert not failed and converged.environ == [C_LOCALE]
    irqs = by_name(result)
    # The lab inventory's rules: nvme0/1 on CPU 0, nvme2/3 on CPU 1.
    assert [irqs['nvme%dq0' % n]['smp_affinity_list'] for n in range(4)] == ['0', '0', '1', '1']
    assert result['record_of_this_boot'] is True
    # The record of this boot (written by irq_pin) answers for the admin queues: movable.
    assert irqs['nvme0q0']['managed'] is False and irqs['nvme0q0']['managed_source'] == 'record'
    assert result['units']['inferops-irq-pin.service']['unit_file_state'] == 'enabled'
    balance = result['irqbalance']
    assert balance['policyscript'] == '/usr/local/sbin/inferops-irq-pin'
    assert '--policyscript=/usr/local/sbin/inferops-irq-pin' in balance['cmdline']


def test_systemctl_failure_is_a_warning(fresh):
    fresh.on(SHOW, rc=1, err='Failed to connect to bus')
    failed, result = run_module(irq_info.main, {})
    assert not failed and result['units']['irqbalance.service']['active_state'] is None
    assert result['irqbalance']['active'] is False and result['irqbalance']['cmdline'] == []


def test_check_mode_reads_the_same(fresh):
    dummy, normal = run_module(irq_info.main, {})
    dummy, check = run_module(irq_info.main, {}, check_mode=True)
    assert normal == check


def test_parse_systemctl_show_not_found():
    text = 'ExecMainPID=0\nId=inferops-irq-pin.service\nLoadState=not-found\nActiveState=inactive\nUnitFileState=\n'
    states = irq_info.parse_systemctl_show(text, irq_info.UNITS)
    assert states['inferops-irq-pin.service'] == {
        'load_state': 'not-found', 'active_state': 'inactive', 'unit_file_state': None, 'main_pid': None}
    assert states['irqbalance.service']['load_state'] is None
