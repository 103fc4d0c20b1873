# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The target's input rules in module_utils/fabric/nvmet.py: what the nvmeof_target role refuses (every problem at once,
naming variable, index and value) and the ports and subsystems it hands nvmet_subsystem."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet

SUB = 'nqn.2026-09.internal.ai:lab-pool'
HOST = 'nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001'
COMPUTE1 = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
SECRET = 'DHHC-1:00:Dr1pVHGMP7LGDIkHR0b0ucS0hPb4hen8HssCMPmjcP3SazVy:'
PORT = {'id': 1, 'transport': 'tcp', 'traddr': '10.77.0.10'}
GOOD = {'nqn': SUB, 'namespaces': [{'nsid': 1, 'path': '/dev/nvme0n1'}], 'allowed_hosts': [{'nqn': HOST}], 'ports': [1]}
IDENTITIES = {'compute1': {'hostnqn': COMPUTE1, 'hostid': '7e16d9e1-e671-4eb7-a92e-1455d7efcbff'}}
GROUPS = {'all': ['target1', 'compute1', 'compute2'], 'nvmeof_initiators': ['compute1'], 'fleet': ['compute1', 'compute2'],
          'empty': []}
S0 = 'nvmeof_target_subsystems[0]'
HINT = 'run the identity tasks of inferops.node.nvmeof_initiator on %s first, as playbooks/nvmeof_pool.yml does'


def errors(ports=(PORT,), subsystems=(GOOD,), **settings):
    return nvmet.target_errors([dict(p) for p in ports], [dict(s) for s in subsystems], IDENTITIES, GROUPS, settings)


def test_the_lab_input_is_accepted():
    sub = {'nqn': SUB, 'allowed_hosts': [{'group': 'nvmeof_initiators'}], 'ports': [1, 2],
           'namespaces': [{'nsid': 1, 'path': '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABPOOL0'},
                          {'nsid': 2, 'path': '/srv/nvmet/scratch.img', 'size': '64M'}]}
    ports = [PORT, {'id': 2, 'transport': 'rdma', 'traddr': '10.77.0.10', 'trsvcid': 4420}]
    assert errors(ports, [sub], soft_roce_netdev='enp0s16', restore_timeout=120, state_file='/etc/nvmet/inferops-nvmet.json') == []


@pytest.mark.parametrize('port, message', [
    ({'traddr': '10.77.0.256'}, 'nvmeof_target_ports[0].traddr = "10.77.0.256": not an IPv4 or IPv6 address (transport tcp)'),
    ({'trsvcid': 65536}, 'nvmeof_target_ports[0].trsvcid = 65536: out of range (1-65535)'),
    ({'id': 0}, 'nvmeof_target_ports[0].id = 0: out of range (1-65535)'),
    ({'transport': 'fc-nvme'}, 'nvmeof_target_ports[0].transport = "fc-nvme": not one of tcp, rdma, fc'),
    ({'traddr': None}, 'nvmeof_target_ports[0].traddr is required for a present port'),
])
def test_each_port_rule(port, message):
    assert errors([dict(PORT, **port)], [dict(GOOD, ports=[])]) == [message]


def test_ports_listed_twice_or_listening_on_one_address():
    ports = [PORT, dict(PORT, id=2), dict(PORT, traddr='10.77.0.11'), {'id': 3, 'state': 'absent'}]
    assert errors(ports) == ['nvmeof_target_ports[1]: nvmeof_target_ports[0] already listens on tcp 10.77.0.10 4420',
                             'nvmeof_target_ports[2].id = 1: listed twice']


@pytest.mark.parametrize('change, message', [
    ({'nqn': 'pool-01'}, S0 + '.nqn = "pool-01": not an NQN: expected nqn.<yyyy-mm>.<reverse domain>:<name>'),
    ({'namespaces': [{'nsid': 0, 'path': '/x'}]}, S0 + '.namespaces[0].nsid = 0: out of range (1-4294967294)'),
    ({'namespaces': [{'nsid': 1, 'path': 'x.img'}]}, S0 + '.namespaces[0].path = "x.img": not an absolute path'),
    ({'namespaces': [{'nsid': 1, 'path': '/x', 'size': '2 gig'}]}, S0 + '.namespaces[0].size = "2 gig": not a size (e.g. 64M, 2G)'),
    ({'namespaces': [{'nsid': 1, 'path': '/x', 'nguid': 'n'}]}, S0 + '.namespaces[0].nguid = "n": not a UUID'),
    ({'namespaces': [{'nsid': 1, 'path': '/x'}, {'nsid': 1, 'path': '/y'}]}, S0 + '.namespaces[1].nsid = 1: listed twice'),
    ({'allow_any_host': True}, S0 + ': allow_any_host = true and allowed_hosts are exclusive (the kernel refuses both)'),
    ({'allowed_hosts': []}, S0 + ' (nqn = "%s"): allowed_hosts is empty, so the target would refuse every host' % SUB),
    ({'allowed_hosts': [{'group': 'empty'}]},
     S0 + ' (nqn = "%s"): allowed_hosts resolves to no host (its groups have none)' % SUB),
    ({'allowed_hosts': [{'nqn': HOST, 'auth': 'dhchap'}]},
     S0 + '.allowed_hosts[0].auth = "dhchap": dhchap_key (the host secret) is missing'),
    ({'allowed_hosts': [{'nqn': HOST, 'dhchap_key': 'x'}]},
     S0 + '.allowed_hosts[0].dhchap_key: not a DH-HMAC-CHAP secret: expected DHHC-1:<00|01|02|03>:<base64>:'),
    ({'allowed_hosts': [{'nqn': HOST, 'dhchap_ctrl_key': SECRET}]}, S0 + '.allowed_hosts[0].dhchap_ctrl_key: needs dhchap_key'),
    ({'allowed_hosts': [{'nqn': 'host1'}]}, S0 + '.allowed_hosts[0].nqn = "host1": not an NQN'),
    ({'allowed_hosts': [{'nqn': HOST, 'host': 'compute1'}]},
     S0 + '.allowed_hosts[0] = {"host": "compute1", "nqn": "%s"}: give exactly one of nqn, host, group' % HOST),
    ({'allowed_hosts': [{'host': 'compute2'}]},
     S0 + '.allowed_hosts[0].host = "compute2": not an inventory host whose host NQN is known (%s)' % (HINT % 'it')),
    ({'allowed_hosts': [{'group': 'nope'}]}, S0 + '.allowed_hosts[0].group = "nope": no such inventory group'),
    ({'allowed_hosts': [{'group': 'fleet'}]},
     S0 + '.allowed_hosts[0].group = "fleet": host NQN unknown for compute2 (%s)' % (HINT % 'them')),
    ({'ports': [1, 7]}, S0 + '.ports lists 7, which is not a present port of nvmeof_target_ports'),
])
def test_each_subsystem_rule(change, message):
    found = errors(subsystems=[dict(GOOD, **change)])
    assert len(found) == 1 and found[0].startswith(message), found


def test_an_absent_subsystem_needs_only_its_nqn_and_nqns_are_unique():
    assert errors(subsystems=[GOOD, {'nqn': SUB, 'state': 'absent', 'allowed_hosts': []}]) == [
        'nvmeof_target_subsystems[1].nqn = "%s": listed twice' % SUB]


@pytest.mark.parametrize('settings, message', [
    ({'soft_roce_netdev': 'enp0s16 '}, 'nvmeof_target_soft_roce_netdev = "enp0s16 ": not an interface name'),
    ({'restore_timeout': 0}, 'nvmeof_target_restore_timeout = 0: out of range (1-2147483647)'),
    ({'state_file': 'nvmet.json'}, 'nvmeof_target_state_file = "nvmet.json": not an absolute path'),
])
def test_each_setting_rule(settings, message):
    assert errors(**settings) == [message]


def test_ports_for_the_module():
    assert nvmet.target_ports([PORT, {'id': 2, 'state': 'absent', 'traddr': '10.77.0.10'},
                               {'id': 3, 'transport': 'rdma', 'traddr': '10.77.0.10', 'trsvcid': 4421, 'state': None}]) == [
        {'id': 1, 'state': 'present', 'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 4420},
        {'id': 2, 'state': 'absent'},
        {'id': 3, 'state': 'present', 'transport': 'rdma', 'traddr': '10.77.0.10', 'trsvcid': 4421}]


def test_subsystems_for_the_module_resolve_hosts_and_groups_once():
    sub = dict(GOOD, serial='lab', model=None, allowed_hosts=[
        {'group': 'nvmeof_initiators', 'auth': 'dhchap', 'dhchap_key': SECRET},
        {'host': 'compute1'}, {'nqn': HOST, 'auth': None}])
    assert nvmet.target_subsystems([sub, {'nqn': 'nqn.2026-09.internal.ai:old', 'state': 'absent'}], IDENTITIES, GROUPS) == [
        {'nqn': SUB, 'state': 'present', 'allow_any_host': False, 'allow_no_hosts': False,
         'allowed_hosts': [{'nqn': COMPUTE1, 'auth': 'dhchap', 'dhchap_key': SECRET}, {'nqn': HOST, 'auth': 'none'}],
         'namespaces': GOOD['namespaces'], 'ports': [1], 'serial': 'lab'},
        {'nqn': 'nqn.2026-09.internal.ai:old', 'state': 'absent'}]
