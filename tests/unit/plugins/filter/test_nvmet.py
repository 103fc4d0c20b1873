# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvmet filter: the allowed-hosts rule of module_utils/fabric/nvmet.py as the nvmeof_target role applies it."""

from __future__ import annotations


import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter import nvmet as flt
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet

FILTERS = flt.FilterModule().filters()
check = FILTERS['nvmet_allowed_hosts_errors']
SUB = 'nqn.2026-09.internal.ai:models-pool-01'
HOST = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
VAR = 'nvmeof_target_subsystems'
EMPTY = ('nvmeof_target_subsystems[2] (nqn = "%s"): allowed_hosts is empty, so the target would refuse every host '
         '(a connected host at its next reconnect); list the hosts allowed to connect in '
         'nvmeof_target_subsystems[2].allowed_hosts, or set nvmeof_target_subsystems[2].allow_no_hosts = true if no '
         'host may connect' % SUB)


def test_empty_list_is_refused_naming_subsystem_variable_and_fix():
    assert check({'nqn': SUB, 'allowed_hosts': []}, VAR, 2) == [EMPTY]
    # a missing list is an empty one; the index may come as a string from Jinja
    assert check({'nqn': SUB}, VAR, '2') == [EMPTY]


@pytest.mark.parametrize('value', [False, 'false', 'no', 'off', 0, '0', 'n'])
def test_opt_out_spellings_are_refused(value):
    assert check({'nqn': SUB, 'allow_no_hosts': value, 'allow_any_host': value}, VAR, 2) == [EMPTY]


@pytest.mark.parametrize('value', [True, 'true', 'True', 'yes', 'on', 1, '1', 'y'])
def test_opt_in_is_accepted_in_every_boolean_spelling(value):
    assert check({'nqn': SUB, 'allowed_hosts': [], 'allow_no_hosts': value}, VAR, 0) == []
    assert check({'nqn': SUB, 'allowed_hosts': [], 'allow_any_host': value}, VAR, 0) == []


def test_hosts_make_it_fine():
    assert check({'nqn': SUB, 'allowed_hosts': [{'nqn': HOST}]}, VAR, 0) == []
    assert check({'nqn': SUB, 'allowed_hosts': [{'group': 'compute'}]}, VAR, 0, hosts=['gpu-01']) == []


def test_entries_that_resolve_to_no_host_are_refused():
    """A group with no host in the inventory: the role passes the resolved hosts."""
    errors = check({'nqn': SUB, 'allowed_hosts': [{'group': 'compute'}]}, VAR, 0, hosts=[])
    assert len(errors) == 1
    assert errors[0].startswith('nvmeof_target_subsystems[0] (nqn = "%s"): allowed_hosts resolves to no host (its groups have none), '
                                'so the target would refuse every host' % SUB)
    assert 'nvmeof_target_subsystems[0].allow_no_hosts = true' in errors[0]
    # opting in with a listed group is a contradiction even while the group is empty
    errors = check({'nqn': SUB, 'allowed_hosts': [{'group': 'compute'}], 'allow_no_hosts': True}, VAR, 0, hosts=[])
    assert errors and 'allow_no_hosts = true and allowed_hosts are exclusive' in errors[0]


def test_contradictions():
    assert check({'nqn': SUB, 'allowed_hosts': [{'nqn': HOST}], 'allow_no_hosts': 'yes'}, VAR, 1) == [
        'nvmeof_target_subsystems[1] (nqn = "%s"): allow_no_hosts = true and allowed_hosts are exclusive; empty '
        'nvmeof_target_subsystems[1].allowed_hosts if no host may connect, or set nvmeof_target_subsystems[1].allow_no_hosts '
        '= false' % SUB]
    errors = check({'nqn': SUB, 'allow_no_hosts': True, 'allow_any_host': 'true'}, VAR, 1)
    assert len(errors) == 1 and 'allow_no_hosts = true and allow_any_host = true are exclusive' in errors[0]


def test_the_filter_and_the_module_share_the_rule():
    """Same words from module_utils for the module (variable 'subsystems') and the role."""
    assert nvmet.allowed_hosts_errors(VAR, 2, SUB, []) == [EMPTY]
    assert nvmet.allowed_hosts_errors('subsystems', 0, SUB, [], removed=[HOST])[0].startswith(
        'subsystems[0] (nqn = "%s"): allowed_hosts is empty (it would remove the last allowed host, %s), so' % (SUB, HOST))
    assert nvmet.allowed_hosts_errors('subsystems', 0, SUB, [], removed=['b', 'a'])[0].count(
        'the last allowed hosts, a, b') == 1


@pytest.mark.parametrize('subsystem, args, kwargs, needle', [
    ('not a dict', (VAR, 0), {}, "'not a dict'"),
    ({'nqn': SUB}, (VAR, 'first'), {}, "'first'"),
    ({'nqn': SUB}, (VAR, True), {}, 'True'),
    ({'nqn': SUB, 'allowed_hosts': 'host-a'}, (VAR, 0), {}, "'host-a'"),
    ({'nqn': SUB, 'allow_no_hosts': 'maybe'}, (VAR, 0), {}, 'nvmeof_target_subsystems[0].allow_no_hosts'),
    ({'nqn': SUB, 'allow_any_host': 'sure'}, (VAR, 0), {}, 'nvmeof_target_subsystems[0].allow_any_host'),
])
def test_bad_arguments_raise_naming_the_value(subsystem, args, kwargs, needle):
    with pytest.raises(AnsibleFilterError) as err:
        check(subsystem, *args, **kwargs)
    assert needle in str(err.value)
    assert 'nvmet_allowed_hosts_errors' in str(err.value)


# ------------------------------------------------------------------ the target role's whole input

COMPUTE1 = {'hostnqn': HOST, 'hostid': '7e16d9e1-e671-4eb7-a92e-1455d7efcbff'}
HOSTVARS = {'target1': {'ansible_host': '10.77.0.10'}, 'compute1': {'nvmeof_initiator_host_identity': COMPUTE1}}
GROUPS = {'all': ['target1', 'compute1'], 'nvmeof_initiators': ['compute1']}
PORTS = [{'id': 1, 'traddr': '10.77.0.10'}]


def test_target_errors_reads_identities_from_hostvars():
    subs = [{'nqn': SUB, 'allowed_hosts': [{'group': 'nvmeof_initiators'}, {'host': 'compute1'}], 'ports': [1]}]
    assert FILTERS['nvmet_target_errors'](subs, PORTS, identities=HOSTVARS, groups=GROUPS) == []
    assert FILTERS['nvmet_target_errors'](subs, PORTS, identities={}, groups=GROUPS) == [
        'nvmeof_target_subsystems[0].allowed_hosts[0].group = "nvmeof_initiators": host NQN unknown for compute1 (%s)'
        % (nvmet.IDENTITY_HINT % 'them'),
        'nvmeof_target_subsystems[0].allowed_hosts[1].host = "compute1": not an inventory host whose host NQN is known (%s)'
        % (nvmet.IDENTITY_HINT % 'it')]


@pytest.mark.parametrize('value', ['yes', 'true', 1])
def test_target_errors_accepts_boolean_spellings(value):
    subs = [{'nqn': SUB, 'allowed_hosts': [], 'allow_no_hosts': value}]
    assert FILTERS['nvmet_target_errors'](subs, PORTS) == []
    assert FILTERS['nvmet_target_subsystems'](subs)[0]['allow_no_hosts'] is True


def test_target_errors_refuses_a_non_boolean():
    with pytest.raises(AnsibleFilterError, match=r'nvmet_target_errors: nvmeof_target_subsystems\[0\].allow_any_host'):
        FILTERS['nvmet_target_errors']([{'nqn': SUB, 'allow_any_host': 'maybe'}], PORTS)


def test_target_ports_and_subsystems_for_the_module():
    assert FILTERS['nvmet_target_ports'](PORTS) == [
        {'id': 1, 'state': 'present', 'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 4420}]
    subs = FILTERS['nvmet_target_subsystems']([{'nqn': SUB, 'allowed_hosts': [{'group': 'nvmeof_initiators'}]}],
                                              identities=HOSTVARS, groups=GROUPS)
    assert subs[0]['allowed_hosts'] == [{'nqn': HOST, 'auth': 'none'}]


@pytest.mark.parametrize('call, message', [
    (lambda: FILTERS['nvmet_target_errors']({}, PORTS), 'nvmet_target_errors: nvmeof_target_subsystems must be a list'),
    (lambda: FILTERS['nvmet_target_errors']([], ['x']), 'nvmet_target_errors: each entry of nvmeof_target_ports must be a dict'),
    (lambda: FILTERS['nvmet_target_errors']([], PORTS, groups=[]), 'nvmet_target_errors: groups must be a dict'),
    (lambda: FILTERS['nvmet_target_subsystems']([], identities=['x']), 'identities must be hostvars or a dict'),
    (lambda: FILTERS['nvmet_target_ports']('1'), 'nvmet_target_ports: ports must be a list'),
])
def test_wrong_input_types_are_filter_errors(call, message):
    with pytest.raises(AnsibleFilterError, match=message.replace('[', r'\[').replace(']', r'\]')):
        call()
