# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device selectors of the IRQ rules (module_utils/irq_devices.py and their use in irq.py) on the
recorded local_nvme guest (fixtures/sysfs, RAID0 ``model`` = LABMODEL0-3 = nvme0-3 at 0000:00:03.0-06.0,
RAID10 ``index`` = LABINDEX0-1 = nvme4-5 at 0000:00:07.0-08.0; ``msi_irqs`` as recorded)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils import irq, irq_devices
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import BY_ID, INDEX, MODEL, FakeSystem

PCI = dict(('nvme%d' % n, '0000:00:%02d.0' % (n + 3)) for n in range(6))


@pytest.fixture
def clean(tmp_path, monkeypatch):
    return (FakeSystem(tmp_path, monkeypatch, 'raid10_clean'))


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return (FakeSystem(tmp_path, monkeypatch, 'fresh'))


def names_of(guest):
    return irq.irq_names(guest.read('/proc/interrupts'))


def test_identity_table_on_the_recording(clean):
    table = irq_devices.identity_table()
    assert dict((c, (v['serial'], v['pci_address'])) for c, v in table['nvme'].items()) == dict(
        ('nvme%d' % n, (serial, PCI['nvme%d' % n])) for n, serial in enumerate(
            ['LABMODEL0', 'LABMODEL1', 'LABMODEL2', 'LABMODEL3', 'LABINDEX0', 'LABINDEX1']))
    assert table['block']['nvme2n1'] == {'controller': 'nvme2', 'pci_address': '0000:00:05.0'}
    assert 'vda' not in table['block'] and 'md127' not in table['block']
    assert table['by_id'][MODEL[1]] == 'nvme1n1' and table['by_id'][MODEL[1] + '_1'] == 'nvme1n1'
    assert table['md'] == {'model': {'device': 'md127', 'members': ['nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1']},
                           'index': {'device': 'md126', 'members': ['nvme4n1', 'nvme5n1']}}
    assert table['pci']['0000:00:03.0']['irqs'] == [31, 33, 34]
    assert irq_devices.msi_irqs('0000:00:08.0') == [39, 43, 44]


def test_partition_members_lead_to_their_controller(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'partitioned')
    table = irq_devices.identity_table()
    assert table['block']['nvme4n1p1'] == {'controller': 'nvme4', 'pci_address': '0000:00:07.0'}


@pytest.mark.parametrize('kind, value, pcis', [
    ('serial', 'LABINDEX1', ['0000:00:08.0']),
    ('by_id', MODEL[2], ['0000:00:05.0']),
    ('by_id', MODEL[2] + '_1', ['0000:00:05.0']),
    ('md_array', 'model', ['0000:00:03.0', '0000:00:04.0', '0000:00:05.0', '0000:00:06.0']),
    ('md_array', 'index', ['0000:00:07.0', '0000:00:08.0']),
    ('pci_address', '0000:00:04.0', ['0000:00:04.0']),
])
def test_resolve(clean, kind, value, pcis):
    devices, problem = irq_devices.resolve(kind, value, irq_devices.identity_table())
    assert problem is None
    assert [d['pci_address'] for d in devices] == pcis
    assert all(d['irqs'] for d in devices)


def test_resolve_problems(fresh):
    table = irq_devices.identity_table()
    assert irq_devices.resolve('serial', 'NOSUCH', table)[1] == (
        'no NVMe controller with this serial on the host (serials: LABINDEX0, LABINDEX1, LABMODEL0, LABMODEL1, '
        'LABMODEL2, LABMODEL3; cat /sys/class/nvme/*/serial)')
    assert irq_devices.resolve('by_id', BY_ID + 'NOSUCH', table)[1].startswith('no such link to a local NVMe namespace')
    assert irq_devices.resolve('by_id', '/dev/disk/by-id/ata-QEMU_DVD-ROM_QM00005', table)[0] == []
    assert 'no running md array of this name (/dev/md/model)' in irq_devices.resolve('md_array', 'model', table)[1]
    assert irq_devices.resolve('pci_address', '0000:00:1e.0', table)[1].startswith('no PCI function with MSI')
    table['md']['empty'] = {'device': 'md9', 'members': []}
    assert irq_devices.resolve('md_array', 'empty', table)[1] == 'md array empty (md9) has no member drives'


def test_rule_errors_static():
    rules = [{'selector': '^nvme0q', 'serial': ['X'], 'cpus': '0'}, {'cpus': '0'},
             {'pci_address': ['00:04.0'], 'cpus': '0'}, {'by_id': '/dev/nvme0n1', 'cpus': '0'},
             {'md_array': [''], 'cpus': '0'}, {'serial': 7, 'cpus': '0'},
             {'by_id': [MODEL[0]], 'md_array': ['models'], 'cpus': '0'}]
    errors = irq.rule_errors(rules, prefix='irq_affinity_rules')
    assert errors == [
        'irq_affinity_rules[0]: selector and serial given together; a rule selects by one of them - split it into one rule each',
        'irq_affinity_rules[1]: selects no IRQ - give one of selector (IRQ-name regex), serial, by_id, pci_address, '
        'md_array (device identity)',
        'irq_affinity_rules[2].pci_address[0] = "00:04.0": must be a full PCI address in lower case, such as '
        '0000:41:00.0 (ls /sys/bus/pci/devices)',
        'irq_affinity_rules[3].by_id[0] = "/dev/nvme0n1": must be a path under /dev/disk/by-id/ (ls -l /dev/disk/by-id/)',
        'irq_affinity_rules[4].md_array[0] = "": must be a non-empty string',
        'irq_affinity_rules[5].serial = 7: must be a string or a list of strings',
        'irq_affinity_rules[6]: by_id and md_array given together; a rule selects by one of them - split it into one '
        'rule each',
    ]


def test_rule_errors_on_the_host(fresh):
    rules = [{'serial': ['LABMODEL0', 'NOSUCH'], 'cpus': '0'}, {'md_array': ['model'], 'cpus': '1'},
             {'serial': 'LABINDEX0', 'cpus': '1'}, {'by_id': [INDEX[0]], 'cpus': '0'}]
    errors = irq.rule_errors(rules, [0, 1], names_of(fresh), True, 'irq_affinity_rules', 'irq_affinity_require_match',
                             identities=irq_devices.identity_table())
    assert errors[0].startswith('irq_affinity_rules[0].serial[1] = "NOSUCH": no NVMe controller with this serial')
    assert errors[1].startswith('irq_affinity_rules[1].md_array[0] = "model": no running md array of this name')
    assert errors[2] == ('irq_affinity_rules[3].by_id = ["/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0"]: its IRQs '
                         '40,47-48 are all taken by earlier rules (first match wins; reorder the rules, or '
                         'irq_affinity_require_match: false allows it)')
    assert len(errors) == 3


def test_match_plan_and_report_by_drive(clean):
    rules = irq.compile_rules([{'md_array': ['index'], 'policy': 'spread', 'cpus': '0-1'},
                               {'serial': ['LABMODEL3', 'LABMODEL1'], 'cpus': '1'},
                               {'selector': r'^nvme\d+q', 'cpus': '0'}], [0, 1])
    assert irq.resolve_rules(rules, irq_devices.identity_table()) == []
    names = names_of(clean)
    irq.match_rules(rules, names)
    assert [r['matched'] for r in rules] == [[39, 40, 43, 44, 47, 48], [32, 38, 41, 42, 45, 46],
                                             [31, 33, 34, 35, 36, 37]]
    entries = irq.plan(rules, names, [0, 1])
    for entry in entries:
        if irq.driver_managed(entry['name']) and entry['status'] == 'changed':
            entry['status'] = 'managed'
    report = irq.device_report(rules, entries)
    assert [(d['rule'], d['kind'], d['value'], d['controller'], d['serial'], d['pci_address'], d['block'])
            for d in report] == [
        (0, 'md_array', 'index', 'nvme4', 'LABINDEX0', '0000:00:07.0', 'nvme4n1'),
        (0, 'md_array', 'index', 'nvme5', 'LABINDEX1', '0000:00:08.0', 'nvme5n1'),
        (1, 'serial', 'LABMODEL3', 'nvme3', 'LABMODEL3', '0000:00:06.0', None),
        (1, 'serial', 'LABMODEL1', 'nvme1', 'LABMODEL1', '0000:00:04.0', None)]
    nvme1 = report[3]
    assert nvme1['irqs'] == [32, 45, 46] and nvme1['movable_irqs'][0] == 32
    assert set(nvme1['managed_irqs']) | set(nvme1['movable_irqs']) == {32, 45, 46}
    assert [v['name'] for v in nvme1['vectors']] == ['nvme1q0', 'nvme1q1', 'nvme1q2']


def test_unresolved_device_rule_matches_nothing(clean):
    rules = irq.compile_rules([{'serial': ['LABMODEL0'], 'cpus': '0'}])
    irq.match_rules(rules, names_of(clean))
    assert rules[0]['matched'] == []


def test_normalize_rule():
    assert irq.normalize_rule({'serial': 'X', 'cpus': 1}) == {'serial': ['X'], 'policy': 'cpus', 'cpus': '1'}
    assert irq.normalize_rule({'selector': 'a', 'cpus': '0'}) == {'selector': 'a', 'policy': 'cpus', 'cpus': '0'}
    assert irq.normalize_rule({'md_array': ['m'], 'selector': None, 'policy': 'spread', 'cpus': '0-1'}) == {
        'md_array': ['m'], 'policy': 'spread', 'cpus': '0-1'}
