# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The irq filters (plugins/filter/irq.py) on irq_info results of lab guest irqrec (fixtures/info)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter import irq as irq_filters
from ansible_collections.inferops.node.plugins.modules import irq_info
from ansible_collections.inferops.node.tests.unit.plugins.modules.test_irq_info import SHOW, Guest
from ansible_collections.inferops.node.tests.unit.module_harness import run_module

LAB_RULES = [{'selector': r'^nvme[01]q\d+$', 'policy': 'cpus', 'cpus': '0'},
             {'selector': r'^nvme[23]q\d+$', 'policy': 'cpus', 'cpus': '1'},
             {'selector': r'^nvme[45]q\d+$', 'policy': 'spread', 'cpus': '0-1'}]


@pytest.fixture
def info(tmp_path, monkeypatch):
    Guest(tmp_path, monkeypatch, 'converged').on(SHOW, out='@converged/systemctl_show.txt')
    return run_module(irq_info.main, {})[1]


def errors(rules, info=None, require_match=False):
    return irq_filters.irq_rules_errors(rules, info, require_match, 'irq_affinity_rules', 'irq_affinity_require_match')


def test_lab_rules_are_valid(info):
    assert errors(LAB_RULES, info, True) == []


@pytest.mark.parametrize('rules, expected', [
    ([{'selector': r'^nvme[01]q\d+$', 'cpus': '5'}], ['irq_affinity_rules[0].cpus = "5": CPU(s) 5 not online (online: 0-1)']),
    ([{'selector': 'nvme[01', 'cpus': '0'}],
     ['irq_affinity_rules[0].selector = "nvme[01": not a valid regular expression: unterminated character set at position 4']),
    ([{'selector': r'^nvme9q\d+$', 'cpus': '0'}],
     ['irq_affinity_rules[0].selector = "^nvme9q\\\\d+$" matches no IRQ on this host (see /proc/interrupts; '
      'irq_affinity_require_match: false allows it)']),
    ([{'selector': 'nvme', 'policy': 'spread'}], ['irq_affinity_rules[0].cpus: required with policy spread']),
    # The kernel's stride form is a CPU list like any other (0-1:1/2 is CPU 0).
    ([{'selector': 'nvme0q', 'cpus': '0-1:1/2'}], []),
    ('nvme', ['irq_affinity_rules = "nvme": must be a list of '
              '{selector or serial or by_id or pci_address or md_array, policy, cpus}']),
    ([5], ['irq_affinity_rules[0] = 5: must be a mapping {selector or serial or by_id or pci_address or md_array, '
           'policy, cpus}']),
])
def test_rule_errors_on_the_host(info, rules, expected):
    assert errors(rules, info, True) == expected


def test_rule_errors_without_the_host():
    """Input only (no irq_info): online CPUs and matches are not checked."""
    assert errors([{'selector': r'^nvme9q$', 'cpus': '0-15:2/4'}]) == []
    assert errors([{'selector': 'x', 'cpus': '1-0'}]) == [
        'irq_affinity_rules[0].cpus = "1-0": not a valid CPU list: malformed cpulist \'1-0\': range \'1-0\' is descending '
        '(kernel cpulist syntax, e.g. 0-3,8 or 0-15:2/4)']


def test_normalize():
    assert irq_filters.irq_rules_normalize([{'selector': 'a', 'cpus': 3}, {'selector': 'b', 'policy': 'local'}, 'junk']) == [
        {'selector': 'a', 'policy': 'cpus', 'cpus': '3'}, {'selector': 'b', 'policy': 'local', 'cpus': None}]


@pytest.mark.parametrize('banned, args, expected', [
    ('', [], []),
    ('1', ['--powerthresh=off'], []),
    ('0-1', [], ['irq_affinity_banned_cpus = "0-1": bans every online CPU; irqbalance needs at least one']),
    ('0-99999999999', [], ['irq_affinity_banned_cpus = "0-99999999999": not a valid CPU list: CPU 99999999999 in '
                           '\'0-99999999999\' is beyond the supported maximum of 8192 CPUs (kernel cpulist syntax, e.g. 0-3,8 or 0-15:2/4)']),
    (7, [], ['irq_affinity_banned_cpus = 7: must be a CPU list string such as 32-63, or "" for none']),
    ('', ['--policyscript=/bin/x'], ['irq_affinity_irqbalance_args = ["--policyscript=/bin/x"]: --policyscript is set by the role']),
    ('', ['$(reboot)'], ['irq_affinity_irqbalance_args = ["$(reboot)"]: must be a list of options like --powerthresh=off']),
])
def test_irqbalance_errors(info, banned, args, expected):
    assert irq_filters.irqbalance_errors(banned, args, info, 'irq_affinity') == expected


def test_pins_verify(info):
    pinned = [{'irq': e['irq'], 'name': e['name'], 'rule': 0, 'target': '0'} for e in info['irqs'] if e['name'] in ('nvme0q0', 'nvme1q0')]
    # As recorded (and as the role reported on that run): nvme1q0's vector had not moved to CPU 0 yet.
    assert irq_filters.irq_pins_verify(pinned, info) == {'wrong': [], 'pending': ['35 (nvme1q0) still on CPU 1']}
    moved = [dict(pinned[0], target='1', rule=1)]
    check = irq_filters.irq_pins_verify(moved, info)
    assert check['wrong'] == ['IRQ %d (nvme0q0): smp_affinity_list is 0, rule 1 wants 1' % pinned[0]['irq']]


def test_pins_verify_pending(info):
    entry = dict((e['name'], e) for e in info['irqs'])['nvme2q0']
    lagging = dict(info, irqs=[dict(entry, smp_affinity_list='0', effective_affinity_list='1')])
    check = irq_filters.irq_pins_verify([{'irq': entry['irq'], 'name': 'nvme2q0', 'rule': 0, 'target': '0'}], lagging)
    assert check == {'wrong': [], 'pending': ['%d (nvme2q0) still on CPU 1' % entry['irq']]}


def test_not_an_irq_info():
    with pytest.raises(AnsibleFilterError, match='registered result of inferops.node.irq_info'):
        errors(LAB_RULES, {'changed': False})


# ---------------------------------------------------------------- device selectors (irq_info's identities)

ID_RULES = [{'by_id': ['/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0', '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1'],
             'cpus': '0'},
            {'serial': ['LABMODEL2', 'LABMODEL3'], 'cpus': '1'},
            {'pci_address': ['0000:00:07.0', '0000:00:08.0'], 'policy': 'spread', 'cpus': '0-1'}]


def test_device_rules_are_valid_on_the_recording(info):
    assert errors(ID_RULES, info, True) == []
    assert sorted(info['identities']['nvme']) == ['nvme%d' % n for n in range(6)]


@pytest.mark.parametrize('rules, expected', [
    ([{'serial': ['LABMODEL0', 'NOSUCH'], 'cpus': '0'}],
     'irq_affinity_rules[0].serial[1] = "NOSUCH": no NVMe controller with this serial on the host (serials: LABINDEX0, '
     'LABINDEX1, LABMODEL0, LABMODEL1, LABMODEL2, LABMODEL3; cat /sys/class/nvme/*/serial)'),
    ([{'md_array': ['models'], 'cpus': '0'}],
     'irq_affinity_rules[0].md_array[0] = "models": no running md array of this name (/dev/md/models); an array the '
     'same run creates is not there yet - select its drives by by_id or serial instead'),
    ([{'pci_address': ['0000:00:1f.0'], 'cpus': '0'}],
     'irq_affinity_rules[0].pci_address[0] = "0000:00:1f.0": no PCI function with MSI/MSI-X IRQs at this address '
     '(ls /sys/bus/pci/devices/*/msi_irqs)'),
    ([{'selector': '^nvme', 'serial': ['LABMODEL0'], 'cpus': '0'}],
     'irq_affinity_rules[0]: selector and serial given together; a rule selects by one of them - split it into one '
     'rule each'),
])
def test_device_rule_refusals(info, rules, expected):
    assert errors(rules, info, True) == [expected]


def test_device_rules_without_host_check_values_only():
    assert errors([{'md_array': ['nosuch'], 'cpus': '0'}], None, True) == []
    assert errors([{'by_id': ['nvme-X'], 'cpus': '0'}]) == [
        'irq_affinity_rules[0].by_id[0] = "nvme-X": must be a path under /dev/disk/by-id/ (ls -l /dev/disk/by-id/)']


def test_irq_info_reports_drives_by_identity(info):
    nvme2 = [d for d in info['devices'] if d['pci_address'] == '0000:00:05.0'][0]
    assert (nvme2['nvme_controllers'], nvme2['serials'], nvme2['block_devices'], nvme2['md_arrays']) == (
        ['nvme2'], ['LABMODEL2'], ['nvme2n1'], [])
    assert '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL2' in nvme2['by_id']
    assert sorted(nvme2['managed_irqs'] + nvme2['movable_irqs'] + nvme2['unknown_irqs']) == nvme2['irqs']
