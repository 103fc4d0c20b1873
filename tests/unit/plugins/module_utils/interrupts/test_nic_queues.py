# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/interrupts/nic_queues.py on the recorded lab guest with a 2-queue virtio NIC (fixtures/nic: ``fresh``
after boot, ``applied`` after groups ["1", "0"] were applied): interface reads, selection and its
messages, the per-queue plan, the writes."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq, nic_queues
from ansible_collections.inferops.node.tests.unit.host_package import installed_script
from ansible_collections.inferops.node.tests.unit.module_harness import build_tree, fixture

MAC = '52:54:00:88:00:01'
PCI = '0000:00:11.0'


def load(tmp_path, monkeypatch, state):
    root = str(tmp_path / state)
    build_tree(json.loads(fixture('nic', '%s.json' % state)), root)
    monkeypatch.setattr(sysfs, 'ROOT', root)
    return root


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return load(tmp_path, monkeypatch, 'fresh')


@pytest.fixture
def applied(tmp_path, monkeypatch):
    return load(tmp_path, monkeypatch, 'applied')


def by_name(infos):
    return dict((info['name'], info) for info in infos)


@pytest.mark.parametrize('name, expected', [
    ('virtio2-input.0', ('rx', 0)), ('virtio2-output.1', ('tx', 1)), ('virtio2-config', (None, None)),
    ('ens1f0-TxRx-3', ('both', 3)), ('i40e-ens1f0-TxRx-12', ('both', 12)),
    ('mlx5_comp7@pci:0000:41:00.0', ('both', 7)), ('mlx5_async0@pci:0000:41:00.0', (None, None)),
    ('eth0-rx-0', ('rx', 0)), ('eth0-tx-2', ('tx', 2)), ('nvme0q1', (None, None)), ('', (None, None)),
])
def test_queue_of_irq(name, expected):
    assert nic_queues.queue_of_irq(name) == expected


def test_normalize():
    assert nic_queues.normalize_mac('52-54-00-88-00-0A') == '52:54:00:88:00:0a'
    assert nic_queues.normalize_mac('52:54:00:88:00') is None
    assert nic_queues.normalize_pci('00:11.0') == PCI
    assert nic_queues.normalize_pci('0000:41:00.1') == '0000:41:00.1'
    assert nic_queues.normalize_pci('41:00') is None


def test_interfaces_applied(applied):
    infos = by_name(nic_queues.interfaces())
    assert sorted(infos) == ['enp0s17', 'enp0s2', 'lo']
    nic = infos['enp0s17']
    assert nic['mac'] == MAC and nic['pci_address'] == PCI and nic['driver'] == 'virtio_net'
    assert nic['rx_queues'] == 2 and nic['tx_queues'] == 2
    assert [q['rps_cpus'] for q in nic['rx']] == ['2', '1']
    assert [q['rps_cpulist'] for q in nic['rx']] == ['1', '0']
    assert [q['xps_cpus'] for q in nic['tx']] == ['2', '1']
    vectors = dict((v['name'], v) for v in nic['irqs'])
    assert sorted(vectors) == ['virtio2-config', 'virtio2-input.0', 'virtio2-input.1', 'virtio2-output.0', 'virtio2-output.1']
    assert vectors['virtio2-config']['queue'] is None
    assert (vectors['virtio2-input.1']['direction'], vectors['virtio2-input.1']['queue']) == ('rx', 1)
    assert vectors['virtio2-input.0']['smp_affinity_list'] == '1'
    assert vectors['virtio2-input.1']['smp_affinity_list'] == '0'
    assert infos['lo']['pci_address'] is None and infos['lo']['irqs'] == []
    assert nic_queues.nr_cpu_ids() == 2


def test_input_errors_name_index_value_and_fix():
    errors = nic_queues.input_errors([
        {'mac': 'zz:54:00:88:00:01', 'cpu_groups': ['0']},
        {'name': 'eth0', 'mac': MAC, 'cpu_groups': ['0']},
        {'pci_address': '41:00', 'cpu_groups': ['0-x']},
        {'name': 'eth0', 'cpu_groups': [], 'rps': 'maybe', 'xps': 'yes', 'speed': 1},
        'eth0',
    ], 'nic_queues_interfaces')
    assert errors == [
        'nic_queues_interfaces[0].mac = "zz:54:00:88:00:01": not a MAC address (aa:bb:cc:dd:ee:ff, as `ip link` shows it)',
        'nic_queues_interfaces[1]: give exactly one of name, mac, pci_address to choose the interface (given: name, mac)',
        'nic_queues_interfaces[2].pci_address = "41:00": not a PCI address (0000:41:00.0, as `ethtool -i <if>` shows '
        'in bus-info)',
        'nic_queues_interfaces[2].cpu_groups = ["0-x"]: group 0 ("0-x") is not a valid CPU list: malformed cpulist '
        "'0-x': bad element '0-x' (kernel cpulist syntax, e.g. 0-31 or 0-15:2/4)",
        'nic_queues_interfaces[3]: unknown key "speed" (known: name, mac, pci_address, cpu_groups, rps, xps, irqs)',
        'nic_queues_interfaces[3].cpu_groups = []: must be a non-empty list of CPU lists, one per serving instance '
        '(e.g. ["0-31", "32-63"])',
        'nic_queues_interfaces[3].rps = "maybe": must be true or false',
        'nic_queues_interfaces[4] = "eth0": must be a mapping with one of name, mac, pci_address',
    ]
    assert nic_queues.input_errors({'name': 'x'}, 'v') == ['v = {"name": "x"}: must be a list of {name|mac|pci_address, cpu_groups}']
    assert nic_queues.input_errors([{'name': 'eth0'}], 'v') == [
        'v[0].cpu_groups: required (or the top-level CPU groups), the CPU lists of the serving instances']
    # The top-level groups stand in, and are named as such.
    assert nic_queues.input_errors([{'name': 'eth0'}], 'v', ['0-3'], online=[0, 1]) == [
        'cpu_groups = ["0-3"]: group 0 has CPU(s) 2-3 that are not online (online: 0-1)']
    assert nic_queues.input_errors([{'name': 'eth0'}], 'v', ['0', [1]]) == []


def test_select_against_the_host(applied):
    wanted, errors = nic_queues.select([{'mac': MAC.upper(), 'cpu_groups': ['1', '0']}], 'v', online=[0, 1])
    assert errors == [] and [w['interface']['name'] for w in wanted] == ['enp0s17']
    assert wanted[0]['groups'] == [[1], [0]]
    wanted, errors = nic_queues.select([
        {'mac': '52:54:00:88:00:99'},
        {'pci_address': '00:11.0'},
        {'name': 'enp0s17'},
        {'name': 'lo'},
    ], 'nic_queues_interfaces', ['0-1'], online=[0, 1])
    assert errors == [
        'nic_queues_interfaces[0].mac = "52:54:00:88:00:99": no interface on this host has this mac (interfaces: '
        'enp0s17 (mac 52:54:00:88:00:01, pci 0000:00:11.0), enp0s2 (mac 52:54:00:00:00:01, pci 0000:00:02.0))',
        'nic_queues_interfaces[2].name = "enp0s17": is enp0s17, already chosen by nic_queues_interfaces[1]; list each '
        'interface once',
    ]
    assert [w['index'] for w in wanted] == [1, 3]


def test_plan_fresh_two_groups(fresh):
    wanted, errors = nic_queues.select([{'pci_address': PCI, 'cpu_groups': ['1', '0']}], 'v', online=[0, 1])
    assert errors == []
    planned = nic_queues.plan(wanted)
    queues = dict((q['queue'], q) for q in planned['queues'])
    assert dict((k, (q['cpus'], q['target'])) for k, q in queues.items()) == {
        'rx-0': ('1', '2'), 'rx-1': ('0', '1'), 'tx-0': ('1', '2'), 'tx-1': ('0', '1')}
    assert queues['rx-0']['before'] == '0' and queues['rx-0']['status'] == 'changed'
    assert queues['tx-0']['attr'] == '/sys/class/net/enp0s17/queues/tx-0/xps_cpus'
    vectors = dict((e['name'], e) for e in nic_queues.irq_plan(planned, [0, 1]))
    assert sorted(vectors) == ['virtio2-input.0', 'virtio2-input.1', 'virtio2-output.0', 'virtio2-output.1']
    assert dict((n, e['target']) for n, e in vectors.items()) == {
        'virtio2-input.0': '1', 'virtio2-input.1': '0', 'virtio2-output.0': '1', 'virtio2-output.1': '0'}
    assert all(e['rule'] == 0 for e in vectors.values())


def test_apply_then_nothing_left(fresh):
    wanted, _errors = nic_queues.select([{'mac': MAC, 'cpu_groups': ['1', '0']}], 'v', online=[0, 1])
    planned = nic_queues.plan(wanted)
    vectors = nic_queues.irq_plan(planned, [0, 1])
    nic_queues.apply(planned['queues'])
    irq.apply(vectors)
    assert all(q['status'] in ('changed', 'unchanged') for q in planned['queues'])
    assert sysfs.read_attr('/sys/class/net/enp0s17/queues/rx-0/rps_cpus') == '2'
    assert sysfs.read_attr('/proc/irq/%d/smp_affinity_list' % [e for e in vectors if e['name'] == 'virtio2-input.1'][0]['irq']) == '0'
    # A second plan finds nothing to do.
    wanted, _errors = nic_queues.select([{'mac': MAC, 'cpu_groups': ['1', '0']}], 'v', online=[0, 1])
    planned = nic_queues.plan(wanted)
    assert not nic_queues.changed(planned['queues'], nic_queues.irq_plan(planned, [0, 1]))


def test_applied_is_unchanged(applied):
    wanted, _errors = nic_queues.select([{'name': 'enp0s17', 'cpu_groups': ['1', '0']}], 'v', online=[0, 1])
    planned = nic_queues.plan(wanted)
    assert [q['status'] for q in planned['queues']] == ['unchanged'] * 4
    assert [e['status'] for e in nic_queues.irq_plan(planned, [0, 1])] == ['unchanged'] * 4


def test_switches_and_one_group(fresh):
    wanted, _errors = nic_queues.select([{'name': 'enp0s17', 'cpu_groups': ['0-1'], 'xps': False, 'irqs': False}],
                                        'v', online=[0, 1])
    planned = nic_queues.plan(wanted)
    assert [(q['queue'], q['target']) for q in planned['queues']] == [('rx-0', '3'), ('rx-1', '3')]
    assert planned['irq_targets'] == {}


@pytest.mark.parametrize('count, groups, expected', [
    # 8 queues over 2 groups of 4 CPUs: blocks of 4, one CPU each.
    (8, [[0, 1, 2, 3], [4, 5, 6, 7]], [[0], [1], [2], [3], [4], [5], [6], [7]]),
    # 2 queues over one group of 4 CPUs: every 2nd CPU each.
    (2, [[0, 1, 2, 3]], [[0, 2], [1, 3]]),
    # 4 queues over one group of 2 CPUs: one CPU each, round-robin.
    (4, [[0, 1]], [[0], [1], [0], [1]]),
    # 3 queues over 2 groups: 0-1 to the first, 2 to the second.
    (3, [[0, 1], [2, 3]], [[0], [1], [2, 3]]),
])
def test_blocks_and_shares(count, groups, expected):
    layout = nic_queues._blocks(count, groups)
    assert [nic_queues._share(*layout[q]) for q in range(count)] == expected


# ---------------------------------------------------------------- the role's boot-time script

@pytest.fixture
def host_script(fresh, tmp_path):
    """The role's script run from the zip application the role installs (the package inferops inside it)."""
    lib = tmp_path / 'usr_local_lib'
    with installed_script('nic_queues', 'inferops_nic_queues.py', lib) as script:
        assert script.nic_queues.__file__ == str(lib / 'inferops_nic_queues.pyz' / 'inferops' / 'interrupts' / 'nic_queues.py')
        script.nic_queues.sysfs.ROOT = fresh
        yield script


def test_host_script_apply(fresh, host_script, tmp_path, monkeypatch, capsys):
    # No irqbalance in the fixture: record what would be banned instead of waiting for its socket.
    bans = []
    monkeypatch.setattr(host_script.nic_queues, 'irqbalance_ban', lambda numbers, wait=0: bans.append((sorted(numbers), wait)))
    config = tmp_path / 'nic-queues.json'
    config.write_text(json.dumps({'interfaces': [{'mac': MAC}, {'mac': '52:54:00:88:00:99'}],
                                  'cpu_groups': ['1', '0'], 'irqbalance_ban': True}))
    assert host_script.main(['inferops-nic-queues.py', str(config)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('inferops-nic-queues: skipped: interfaces[1].mac = "52:54:00:88:00:99": no interface')
    assert out[1:] == ['enp0s17 rx-0 -> 2 (CPUs 1)', 'enp0s17 rx-1 -> 1 (CPUs 0)', 'enp0s17 tx-0 -> 2 (CPUs 1)',
                       'enp0s17 tx-1 -> 1 (CPUs 0)', 'IRQ 32 (virtio2-input.0) -> 1', 'IRQ 34 (virtio2-input.1) -> 0',
                       'inferops-nic-queues: 1 interface(s), 4 queue(s), 4 IRQ(s), 0 failed, 1 skipped']
    assert bans == [([32, 33, 34, 35], nic_queues.IRQBALANCE_WAIT)]
    assert host_script.main(['inferops-nic-queues.py', str(config)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        'inferops-nic-queues: 1 interface(s), 4 queue(s), 4 IRQ(s), 0 failed, 1 skipped')
