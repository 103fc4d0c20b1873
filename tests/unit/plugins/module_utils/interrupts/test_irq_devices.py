# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device selectors of the IRQ rules (module_utils/interrupts/irq_devices.py, on nvme_devices, and their use in irq.py)
on the guest whose drives are attached in an order that does not follow the arrays (fixtures/sysfs/shuffled_*:
pass 4 of record_local_nvme.sh on tools/lab/presets/local_nvme_shuffled.yml). Kernel names nvme0..5 are
LABINDEX1, LABMODEL2, LABINDEX0, LABMODEL0, LABMODEL3, LABMODEL1 at 0000:00:03.0-08.0; RAID0 ``model`` =
LABMODEL0-3, RAID1 ``index`` = LABINDEX0-1; ``msi_irqs`` as recorded (nvme0: 31, 36, 37; nvme1: 32, 34, 35;
nvme2: 33, 38, 39; nvme3: 43-45; nvme4: 40-42; nvme5: 46-48)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import pci
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq, irq_devices
from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_devices
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import BY_ID, INDEX, MODEL, FakeSystem, fixture

# As recorded (nvme list -v of the same guest agrees, test_identity_table_matches_nvme_cli).
SERIALS = ['LABINDEX1', 'LABMODEL2', 'LABINDEX0', 'LABMODEL0', 'LABMODEL3', 'LABMODEL1']
CTRL = dict((serial, 'nvme%d' % n) for n, serial in enumerate(SERIALS))
PCI = dict((serial, '0000:00:%02d.0' % (n + 3)) for n, serial in enumerate(SERIALS))


@pytest.fixture
def arrays(tmp_path, monkeypatch):
    return FakeSystem(tmp_path, monkeypatch, 'shuffled_arrays')


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return FakeSystem(tmp_path, monkeypatch, 'shuffled_fresh')


def names_of(guest):
    return irq.irq_names(guest.read('/proc/interrupts'))


def nvme_cli_controllers():
    """Controller -> {serial, model, pci_address} from ``nvme list -v -o json`` recorded on the fresh guest."""
    found = {}
    for subsystem in json.loads(fixture('nvme', 'list_verbose_shuffled.json'))['Devices'][0]['Subsystems']:
        for ctrl in subsystem['Controllers']:
            found[ctrl['Controller']] = {'serial': ctrl['SerialNumber'], 'model': ctrl['ModelNumber'],
                                         'pci_address': ctrl['Address']}
    return found


def test_identity_table_matches_nvme_cli(fresh):
    table = irq_devices.identity_table()
    assert table['nvme'] == nvme_cli_controllers()
    assert dict((c, v['serial']) for c, v in table['nvme'].items()) == dict((c, s) for s, c in CTRL.items())
    # The same reads as nvme_info's.
    assert table['nvme'] == dict((c['name'], {'serial': c['serial'], 'model': c['model'], 'pci_address': c['pci_address']})
                                 for c in nvme_devices.controllers())


def test_identity_table_on_the_recording(arrays):
    table = irq_devices.identity_table()
    assert table['block']['nvme1n1'] == {'controller': 'nvme1', 'pci_address': PCI['LABMODEL2']}
    assert sorted(table['block']) == ['nvme%dn1' % n for n in range(6)]
    assert table['by_id'][MODEL[2]] == 'nvme1n1' and table['by_id'][MODEL[2] + '_1'] == 'nvme1n1'
    assert table['by_id'][INDEX[0]] == 'nvme2n1'
    assert table['md'] == {'model': {'device': 'md127', 'members': ['nvme1n1', 'nvme3n1', 'nvme4n1', 'nvme5n1']},
                           'index': {'device': 'md126', 'members': ['nvme0n1', 'nvme2n1']}}
    assert table['pci'][PCI['LABINDEX1']] == {'driver': 'nvme', 'irqs': [31, 36, 37]}
    assert pci.msi_irqs(PCI['LABMODEL1']) == [46, 47, 48]
    # the PCI function and driver of a controller, from its device link (what nvme_devices and nic_queues ask)
    name = [c['name'] for c in nvme_devices.controllers() if c['serial'] == 'LABMODEL1'][0]
    assert pci.function_of('/sys/class/nvme/%s/device' % name) == PCI['LABMODEL1']
    assert pci.driver('/sys/class/nvme/%s/device' % name) == 'nvme'
    assert pci.function_of('/sys/class/nvme/nvme99/device') is None and pci.numa_node(PCI['LABMODEL1']) is None
    assert irq_devices.pci_functions()[PCI['LABMODEL1']] == {'driver': 'nvme', 'numa_node': None, 'irqs': [46, 47, 48]}


def test_partition_leads_to_its_controller(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'shuffled_partitioned')
    table = irq_devices.identity_table()
    assert table['block']['nvme2n1p1'] == {'controller': 'nvme2', 'pci_address': PCI['LABINDEX0']}
    assert table['by_id'][INDEX[0] + '-part1'] == 'nvme2n1p1'
    devices, problem = irq_devices.resolve('by_id', INDEX[0] + '-part1', table)
    assert problem is None and [(d['controller'], d['serial'], d['block']) for d in devices] == [
        ('nvme2', 'LABINDEX0', 'nvme2n1p1')]


@pytest.mark.parametrize('kind, value, serials', [
    ('serial', 'LABINDEX1', ['LABINDEX1']),
    ('by_id', MODEL[2], ['LABMODEL2']),
    ('by_id', MODEL[2] + '_1', ['LABMODEL2']),
    # the members in kernel-name order: nvme1n1, nvme3n1, nvme4n1, nvme5n1
    ('md_array', 'model', ['LABMODEL2', 'LABMODEL0', 'LABMODEL3', 'LABMODEL1']),
    ('md_array', 'index', ['LABINDEX1', 'LABINDEX0']),
])
def test_resolve(arrays, kind, value, serials):
    devices, problem = irq_devices.resolve(kind, value, irq_devices.identity_table())
    assert problem is None
    assert [(d['controller'], d['serial'], d['pci_address']) for d in devices] == [(CTRL[s], s, PCI[s]) for s in serials]
    assert all(d['irqs'] for d in devices)


def test_resolve_pci_address(arrays):
    devices, problem = irq_devices.resolve('pci_address', PCI['LABMODEL2'], irq_devices.identity_table())
    assert problem is None and [(d['pci_address'], d['controller'], d['irqs']) for d in devices] == [
        (PCI['LABMODEL2'], None, [32, 34, 35])]


def test_resolve_problems(fresh):
    table = irq_devices.identity_table()
    assert irq_devices.resolve('serial', 'NOSUCH', table)[1] == (
        'no NVMe controller with this serial on the host (serials: LABINDEX0, LABINDEX1, LABMODEL0, LABMODEL1, '
        'LABMODEL2, LABMODEL3; cat /sys/class/nvme/*/serial)')
    assert irq_devices.resolve('by_id', BY_ID + 'NOSUCH', table)[1] == (
        'no such link to a local NVMe namespace on the host (ls -l /dev/disk/by-id/)')
    assert irq_devices.resolve('by_id', '/dev/disk/by-id/ata-QEMU_DVD-ROM_QM00005', table)[0] == []
    assert irq_devices.resolve('md_array', 'model', table)[1] == (
        'no running md array of this name (/dev/md/model); an array the same run creates is not there yet - select '
        'its drives by by_id or serial instead')
    assert irq_devices.resolve('pci_address', '0000:00:1e.0', table)[1] == (
        'no PCI function with MSI/MSI-X IRQs at this address (ls /sys/bus/pci/devices/*/msi_irqs)')
    table['md']['empty'] = {'device': 'md9', 'members': []}
    assert irq_devices.resolve('md_array', 'empty', table)[1] == 'md array empty (md9) has no member drives'
    table['md']['other'] = {'device': 'md8', 'members': ['vda1']}
    assert irq_devices.resolve('md_array', 'other', table)[1] == 'member vda1 of md array other is not a local NVMe drive'
    table['nvme']['nvme9'] = {'serial': 'FABRIC', 'model': 'Linux', 'pci_address': None}
    assert irq_devices.resolve('serial', 'FABRIC', table)[1] == (
        'the controller (nvme9) is not a PCI function (a fabrics controller has no IRQs of its own)')


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
                         '33,38-39 are all taken by earlier rules (first match wins; reorder the rules, or '
                         'irq_affinity_require_match: false allows it)')
    assert len(errors) == 3


def test_match_plan_and_report_by_drive(arrays):
    rules = irq.compile_rules([{'md_array': ['index'], 'policy': 'spread', 'cpus': '0-1'},
                               {'serial': ['LABMODEL3', 'LABMODEL1'], 'cpus': '1'},
                               {'selector': r'^nvme\d+q', 'cpus': '0'}], [0, 1])
    assert irq.resolve_rules(rules, irq_devices.identity_table()) == []
    names = names_of(arrays)
    irq.match_rules(rules, names)
    assert [r['matched'] for r in rules] == [[31, 33, 36, 37, 38, 39], [40, 41, 42, 46, 47, 48],
                                             [32, 34, 35, 43, 44, 45]]
    entries = irq.plan(rules, names, [0, 1])
    for entry in entries:
        if irq.driver_managed(entry['name']) and entry['status'] == 'changed':
            entry['status'] = 'managed'
    report = irq.device_report(rules, entries)
    assert [(d['rule'], d['kind'], d['value'], d['controller'], d['serial'], d['pci_address'], d['block'])
            for d in report] == [
        (0, 'md_array', 'index', 'nvme0', 'LABINDEX1', '0000:00:03.0', 'nvme0n1'),
        (0, 'md_array', 'index', 'nvme2', 'LABINDEX0', '0000:00:05.0', 'nvme2n1'),
        (1, 'serial', 'LABMODEL3', 'nvme4', 'LABMODEL3', '0000:00:07.0', None),
        (1, 'serial', 'LABMODEL1', 'nvme5', 'LABMODEL1', '0000:00:08.0', None)]
    nvme5 = report[3]
    assert nvme5['irqs'] == [46, 47, 48] and nvme5['movable_irqs'][0] == 46
    assert set(nvme5['managed_irqs']) | set(nvme5['movable_irqs']) == {46, 47, 48}
    assert [v['name'] for v in nvme5['vectors']] == ['nvme5q0', 'nvme5q1', 'nvme5q2']


def test_unresolved_device_rule_matches_nothing(fresh):
    rules = irq.compile_rules([{'serial': ['LABMODEL0'], 'cpus': '0'}])
    irq.match_rules(rules, names_of(fresh))
    assert rules[0]['matched'] == []


def test_normalize_rule():
    assert irq.normalize_rule({'serial': 'X', 'cpus': 1}) == {'serial': ['X'], 'policy': 'cpus', 'cpus': '1'}
    assert irq.normalize_rule({'selector': 'a', 'cpus': '0'}) == {'selector': 'a', 'policy': 'cpus', 'cpus': '0'}
    assert irq.normalize_rule({'md_array': ['m'], 'selector': None, 'policy': 'spread', 'cpus': '0-1'}) == {
        'md_array': ['m'], 'policy': 'spread', 'cpus': '0-1'}
