# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""irq_pin replayed on /proc/interrupts, /proc/irq and /sys/kernel/irq of the local_nvme lab guest.

On that guest (2 vCPUs, one NUMA node) the NVMe I/O queue vectors nvme<N>q<1..> are kernel-managed:
writing their affinity failed with EIO, the admin queue nvme<N>q0 accepted it
(fixtures/irq/managed_write_check.txt). FakeSystem reproduces those EIO answers.
"""

from __future__ import annotations

import errno
import os
import re
import shutil

import pytest
from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq as irq_utils
from ansible_collections.inferops.node.plugins.modules import irq_pin
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import FakeSystem, fixture, run_module

NVME_IRQS = list(range(31, 49))
ADMIN = {31: 'nvme0q0', 32: 'nvme1q0', 35: 'nvme2q0', 38: 'nvme3q0', 39: 'nvme5q0', 40: 'nvme4q0'}
AFF = '/proc/irq/%d/smp_affinity_list'


@pytest.fixture
def guest(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    for irq, name in irq_utils.irq_names(system.read('/proc/interrupts')).items():
        if re.match(r'^nvme\d+q[1-9]\d*$', name):
            system.fail_writes(AFF % irq, errno.EIO)
    return system


@pytest.fixture
def warnings(monkeypatch):
    """What the module passed to ``module.warn``."""
    seen = []
    monkeypatch.setattr(basic.AnsibleModule, 'warn', lambda module, msg: seen.append(msg))
    return seen


def aff(system, irq):
    return system.read(AFF % irq).strip()


def by_irq(result):
    return dict((e['irq'], e) for e in result['irqs'])


def test_parse_recorded_interrupts():
    entries = irq_utils.parse_interrupts(fixture('proc_interrupts', 'fresh.txt'))
    names = dict((e['irq'], e['label']) for e in entries)
    assert names[0] == 'timer' and names[27] == 'ahci[0000:00:1f.2]' and names[33] == 'nvme0q1'
    assert [e['chip'] for e in entries if e['irq'] in (0, 24)] == ['IO-APIC', 'PCI-MSI']
    assert entries[0]['counts'] == [120, 0]
    assert all(e['irq'] not in ('NMI', 'LOC') for e in entries)


def test_names_from_sysfs_actions(guest):
    names = irq_utils.irq_names(guest.read('/proc/interrupts'))
    assert [names[i] for i in NVME_IRQS[:4]] == ['nvme0q0', 'nvme1q0', 'nvme0q1', 'nvme0q2']
    assert names[1] == 'i8042' and len(names) == 33


def test_list_only(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme\d+q\d+$', 'policy': 'local'}], 'list_only': True})
    assert not failed and not result['changed']
    assert result['matched_irqs'] == NVME_IRQS
    assert result['rules'] == [{'selector': r'^nvme\d+q\d+$', 'policy': 'local', 'cpus': None, 'matched': NVME_IRQS}]
    assert guest.read(AFF % 31) == '1\n'


def test_eperm_is_managed_as_on_debian_13(tmp_path, monkeypatch):
    """Debian 13's kernel (6.12) refuses a managed IRQ's affinity with EPERM, not EIO (the seed_node guest's
    first site run: nvme<N>q<M> I/O queues, 'Operation not permitted'): managed, not a failed pin."""
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    for irq, name in irq_utils.irq_names(system.read('/proc/interrupts')).items():
        if re.match(r'^nvme\d+q[1-9]\d*$', name):
            system.fail_writes(AFF % irq, errno.EPERM)
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme0q\d+$', 'cpus': '1'}]})
    assert not failed, result
    irqs = by_irq(result)
    assert irqs[33]['status'] == 'managed' and 'EPERM' in irqs[33]['msg']
    assert result['managed_irqs'] == [33]


def test_cpus_policy_with_managed(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme0q\d+$', 'cpus': '1'}]}, diff=True)
    assert not failed, result
    irqs = by_irq(result)
    assert sorted(irqs) == [31, 33, 34]
    assert (irqs[31]['before'], irqs[31]['status']) == ('1', 'unchanged')
    assert (irqs[33]['before'], irqs[33]['after'], irqs[33]['status']) == ('0', '0', 'managed')
    assert 'EIO' in irqs[33]['msg']
    assert irqs[34]['status'] == 'unchanged'
    assert result['managed_irqs'] == [33] and not result['changed']
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme0q\d+$', 'cpus': [0]}]}, diff=True)
    irqs = by_irq(result)
    assert (irqs[31]['before'], irqs[31]['after'], irqs[31]['status']) == ('1', '0', 'changed')
    assert irqs[33]['status'] == 'unchanged' and irqs[34]['status'] == 'managed'
    assert result['changed'] and aff(guest, 31) == '0'
    assert result['diff']['before'].splitlines()[0] == '31 nvme0q0: 1'
    assert result['diff']['after'].splitlines()[0] == '31 nvme0q0: 0'


def test_spread_round_robin(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme\d+q0$', 'policy': 'spread', 'cpus': '0-1'}]})
    assert not failed, result
    irqs = by_irq(result)
    assert sorted(irqs) == sorted(ADMIN)
    assert [irqs[i]['target'] for i in sorted(irqs)] == ['0', '1', '0', '1', '0', '1']
    assert [aff(guest, i) for i in sorted(ADMIN)] == ['0', '1', '0', '1', '0', '1']
    assert all(irqs[i]['status'] in ('changed', 'unchanged') for i in irqs)
    failed, again = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme\d+q0$', 'policy': 'spread', 'cpus': '0-1'}]})
    assert not again['changed']


def test_local_policy_uses_node_cpus(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme\dq0$', 'policy': 'local'}]})
    assert not failed, result
    for entry in result['irqs']:
        assert (entry['node'], entry['target'], entry['after'], entry['msg']) == (0, '0-1', '0-1', None)
    assert aff(guest, 31) == '0-1'


def test_local_policy_restricted_by_cpus(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme1q0$', 'policy': 'local', 'cpus': '0'}]})
    assert by_irq(result)[32]['target'] == '0' and aff(guest, 32) == '0'


def test_local_policy_node_unknown(guest):
    """ahci: /proc/irq/27/node is -1 and the PCI device's numa_node is -1 on the guest."""
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^ahci', 'policy': 'local'}]})
    entry = result['irqs'][0]
    assert (entry['irq'], entry['node'], entry['target']) == (27, None, '0-1')
    assert entry['msg'] == 'NUMA node unknown; using all online CPUs'


def test_local_policy_pci_node_fallback(guest):
    """virtio0 (irq 28-30) has node -1 in /proc/irq; its PCI device lists the IRQs in msi_irqs."""
    with open(guest.path('/sys/devices/pci0000:00/0000:00:02.0/numa_node'), 'w') as handle:
        handle.write('0\n')
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^virtio0-', 'policy': 'local', 'cpus': '1'}]})
    assert [(e['irq'], e['node'], e['target']) for e in result['irqs']] == [(28, 0, '1'), (29, 0, '1'), (30, 0, '1')]


def test_first_rule_wins(guest):
    failed, result = run_module(irq_pin.main, {'rules': [
        {'selector': r'^nvme0q0$', 'cpus': '0'}, {'selector': r'^nvme\d+q0$', 'cpus': '1'}], 'list_only': True})
    assert result['rules'][0]['matched'] == [31]
    assert result['rules'][1]['matched'] == [32, 35, 38, 39, 40]
    assert by_irq(result)[31]['rule'] == 0 and by_irq(result)[32]['rule'] == 1


def test_check_mode_fresh_node(guest, warnings):
    """No record, no debugfs (as on the guest): the NVMe driver rule predicts the I/O queue vectors,
    the admin queue's status is unknown - predicted as changed, and said so."""
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'nvme0q', 'cpus': '0'}]}, check_mode=True, diff=True)
    assert not failed and result['changed']
    irqs = by_irq(result)
    assert aff(guest, 31) == '1' and aff(guest, 34) == '1'
    assert (irqs[31]['status'], irqs[31]['after'], irqs[31]['managed_unknown'], irqs[31]['managed_source']) == (
        'changed', '0', True, None)
    assert 'not written (check mode)' in irqs[31]['msg'] and 'EIO' in irqs[31]['msg']
    # 34 (nvme0q2): the real run gets EIO (fixtures/irq/managed_write_check.txt); check mode predicts it.
    assert (irqs[34]['status'], irqs[34]['after'], irqs[34]['managed_unknown'], irqs[34]['managed_source']) == (
        'managed', '1', False, 'driver')
    assert irqs[33]['status'] == 'unchanged' and irqs[33]['msg'] is None and not irqs[33]['managed_unknown']
    assert result['managed_irqs'] == [34] and result['unknown_managed'] == [31]
    assert len(warnings) == 1 and '31 (nvme0q0)' in warnings[0] and 'kernel-managed' in warnings[0]
    assert result['diff']['after'].splitlines() == ['31 nvme0q0: 0', '33 nvme0q1: 0', '34 nvme0q2: 1']
    failed, real = run_module(irq_pin.main, {'rules': [{'selector': r'nvme0q', 'cpus': '0'}]})
    assert [(e['irq'], e['status']) for e in real['irqs']] == [(e['irq'], e['status']) for e in result['irqs']]


def test_check_mode_unknown_when_no_source(guest, monkeypatch):
    """Without the driver rule nothing tells: every IRQ that would be written is listed as unknown."""
    monkeypatch.setattr(irq_utils, 'NVME_IO_QUEUE', re.compile(r'^$'))
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'nvme0q', 'cpus': '0'}]}, check_mode=True)
    assert result['changed'] and result['unknown_managed'] == [31, 34] and result['managed_irqs'] == []


def test_real_run_knows_managed(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'nvme0q', 'cpus': '0'}]})
    irqs = by_irq(result)
    assert not failed and [irqs[i]['status'] for i in (31, 33, 34)] == ['changed', 'unchanged', 'managed']
    assert [irqs[i]['managed_source'] for i in (31, 33, 34)] == ['write', None, 'write']
    assert not any(e['managed_unknown'] for e in result['irqs']) and result['unknown_managed'] == []


def test_list_only_predicts_without_warning(guest, warnings):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'nvme0q', 'cpus': '0'}], 'list_only': True})
    irqs = by_irq(result)
    assert not failed and not result['changed'] and warnings == []
    assert irqs[34]['status'] == 'managed' and irqs[34]['managed_source'] == 'driver'
    assert irqs[31]['managed_unknown'] and 'not written (list_only)' in irqs[31]['msg']
    assert result['unknown_managed'] == [31]


def test_pending_effective_affinity(guest):
    """Recorded on the guest: nvme0q0 (IRQ 31) has smp_affinity_list 1 but effective_affinity_list 0 -
    the kernel moves it at its next interrupt. Reported as pending, neither a change nor a failure."""
    for check_mode in (True, False):
        failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme[01]q0$', 'cpus': '1'}]},
                                    check_mode=check_mode)
        irqs = by_irq(result)
        assert not failed and not result['changed'] and result['pending_irqs'] == [31]
        assert irqs[31]['status'] == 'unchanged' and irqs[31]['pending'] and not irqs[32]['pending']
        assert 'move pending' in irqs[31]['msg'] and 'CPU(s) 0' in irqs[31]['msg']


def test_write_failure_fails_module(guest):
    guest.fail_writes(AFF % 32, errno.EINVAL)
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': r'^nvme[01]q0$', 'cpus': '0'}]})
    assert failed
    assert 'IRQ 32 (nvme1q0)' in result['msg'] and 'Invalid argument' in result['msg']
    irqs = by_irq(result)
    assert irqs[31]['status'] == 'changed' and irqs[32]['status'] == 'failed'


@pytest.mark.parametrize('rules, needle', [
    ([{'selector': 'nvme', 'cpus': '0-'}], 'rules[0].cpus = "0-": not a valid CPU list'),
    ([{'selector': 'nvme', 'cpus': 'all'}], 'rules[0].cpus = "all": not a valid CPU list'),
    ([{'selector': 'nvme', 'cpus': '0-3'}], 'rules[0].cpus = "0-3": CPU(s) 2-3 not online (online: 0-1)'),
    ([{'selector': 'timer', 'cpus': '0'}, {'selector': 'nvme', 'policy': 'spread', 'cpus': [1, 5]}],
     'rules[1].cpus = [1, 5]: CPU(s) 5 not online'),
    ([{'selector': 'nvme', 'policy': 'spread'}], 'rules[0].cpus: required with policy spread'),
    ([{'selector': 'nvme'}], 'rules[0].cpus: required with policy cpus'),
    ([{'selector': 'nvme(', 'cpus': '0'}], 'rules[0].selector = "nvme(": not a valid regular expression'),
    ([{'selector': 'nvme', 'policy': 'local', 'cpus': ''}, {'selector': 'x', 'cpus': []}], 'rules[1].cpus = []: empty'),
    # Every problem at once, not only the first.
    ([{'selector': 'nvme(', 'cpus': '9'}, {'selector': 'x', 'cpus': 'a'}],
     'rules[0].selector = "nvme(": not a valid regular expression: missing ), unterminated subpattern at position 4; '
     'rules[0].cpus = "9": CPU(s) 9 not online (online: 0-1); rules[1].cpus = "a": not a valid CPU list'),
    # The kernel's stride form, as the cpulist filters take it: 0-1:1/2 is CPU 0 alone; CPU 4 is offline.
    ([{'selector': 'nvme', 'cpus': '0-5:1/4'}], 'rules[0].cpus = "0-5:1/4": CPU(s) 4 not online'),
    ([], 'rules must hold at least one rule'),
])
def test_invalid_rules_fail_before_any_write(guest, rules, needle):
    failed, result = run_module(irq_pin.main, {'rules': rules})
    assert failed and needle in result['msg'], result['msg']
    assert aff(guest, 31) == '1' and aff(guest, 0) == '0-1'


def test_fail_on_no_match(guest):
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': 'mlx5_comp', 'cpus': '0'}], 'fail_on_no_match': True})
    assert failed and "rules[0].selector='mlx5_comp'" in result['msg']
    failed, result = run_module(irq_pin.main, {'rules': [{'selector': 'mlx5_comp', 'cpus': '0'}]})
    assert not failed and result['matched_irqs'] == [] and not result['changed']


# ---------------------------------------------------------------- lab irqlab: converge, check, reboot
# Recorded on lab guest irqlab (fixtures/irq/README.md): before the role, after one real run, after a reboot.

LAB_RULES = [  # inventories/lab/group_vars/local_nvme.yml
    {'selector': r'^nvme[01]q\d+$', 'policy': 'cpus', 'cpus': '0'},
    {'selector': r'^nvme[23]q\d+$', 'policy': 'cpus', 'cpus': '1'},
    {'selector': r'^nvme[45]q\d+$', 'policy': 'spread', 'cpus': '0-1'},
]
RECORD = '/run/inferops/irq-managed.json'
BOOT1_MANAGED = [36, 43, 46, 48]  # nvme3q1, nvme2q1, nvme0q2, nvme1q2: EIO in the guest's real run


def _write(path, text):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """``lab(recording, record=recording)``: the guest as recorded in fixtures/irq/irqlab_<recording>, with the
    record file of ``record`` (None: no record). I/O queue vectors answer EIO, as on the guest."""
    def build(recording, record='same'):
        system = FakeSystem(tmp_path, monkeypatch, 'fresh')
        for tree in ('/proc/irq', '/sys/kernel/irq'):
            shutil.rmtree(system.path(tree))
        _write(system.path('/proc/interrupts'), fixture('irq', 'irqlab_' + recording, 'interrupts.txt'))
        for line in fixture('irq', 'irqlab_' + recording, 'attrs.txt').splitlines():
            path, value = line.split(':', 1)
            _write(system.path(path), value + '\n')
        record = recording if record == 'same' else record
        if record:
            _write(system.path(RECORD), fixture('irq', 'irqlab_' + record, 'record.json'))
        for number, name in irq_utils.irq_names(system.read('/proc/interrupts')).items():
            if re.match(r'^nvme\d+q[1-9]\d*$', name):
                system.fail_writes(AFF % number, errno.EIO)
        return system
    return build


def sources(result):
    return dict((e['irq'], e['managed_source']) for e in result['irqs'] if e['managed_source'])


def test_lab_converged_check_mode_predicts_the_real_run(lab, warnings):
    """After one real run (boot 1): check mode reports no change - the managed vectors are known from
    the record - and the real run agrees IRQ by IRQ."""
    lab('boot1_converged')
    failed, check = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    assert not failed and not check['changed'] and warnings == []
    assert check['managed_irqs'] == BOOT1_MANAGED and check['unknown_managed'] == []
    assert sources(check) == dict((i, 'record') for i in BOOT1_MANAGED)
    assert check['pending_irqs'] == [31, 33]  # admin queues whose effective CPU lags (recorded)
    failed, real = run_module(irq_pin.main, {'rules': LAB_RULES})
    assert not failed and not real['changed'] and real['managed_irqs'] == BOOT1_MANAGED
    assert [(e['irq'], e['status'], e['after']) for e in real['irqs']] == [
        (e['irq'], e['status'], e['after']) for e in check['irqs']]


def test_lab_fresh_real_run_writes_the_guests_record(lab):
    """Boot 1 before the role: the real run's EIO answers give exactly the record the guest wrote."""
    system = lab('boot1_fresh', record=None)
    failed, check = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    # nvme3q0 (IRQ 35) really moves 0 -> 1; no record yet: the driver rule knows the I/O queues, the admin queue is unknown.
    assert check['changed'] and check['unknown_managed'] == [35] and check['managed_irqs'] == BOOT1_MANAGED
    assert sources(check) == dict((i, 'driver') for i in BOOT1_MANAGED)
    assert not os.path.exists(system.path(RECORD))
    failed, real = run_module(irq_pin.main, {'rules': LAB_RULES})
    assert not failed and real['changed'] and real['managed_irqs'] == BOOT1_MANAGED
    assert [e['irq'] for e in real['irqs'] if e['status'] == 'changed'] == [35]
    assert system.read(RECORD) == fixture('irq', 'irqlab_boot1_converged', 'record.json')
    failed, again = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    assert not again['changed'] and sources(again) == dict((i, 'record') for i in BOOT1_MANAGED)


def test_lab_record_of_another_boot_is_not_trusted(lab, warnings, monkeypatch):
    """Boot 2 with boot 1's record: IRQ numbers and names were handed out anew, the record is ignored."""
    lab('boot2_rebooted', record='boot1_converged')
    failed, result = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    assert not result['changed'] and set(sources(result).values()) == set(['driver'])
    monkeypatch.setattr(irq_utils, 'NVME_IO_QUEUE', re.compile(r'^$'))
    failed, result = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    # nvme2q1 (34), nvme0q2 (37), nvme3q1 (39), nvme1q2 (43), nvme4q1 (44), nvme4q2 (45) would be written.
    assert result['changed'] and result['unknown_managed'] == [34, 37, 39, 43, 44, 45] and result['managed_irqs'] == []
    assert '34 (nvme2q1), 37 (nvme0q2)' in warnings[-1]


def test_lab_after_reboot_the_boot_scripts_record_is_used(lab, monkeypatch):
    """Boot 2 with the record inferops-irq-pin.service wrote at boot: no change, known without the driver rule."""
    lab('boot2_rebooted')
    monkeypatch.setattr(irq_utils, 'NVME_IO_QUEUE', re.compile(r'^$'))
    failed, result = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    assert not failed and not result['changed'] and result['unknown_managed'] == []
    assert sources(result) == dict((i, 'record') for i in (34, 37, 39, 43, 44, 45))


def test_lab_drift_of_a_writable_irq_is_a_change(lab, warnings):
    """The drift gate: an admin queue moved away is predicted as a change (the record says writable), no warning."""
    system = lab('boot1_converged')
    _write(system.path(AFF % 35), '0\n')
    failed, result = run_module(irq_pin.main, {'rules': LAB_RULES}, check_mode=True)
    assert result['changed'] and result['unknown_managed'] == [] and warnings == []
    assert (by_irq(result)[35]['status'], by_irq(result)[35]['managed_source']) == ('changed', 'record')
