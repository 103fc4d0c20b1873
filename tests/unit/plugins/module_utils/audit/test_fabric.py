# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric checks (audit/fabric.py) on nvme_info run on the NVMe-oF initiator compute1 of the nvmeof_pool
lab (tests/unit/fixtures/nvme/nvmeof, its README.md): the pool nqn.2026-09.internal.ai:lab-pool of target1
(10.77.0.10, tcp and rdma on port 4420) connected over tcp and mounted (tcp_live), over rdma alone after the
RDMA converge (rdma_live), over both (two_paths), with the rdma path reconnecting (rdma_connecting), and nothing
connected (empty).

The expected values are the lab inventory's (molecule/nvmeof_pool/molecule.yml, group nvmeof_initiators): the
tcp phase connects over tcp; the rdma phase over rdma and lists the tcp connection as absent. The read-ahead is
the role's default (8192 sectors = 4096 KiB, the NVMe-oF site's 4 MB).
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import tempfile

import jsonschema
import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue, fabric as audit_fabric, storage as audit_storage
from ansible_collections.inferops.node.plugins.modules import nvme_info
from ansible_collections.inferops.node.tests.unit import before_fork
from ansible_collections.inferops.node.tests.unit.module_harness import run_module
from ansible_collections.inferops.node.tests.unit.plugins.modules.test_nvme_connect import SUB, Host

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '..')
SNAPSHOTS = ('tcp_live', 'rdma_live', 'rdma_connecting', 'two_paths', 'empty')
ROLE_DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'nvmeof_initiator', 'defaults', 'main.yml')))

TCP = {'transport': 'tcp', 'traddr': '10.77.0.10', 'subnqn': SUB}
RDMA = {'transport': 'rdma', 'traddr': '10.77.0.10', 'subnqn': SUB}
PHASES = {'tcp': [TCP], 'rdma': [RDMA, dict(TCP, state='absent')]}
TCP_SUBJECT = '%s tcp 10.77.0.10:4420' % SUB
RDMA_SUBJECT = '%s rdma 10.77.0.10:4420' % SUB


@before_fork.shared('fabric_reads')
def record():
    """nvme_info on each recorded tree of compute1."""
    base = before_fork.scratch('fabric_reads')
    out = {}
    for name in SNAPSHOTS:
        with pytest.MonkeyPatch.context() as mp:
            Host(pathlib.Path(tempfile.mkdtemp(prefix=name, dir=base)), mp, 'sysfs_%s.json' % name)
            failed, result = run_module(nvme_info.main, {})
            assert not failed, result
            out[name] = result
    return out


@pytest.fixture
def fabric_reads():
    return before_fork.value('fabric_reads')


def wanted(phase='tcp', **more):
    """compute1's values as audit_host resolves them: the lab inventory over the role's defaults."""
    out = {'group_names': ['k8s_workers', 'nvmeof_initiators'], 'nvmeof_initiator_connections': PHASES[phase],
           'nvmeof_initiator_read_ahead_sectors': ROLE_DEFAULTS['nvmeof_initiator_read_ahead_sectors']}
    out.update(more)
    return out


def results(fabric_reads, snapshot, check_id, expected=None):
    nvme = copy.deepcopy(fabric_reads[snapshot])
    return [r for r in audit_catalogue.evaluate_host({'nvme_info': nvme}, expected or wanted()) if r['id'] == check_id]


def statuses(found):
    return dict((r['subject'], r['status']) for r in found)


def only(found):
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------ fabric.connections

def test_connection_live_passes(fabric_reads):
    ok = only(results(fabric_reads, 'tcp_live', 'fabric.connections'))
    assert (ok['status'], ok['subject'], ok['severity']) == ('PASS', TCP_SUBJECT, 'critical')
    assert ok['expected'] == {'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 4420, 'subnqn': SUB, 'state': 'live'}
    assert ok['observed'] == 'nvme0 tcp 10.77.0.10:4420 live'
    assert ok['evidence'] == '/sys/class/nvme/nvme0/{transport,address,subsysnqn,state}'
    assert ok['fix'] == audit_fabric.FIX_CONNECTIONS


def test_missing_connection_fails(fabric_reads):
    fail = only(results(fabric_reads, 'empty', 'fabric.connections'))
    assert fail['status'] == 'FAIL' and fail['observed'] == 'not connected'
    assert fail['reason'] == 'no controller for tcp 10.77.0.10:4420; the subsystem is not connected'


def test_rdma_phase_after_its_converge_passes(fabric_reads):
    """RDMA converge: the rdma path live, the tcp one (state absent) gone."""
    found = results(fabric_reads, 'rdma_live', 'fabric.connections', wanted('rdma'))
    assert statuses(found) == {RDMA_SUBJECT: 'PASS', TCP_SUBJECT: 'PASS'}
    assert found[1]['observed'] == 'not connected'


def test_wrong_transport_names_what_the_subsystem_has(fabric_reads):
    """The inventory moved to rdma, the host still runs the tcp path: rdma missing, tcp not removed."""
    found = results(fabric_reads, 'tcp_live', 'fabric.connections', wanted('rdma'))
    assert statuses(found) == {RDMA_SUBJECT: 'FAIL', TCP_SUBJECT: 'FAIL'}
    assert found[0]['reason'] == ('no controller for rdma 10.77.0.10:4420; the subsystem has: '
                                  'nvme0 tcp 10.77.0.10:4420 live')
    assert found[1]['reason'] == 'still connected: nvme0 tcp 10.77.0.10:4420 live'


def test_wrong_port_fails(fabric_reads):
    fail = only(results(fabric_reads, 'tcp_live', 'fabric.connections', wanted(
        nvmeof_initiator_connections=[dict(TCP, trsvcid=4421)])))
    assert fail['status'] == 'FAIL' and fail['subject'] == '%s tcp 10.77.0.10:4421' % SUB
    assert fail['observed'] == ['nvme0 tcp 10.77.0.10:4420 live']


def test_reconnecting_controller_is_not_live(fabric_reads):
    """target1's rdma port taken down: the kernel keeps the controller, connecting."""
    found = results(fabric_reads, 'rdma_connecting', 'fabric.connections', wanted(nvmeof_initiator_connections=[TCP, RDMA]))
    assert statuses(found) == {TCP_SUBJECT: 'PASS', RDMA_SUBJECT: 'FAIL'}
    assert found[1]['reason'] == ('nvme1 rdma 10.77.0.10:4420 connecting, not live: the kernel keeps reconnecting '
                                  '(reconnect_delay 2 s, gives up after ctrl_loss_tmo 120 s)')


def test_connection_the_role_refuses_fails_without_its_secret(fabric_reads):
    bad = dict(TCP, traddr='10.77.0.300')
    secret = dict(TCP, auth='dhchap', dhchap_secret='DHHC-1:00:not-a-secret:')
    found = results(fabric_reads, 'tcp_live', 'fabric.connections', wanted(nvmeof_initiator_connections=[bad, secret]))
    assert [r['status'] for r in found] == ['FAIL', 'FAIL']
    assert found[0]['subject'] == 'nvmeof_initiator_connections[0]'
    assert found[0]['reason'].startswith('nvmeof_initiator_connections[0].traddr = "10.77.0.300": ')
    assert found[0]['reason'].endswith(' (the preflight refuses it)')
    assert 'not-a-secret' not in json.dumps(found)


# ------------------------------------------------------------------ fabric.read_ahead

def test_read_ahead_set_passes(fabric_reads):
    found = results(fabric_reads, 'tcp_live', 'fabric.read_ahead')
    assert statuses(found) == {'%s nsid 1 (nvme0n1)' % SUB: 'PASS', '%s nsid 2 (nvme0n2)' % SUB: 'PASS'}
    assert [r['observed'] for r in found] == [4096, 4096]
    assert found[0]['expected'] == '>= 4096 KiB (nvmeof_initiator_read_ahead_sectors 8192)'
    assert found[0]['evidence'] == '/sys/block/nvme0n1/queue/read_ahead_kb' and found[0]['reason'] is None


def test_wrong_read_ahead_fails(fabric_reads):
    """Recorded after the RDMA converge: the kernel's 128 KiB on the mounted namespace, 4096 on the other."""
    found = results(fabric_reads, 'rdma_live', 'fabric.read_ahead', wanted('rdma'))
    assert statuses(found) == {'%s nsid 1 (nvme0n1)' % SUB: 'FAIL', '%s nsid 2 (nvme0n2)' % SUB: 'PASS'}
    assert found[0]['reason'] == 'nvme0n1 read-ahead 128 KiB, the role sets 4096 KiB'
    assert found[0]['severity'] == 'major'


def test_two_paths_one_result_per_namespace(fabric_reads):
    """Both paths of the subsystem (connected by hand in the recording, the kernel's 128 KiB): each multipath
    head once, not once per connection."""
    expected = wanted(nvmeof_initiator_connections=[TCP, RDMA])
    assert set(statuses(results(fabric_reads, 'two_paths', 'fabric.connections', expected)).values()) == {'PASS'}
    found = results(fabric_reads, 'two_paths', 'fabric.read_ahead', expected)
    assert [(r['subject'], r['status'], r['observed']) for r in found] == [
        ('%s nsid 1 (nvme0n1)' % SUB, 'FAIL', 128), ('%s nsid 2 (nvme0n2)' % SUB, 'FAIL', 128)]


def test_larger_read_ahead_is_kept(fabric_reads):
    found = results(fabric_reads, 'tcp_live', 'fabric.read_ahead', wanted(nvmeof_initiator_read_ahead_sectors=4096))
    assert set(statuses(found).values()) == {'PASS'} and found[0]['reason'] == 'larger value kept, as the role does'


def test_read_ahead_without_a_connection_is_skip(fabric_reads):
    skip = only(results(fabric_reads, 'empty', 'fabric.read_ahead'))
    assert (skip['status'], skip['subject']) == ('SKIP', TCP_SUBJECT)
    assert skip['reason'] == 'no namespace of this connection (fabric.connections)'
    null = only(results(fabric_reads, 'tcp_live', 'fabric.read_ahead', wanted(nvmeof_initiator_read_ahead_sectors=None)))
    assert null['reason'] == 'nvmeof_initiator_read_ahead_sectors is null: the role leaves the read-ahead alone'


# ------------------------------------------------------------------ who gets them

@pytest.mark.parametrize('check_id', ['fabric.connections', 'fabric.read_ahead'])
def test_not_an_initiator_is_skip(fabric_reads, check_id):
    """A local_nvme host has the role's defaults too; its missing connections are no failure."""
    skip = only(results(fabric_reads, 'empty', check_id, wanted(group_names=['local_nvme'])))
    assert skip['status'] == 'SKIP'
    assert skip['reason'] == 'not in the nvmeof_initiators group: the nvmeof_initiator role does not run on this host'
    unknown = only(results(fabric_reads, 'empty', check_id, wanted(group_names=None)))
    assert unknown['reason'].startswith("the host's groups (group_names) are unknown")
    empty = only(results(fabric_reads, 'empty', check_id, wanted(nvmeof_initiator_connections=[])))
    assert empty['reason'] == 'nvmeof_initiator_connections is empty'


def test_initiator_namespaces_are_not_nvme_sched_drift(fabric_reads):
    """compute1's namespaces at the initiator role's 4096 KiB: nvme_sched (whose defaults, none and 2048 KiB,
    every host has) does not run on an initiator, so storage.nvme_queue does not judge them - on a local_nvme host
    the same read would FAIL."""
    defaults = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'nvme_sched', 'defaults', 'main.yml')))
    nvme_sched = dict((name, defaults[name]) for name in audit_storage.SCHED_VARIABLES)
    skip = only(results(fabric_reads, 'tcp_live', 'storage.nvme_queue', wanted(**nvme_sched)))
    assert skip['status'] == 'SKIP'
    assert skip['reason'] == 'not in the local_nvme group: the nvme_sched role does not run on this host'
    local = results(fabric_reads, 'tcp_live', 'storage.nvme_queue', wanted(group_names=['local_nvme'], **nvme_sched))
    assert [(r['status'], r['observed']['read_ahead_kb']) for r in local] == [('FAIL', 4096), ('FAIL', 4096)]


def test_failed_read_is_skip(fabric_reads):
    found = audit_catalogue.evaluate_host({'nvme_info': {'failed': True, 'msg': '/sys/class/nvme: Permission denied'}},
                                          wanted())
    fabric = [r for r in found if r['id'].startswith('fabric.')]
    assert [r['reason'] for r in fabric] == ['nvme_info failed: /sys/class/nvme: Permission denied'] * 2


def test_report_with_fabric_results_is_valid(fabric_reads):
    hosts = {}
    for host, snapshot in (('compute1', 'rdma_live'), ('compute2', 'tcp_live')):
        hosts[host] = {'results': audit_catalogue.evaluate_host({'nvme_info': fabric_reads[snapshot]}, wanted('rdma')),
                       'groups': ['nvmeof_initiators']}
    report = audit_catalogue.build_report(hosts, {'nvmeof_initiators': sorted(hosts)})
    with open(os.path.join(ROOT, 'schemas', 'audit_report.schema.json')) as handle:
        jsonschema.validate(json.loads(json.dumps(report)), json.load(handle))
    lines = audit_catalogue.summary_lines(report)
    assert 'FAIL compute2 fabric.connections [%s]: no controller for rdma 10.77.0.10:4420; the subsystem has: ' \
           'nvme0 tcp 10.77.0.10:4420 live (fix: %s)' % (RDMA_SUBJECT, audit_fabric.FIX_CONNECTIONS) in lines
