# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The initiator's input rules in module_utils/fabric/nvme_fabrics.py: what the nvmeof_initiator role refuses (every
problem at once, naming variable, index and value), what it hands nvme_connect, its identity and its mounts."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common as common
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics as fabrics

SUB = 'nqn.2026-09.internal.ai:lab-pool'
GOOD = {'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 4420, 'subnqn': SUB}
SECRET = 'DHHC-1:00:Dr1pVHGMP7LGDIkHR0b0ucS0hPb4hen8HssCMPmjcP3SazVy:'
HOSTNQN = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
HOSTID = '7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
C0 = 'nvmeof_initiator_connections[0]'


def errors(conns=(), mounts=(), **settings):
    return fabrics.initiator_errors([dict(c) for c in conns], [dict(m) for m in mounts], settings)


def test_the_lab_input_is_accepted():
    mounts = [{'path': '/srv/models', 'subnqn': SUB, 'nsid': 1, 'fstype': 'xfs', 'readonly': True}]
    settings = dict(nr_io_queues=2, queue_size=128, ctrl_loss_tmo=120, reconnect_delay=2, boot_timeout=600, retry_delay=2,
                    retries=3, soft_roce_netdev='enp0s16', read_ahead_sectors=8192, hostnqn=None, hostid=None)
    assert errors([GOOD, dict(GOOD, transport='rdma'), dict(GOOD, state='absent', trsvcid=4421)], mounts, **settings) == []


@pytest.mark.parametrize('change, message', [
    ({'subnqn': 'nqn.2026-13.internal.ai:lab-pool'}, C0 + '.subnqn = "nqn.2026-13.internal.ai:lab-pool": not an NQN: expected '),
    ({'traddr': '10.77.0.300'}, C0 + '.traddr = "10.77.0.300": not an IPv4 or IPv6 address (transport tcp)'),
    ({'trsvcid': 70000}, C0 + '.trsvcid = 70000: out of range (1-65535)'),
    ({'transport': 'udp'}, C0 + '.transport = "udp": not one of tcp, rdma, fc'),
    ({'auth': 'dhchap'}, C0 + '.auth = "dhchap": dhchap_secret (the host secret) is missing'),
    ({'dhchap_ctrl_secret': SECRET}, C0 + '.dhchap_ctrl_secret: needs dhchap_secret'),
    ({'dhchap_secret': 'DHHC-1:00:bm90LWEta2V5:'}, C0 + '.dhchap_secret: not a DH-HMAC-CHAP secret: the key is 5 bytes'),
    ({'host_traddr': '10.77.0'}, C0 + '.host_traddr = "10.77.0": not an IPv4 or IPv6 address (transport tcp)'),
    ({'host_iface': 'enp0s16/x'}, C0 + '.host_iface = "enp0s16/x": not an interface name'),
    ({'transport': 'rdma', 'host_iface': 'enp0s16'}, C0 + '.host_iface = "enp0s16": only tcp binds to an interface (transport rdma)'),
    ({'transport': 'fc', 'traddr': '10.77.0.10', 'trsvcid': None}, C0 + '.traddr = "10.77.0.10": not an FC address'),
    ({'transport': 'fc', 'traddr': 'nn-0x20000090fa94845f:pn-0x10000090fa94845f'},
     C0 + '.trsvcid = 4420: fc has no service id (leave it unset)'),
    ({'name': 'a b'}, C0 + '.name = "a b": not a name: use letters, digits'),
    ({'queue_size': 8}, C0 + '.queue_size = 8: out of range (16-1024)'),
    ({'nr_io_queues': 0}, C0 + '.nr_io_queues = 0: out of range (1-1024)'),
    ({'ctrl_loss_tmo': -2}, C0 + '.ctrl_loss_tmo = -2: out of range (-1 (forever) or 0-2147483647)'),
    ({'reconnect_delay': 0}, C0 + '.reconnect_delay = 0: out of range (1-2147483647)'),
    ({'keep_alive_tmo': 65536}, C0 + '.keep_alive_tmo = 65536: out of range (1-65535)'),
])
def test_each_connection_rule_names_variable_index_and_value(change, message):
    found = errors([dict(GOOD, **change)])
    assert len(found) == 1 and found[0].startswith(message), found


def test_every_problem_is_reported_at_once_and_duplicates_are_named():
    found = errors([GOOD, GOOD, dict(GOOD, traddr='10.77.0.11', name='pool'), dict(GOOD, traddr='10.77.0.12', name='pool'),
                    dict(GOOD, trsvcid=0)])
    assert found == [
        'nvmeof_initiator_connections[4].trsvcid = 0: out of range (1-65535)',
        "nvmeof_initiator_connections[0] and nvmeof_initiator_connections[1] have the same name 'lab-pool-tcp-10.77.0.10-4420'",
        'nvmeof_initiator_connections[0] and nvmeof_initiator_connections[1] are the same connection '
        '(tcp 10.77.0.10:4420, %s)' % SUB,
        "nvmeof_initiator_connections[2] and nvmeof_initiator_connections[3] have the same name 'pool'"]


@pytest.mark.parametrize('settings, message', [
    ({'nr_io_queues': 2000}, 'nvmeof_initiator_nr_io_queues = 2000: out of range (1-1024)'),
    ({'queue_size': 15}, 'nvmeof_initiator_queue_size = 15: out of range (16-1024)'),
    ({'reconnect_delay': 0}, 'nvmeof_initiator_reconnect_delay = 0: out of range (1-2147483647)'),
    ({'keep_alive_tmo': 0}, 'nvmeof_initiator_keep_alive_tmo = 0: out of range (1-65535)'),
    ({'ctrl_loss_tmo': -3}, 'nvmeof_initiator_ctrl_loss_tmo = -3: out of range (-1 (forever) or 0-2147483647)'),
    ({'retries': 0}, 'nvmeof_initiator_retries = 0: out of range (1-100)'),
    ({'retry_delay': 3601}, 'nvmeof_initiator_retry_delay = 3601: out of range (0-3600)'),
    ({'boot_timeout': 0}, 'nvmeof_initiator_boot_timeout = 0: out of range (1-86400)'),
    ({'hostnqn': 'host1'}, 'nvmeof_initiator_hostnqn = "host1": not an NQN: expected'),
    ({'hostid': 'x'}, 'nvmeof_initiator_hostid = "x": not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)'),
    ({'soft_roce_netdev': 'a very long interface'}, 'nvmeof_initiator_soft_roce_netdev = "a very long interface": not an interface name'),
    ({'read_ahead_sectors': 12}, 'nvmeof_initiator_read_ahead_sectors = 12: must be a non-negative multiple of 8 (one 4 KiB page)'),
    ({'read_ahead_sectors': -8}, 'nvmeof_initiator_read_ahead_sectors = -8: must be a non-negative multiple of 8 (one 4 KiB page)'),
])
def test_each_setting_rule(settings, message):
    found = errors(**settings)
    assert len(found) == 1 and found[0].startswith(message), found


@pytest.mark.parametrize('mount, message', [
    ({'path': 'srv/models'}, 'nvmeof_initiator_mounts[0].path = "srv/models": not an absolute mount point'),
    ({'path': '/'}, 'nvmeof_initiator_mounts[0].path = "/": not an absolute mount point'),
    ({'subnqn': 'nqn.2026-09.internal.ai:other'},
     'nvmeof_initiator_mounts[0].subnqn = "nqn.2026-09.internal.ai:other": no present connection in '
     'nvmeof_initiator_connections has this subsystem'),
    ({'nsid': 0}, 'nvmeof_initiator_mounts[0].nsid = 0: out of range (1-4294967294)'),
    ({'opts': 'noatime,bogus=1'}, 'nvmeof_initiator_mounts[0].opts = "noatime,bogus=1": bogus=1: unknown option'),
])
def test_each_mount_rule(mount, message):
    found = errors([GOOD], [dict({'path': '/srv/models', 'subnqn': SUB}, **mount)])
    assert len(found) == 1 and found[0].startswith(message), found


def test_a_mount_listed_twice_and_one_whose_connection_is_absent():
    found = errors([dict(GOOD, state='absent')], [{'path': '/srv/m', 'subnqn': SUB}, {'path': '/srv/m', 'subnqn': SUB, 'state': 'absent'}])
    assert found == ['nvmeof_initiator_mounts[0].subnqn = "%s": no present connection in nvmeof_initiator_connections '
                     'has this subsystem' % SUB,
                     'nvmeof_initiator_mounts[1].path = "/srv/m": listed twice']


def test_the_module_raises_the_same_rule_in_its_own_words():
    with pytest.raises(common.NvmeInputError) as err:
        fabrics.check_connection(dict(GOOD, auth='dhchap', state='present'), 'connections[0].')
    assert str(err.value) == 'connections[0].auth=dhchap needs connections[0].dhchap_secret (the host secret is missing)'
    conn = fabrics.check_connection(dict(GOOD, traddr='fe80:0:0::1', host_iface='enp0s16', queue_size=128), 'c.')
    assert conn == {'transport': 'tcp', 'subnqn': SUB, 'traddr': 'fe80::1', 'trsvcid': 4420, 'host_traddr': None,
                    'host_iface': 'enp0s16', 'nr_io_queues': None, 'queue_size': 128, 'ctrl_loss_tmo': None,
                    'reconnect_delay': None, 'keep_alive_tmo': None, 'dhchap_secret': None, 'dhchap_ctrl_secret': None,
                    'name': 'lab-pool-tcp-fe80__1-4420-enp0s16'}


def test_connections_for_the_module_get_defaults_and_identity():
    identity = {'hostnqn': HOSTNQN, 'hostid': HOSTID}
    conns = [{'traddr': '10.77.0.10', 'subnqn': SUB, 'queue_size': 256, 'trsvcid': None, 'name': None, 'dhchap_secret': SECRET,
              'auth': 'dhchap'},
             {'transport': 'fc', 'traddr': 'nn-0x1:pn-0x2', 'subnqn': SUB, 'state': 'absent'}]
    defaults = {'nr_io_queues': 2, 'queue_size': 128, 'ctrl_loss_tmo': None, 'reconnect_delay': 2, 'keep_alive_tmo': None}
    assert fabrics.initiator_connections(conns, identity, defaults) == [
        {'subnqn': SUB, 'transport': 'tcp', 'traddr': '10.77.0.10', 'state': 'present', 'auth': 'dhchap', 'hostnqn': HOSTNQN,
         'hostid': HOSTID, 'trsvcid': 4420, 'nr_io_queues': 2, 'queue_size': 256, 'reconnect_delay': 2, 'dhchap_secret': SECRET},
        {'subnqn': SUB, 'transport': 'fc', 'traddr': 'nn-0x1:pn-0x2', 'state': 'absent', 'auth': 'none', 'hostnqn': HOSTNQN,
         'hostid': HOSTID, 'nr_io_queues': 2, 'queue_size': 128, 'reconnect_delay': 2}]


@pytest.mark.parametrize('lines, variables, expected', [
    (['', '', HOSTNQN], {}, {'hostnqn': HOSTNQN, 'hostid': HOSTID, 'hostnqn_source': 'nvme gen-hostnqn'}),
    ([HOSTNQN + '\n', ' 0BADC0DE-0000-4000-8000-000000000001 ', 'nqn.x'], {},
     {'hostnqn': HOSTNQN, 'hostid': '0badc0de-0000-4000-8000-000000000001', 'hostnqn_source': '/etc/nvme/hostnqn'}),
    # an NQN without a UUID: the host ID Ansible's to_uuid filter gave it before the rules moved here
    (['', '', ''], {'hostnqn': 'nqn.x:y'},
     {'hostnqn': 'nqn.x:y', 'hostid': '1018387f-606e-52ca-aad3-c92a34f0238d', 'hostnqn_source': 'nvmeof_initiator_hostnqn'}),
    (['', '', HOSTNQN], {'hostid': '0badc0de-0000-4000-8000-000000000001'},
     {'hostnqn': HOSTNQN, 'hostid': '0badc0de-0000-4000-8000-000000000001', 'hostnqn_source': 'nvme gen-hostnqn'}),
])
def test_host_identity(lines, variables, expected):
    assert fabrics.host_identity(*lines, **variables) == expected


def test_identity_errors_name_invalid_values_and_the_hosts_sharing_one():
    good = fabrics.host_identity('', '', HOSTNQN)
    assert fabrics.identity_errors(good, {'compute1': good, 'compute2': fabrics.host_identity('', '', 'nqn.x:y')}) == []
    assert fabrics.identity_errors({'hostnqn': 'host1', 'hostid': 'x', 'hostnqn_source': 'nvmeof_initiator_hostnqn'}) == [
        'host NQN (from nvmeof_initiator_hostnqn) = "host1": not an NQN: expected nqn.<yyyy-mm>.<reverse domain>:<name> '
        '(e.g. nqn.2026-09.internal.ai:models-pool-01, at most 223 bytes) or nqn.2014-08.org.nvmexpress:uuid:<uuid>',
        'host ID = "x": not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)']
    assert fabrics.identity_errors(good, {'compute2': good, 'compute1': good}) == [
        'Duplicates: host NQN %s is used by compute1, compute2; host ID %s is used by compute1, compute2. Cloned hosts keep '
        'the NQN of their image: delete /etc/nvme/hostnqn and /etc/nvme/hostid on all but one of them, or set '
        'nvmeof_initiator_hostnqn / nvmeof_initiator_hostid per host' % (HOSTNQN, HOSTID)]


def test_mount_plan_resolves_devices_and_waits_for_the_boot_units():
    result = [
        {'subnqn': SUB, 'state': 'present', 'unit': 'inferops-nvmf-connect@b.service',
         'devices': [{'nsid': 1, 'exists': True, 'device': '/dev/nvme1n1'}, {'nsid': 2, 'exists': False, 'device': '/dev/nvme1n2'}]},
        {'subnqn': SUB, 'state': 'present', 'unit': 'inferops-nvmf-connect@a.service',
         'devices': [{'nsid': 1, 'exists': True, 'device': '/dev/nvme1n1'}]},
        {'subnqn': SUB, 'state': 'absent', 'unit': None, 'devices': []},
    ]
    mounts = [{'path': '/srv/models', 'subnqn': SUB},
              {'path': '/srv/scratch', 'subnqn': SUB, 'nsid': 2, 'readonly': False, 'opts': 'noatime, ro', 'state': 'absent'}]
    assert fabrics.mount_plan(mounts, result) == [
        {'path': '/srv/models', 'subnqn': SUB, 'nsid': 1, 'fstype': 'xfs', 'state': 'mounted', 'device': '/dev/nvme1n1',
         'opts': '_netdev,nofail,ro,x-systemd.requires=inferops-nvmf-connect@a.service,'
                 'x-systemd.requires=inferops-nvmf-connect@b.service'},
        {'path': '/srv/scratch', 'subnqn': SUB, 'nsid': 2, 'fstype': 'xfs', 'state': 'absent', 'device': None,
         'opts': '_netdev,nofail,x-systemd.requires=inferops-nvmf-connect@a.service,'
                 'x-systemd.requires=inferops-nvmf-connect@b.service,noatime,ro'}]


def test_mount_waits_for_its_device_as_long_as_the_boot_units_try():
    """compute1 after a reboot of both guests (nvmeof_pool verify): the target exported the pool about
    two minutes after compute1 began waiting for the device, past systemd's default of 90 s."""
    result = [{'subnqn': SUB, 'state': 'present', 'unit': 'u.service', 'devices': []}]
    plan = fabrics.mount_plan([{'path': '/srv/models', 'subnqn': SUB}], result, boot_timeout=600)
    assert plan[0]['opts'] == '_netdev,nofail,ro,x-systemd.requires=u.service,x-systemd.device-timeout=1200s'
    # no boot unit (persistent connections not made yet): nothing to wait for
    assert 'device-timeout' not in fabrics.mount_plan([{'path': '/m', 'subnqn': SUB}], [], boot_timeout=600)[0]['opts']


def test_mounts_are_checked_against_the_filesystems_read_and_made_by_uuid():
    """mount_filesystems on a plan as mount_plan makes it and devices as blockdev_info reads them."""
    def planned(path, device, fstype='xfs', state='mounted', nsid=1):
        return {'path': path, 'subnqn': SUB, 'nsid': nsid, 'fstype': fstype, 'state': state, 'device': device,
                'opts': '_netdev,nofail,ro'}

    def read(device, fstype=None, uuid=None, problem=None):
        return {'path': device, 'device': device, 'fstype': fstype, 'uuid': uuid, 'problem': problem}

    uuid = '30e939a0-d46d-4438-ac46-814cc3415c0c'
    plan = [planned('/srv/models', '/dev/nvme1n1'), planned('/srv/gone', None), planned('/srv/old', '/dev/nvme1n3', state='absent')]
    assert fabrics.mount_filesystems(plan, [read('/dev/nvme1n1', 'xfs', uuid)]) == {
        'errors': [], 'mounts': [{'path': '/srv/models', 'src': 'UUID=' + uuid, 'opts': '_netdev,nofail,ro'}]}
    plan = [planned('/srv/a', '/dev/nvme1n1'), planned('/srv/b', '/dev/nvme1n2', nsid=2), planned('/srv/c', '/dev/nvme1n3', nsid=3),
            planned('/srv/d', '/dev/nvme1n4', nsid=4), planned('/srv/e', '/dev/nvme1n5', nsid=5)]
    found = fabrics.mount_filesystems(plan, [
        read('/dev/nvme1n1', 'ext4', 'x'), read('/dev/nvme1n2'), read('/dev/nvme1n3', 'xfs'),
        read('/dev/nvme1n4', problem='blkid -p -o export /dev/nvme1n4 failed (rc=4): I/O error')])
    assert found['mounts'] == []
    assert found['errors'] == [
        '/srv/a: /dev/nvme1n1 (namespace 1 of %s) holds "ext4", not xfs; this role never creates filesystems on fabric '
        'namespaces (create it on the target)' % SUB,
        '/srv/b: /dev/nvme1n2 (namespace 2 of %s) holds "no filesystem", not xfs; this role never creates filesystems '
        'on fabric namespaces (create it on the target)' % SUB,
        '/srv/c: /dev/nvme1n3 (namespace 3 of %s) holds xfs without a filesystem UUID; fstab names fabric filesystems '
        'by UUID (set one on the target: xfs_admin -U generate)' % SUB,
        '/srv/d: /dev/nvme1n4 (namespace 4 of %s) could not be read: blkid -p -o export /dev/nvme1n4 failed (rc=4): '
        'I/O error' % SUB,
        '/srv/e: /dev/nvme1n5 (namespace 5 of %s) could not be read: not read' % SUB]
