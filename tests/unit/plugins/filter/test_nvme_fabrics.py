# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvme_fabrics filters: module_utils/fabric/nvme_fabrics.py's rules as the nvmeof_initiator role calls them."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter import nvme_fabrics as flt

FILTERS = flt.FilterModule().filters()
SUB = 'nqn.2026-09.internal.ai:lab-pool'
HOSTNQN = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
HOSTID = '7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
IDENT = {'hostnqn': HOSTNQN, 'hostid': HOSTID, 'hostnqn_source': 'nvme gen-hostnqn'}


def test_errors_filter_passes_mounts_and_settings():
    conns = [{'transport': 'tcp', 'traddr': '10.77.0.10', 'subnqn': SUB, 'trsvcid': 70000}]
    assert FILTERS['nvme_fabrics_errors'](conns, mounts=[{'path': '/srv/m', 'subnqn': SUB, 'nsid': 0}],
                                          settings={'retries': 0}) == [
        'nvmeof_initiator_connections[0].trsvcid = 70000: out of range (1-65535)',
        'nvmeof_initiator_retries = 0: out of range (1-100)',
        'nvmeof_initiator_mounts[0].nsid = 0: out of range (1-4294967294)']
    assert FILTERS['nvme_fabrics_errors'](None) == []


@pytest.mark.parametrize('call, message', [
    (lambda: FILTERS['nvme_fabrics_errors']('tcp'), 'nvme_fabrics_errors: nvmeof_initiator_connections must be a list'),
    (lambda: FILTERS['nvme_fabrics_errors']([1]), 'nvme_fabrics_errors: each entry of nvmeof_initiator_connections must be a dict'),
    (lambda: FILTERS['nvme_fabrics_errors']([], settings=[]), 'nvme_fabrics_errors: settings must be a dict'),
    (lambda: FILTERS['nvme_fabrics_connections']([], {'hostnqn': HOSTNQN}), 'identity must hold hostnqn and hostid'),
    (lambda: FILTERS['nvme_fabrics_host_identity']('nqn'), 'expects a list of lines'),
    (lambda: FILTERS['nvme_fabrics_identity_errors'](IDENT, ['compute1']), 'identities must be hostvars or a dict'),
    (lambda: FILTERS['nvme_fabrics_mount_plan']([{'path': '/m'}], 'x'), 'connections must be a list'),
    (lambda: FILTERS['nvme_fabrics_mount_plan']([], [], boot_timeout='ten'), 'boot_timeout must be an integer'),
    (lambda: FILTERS['nvme_fabrics_mount_filesystems']([], {'devices': []}), 'devices must be a list'),
])
def test_wrong_input_types_are_filter_errors(call, message):
    with pytest.raises(AnsibleFilterError, match=message.replace('(', r'\(')):
        call()


def test_connections_filter():
    assert FILTERS['nvme_fabrics_connections']([{'traddr': '10.77.0.10', 'subnqn': SUB}], IDENT, {'queue_size': 128}) == [
        {'subnqn': SUB, 'transport': 'tcp', 'traddr': '10.77.0.10', 'state': 'present', 'auth': 'none',
         'hostnqn': HOSTNQN, 'hostid': HOSTID, 'trsvcid': 4420, 'queue_size': 128}]


def test_host_identity_from_short_output():
    """A host whose nvme gen-hostnqn printed nothing more: missing lines read as empty."""
    assert FILTERS['nvme_fabrics_host_identity']([HOSTNQN]) == dict(IDENT, hostnqn_source='/etc/nvme/hostnqn')
    assert FILTERS['nvme_fabrics_host_identity'](['', '', HOSTNQN], hostnqn='', hostid=None) == IDENT


def test_identity_errors_read_the_fact_from_hostvars():
    hostvars = {'target1': {'ansible_host': '10.77.0.10'},
                'compute1': {'nvmeof_initiator_host_identity': IDENT},
                'compute2': {'nvmeof_initiator_host_identity': IDENT}}
    found = FILTERS['nvme_fabrics_identity_errors'](IDENT, hostvars)
    assert len(found) == 1 and found[0].startswith('Duplicates: host NQN %s is used by compute1, compute2; ' % HOSTNQN)
    del hostvars['compute2']
    assert FILTERS['nvme_fabrics_identity_errors'](IDENT, hostvars) == []
    # a plain dict of identities by host works the same
    assert FILTERS['nvme_fabrics_identity_errors'](IDENT, {'compute1': IDENT, 'gone': None}) == []


def test_mount_plan_filter():
    result = [{'subnqn': SUB, 'state': 'present', 'unit': 'u.service', 'devices': [{'nsid': 1, 'exists': True, 'device': '/dev/nvme0n1'}]}]
    assert FILTERS['nvme_fabrics_mount_plan']([{'path': '/srv/models', 'subnqn': SUB}], result) == [
        {'path': '/srv/models', 'subnqn': SUB, 'nsid': 1, 'fstype': 'xfs', 'state': 'mounted', 'device': '/dev/nvme0n1',
         'opts': '_netdev,nofail,ro,x-systemd.requires=u.service'}]


def test_a_boot_timeout_given_as_a_string_is_taken_as_ansible_takes_it():
    # -e nvmeof_initiator_boot_timeout=600 hands the filter the string "600".
    assert FILTERS['nvme_fabrics_mount_plan']([], [], boot_timeout='600') == FILTERS['nvme_fabrics_mount_plan']([], [], 600)
