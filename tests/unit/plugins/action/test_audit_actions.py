# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's action plugins: audit_host resolves the roles' variables as a play running the role would
(role defaults < inventory < role vars) and evaluates the catalogue on the recorded reads; audit_report
writes one schema-valid report, names an unreachable host, prints the summary and fails on a FAIL."""

from __future__ import annotations

import json
import os
from unittest.mock import MagicMock

import jsonschema
import pytest
import yaml

from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.task import Task
try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core < 2.19: every string in the variables is a template already
    def trust_as_template(value):
        return value
from ansible_collections.inferops.node.plugins.action import audit_host, audit_report
from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue
from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose
from ansible_collections.inferops.node.tests.unit.module_harness import fixture
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_catalogue import LAB, reads
# The recorded reads, a module-scoped pytest fixture, used here by name.
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_catalogue import recorded  # noqa: F401 pylint: disable=unused-import
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_fabric import SUB
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_fabric import fabric_reads  # noqa: F401 pylint: disable=unused-import


def action(module, name, args, check_mode=False):
    task = Task()
    task.args = args
    task.action = 'inferops.node.' + name
    task.check_mode = check_mode
    return module.ActionModule(task, MagicMock(), MagicMock(), loader=DataLoader(), templar=None, shared_loader_obj=None)


def lab_vars(**more):
    """node1's variables as the lab inventory gives them (inventories/lab/group_vars/local_nvme.yml)."""
    task_vars = dict(LAB, inventory_hostname='node1', group_names=['local_nvme'])
    task_vars.update(more)
    return task_vars


def test_expected_is_what_the_roles_use(recorded):
    plugin = action(audit_host, 'audit_host', {'reads': {}})
    expected = plugin.expected(lab_vars(kernel_tuning_sysctl_host={'vm.swappiness': 5}, audit_numa_nodes=1))
    # kernel_tuning's layers from its vars/main.yml, the profile chosen from the inventory, host layer on top.
    layers = dict((layer['name'], layer['settings']) for layer in expected['kernel_tuning_layers'])
    assert layers['kernel_tuning_profile=local_nvme']['vm.swappiness'] == 1
    assert layers['kernel_tuning_sysctl_host'] == {'vm.swappiness': 5}
    # Role defaults where the inventory says nothing, the inventory where it does.
    assert expected['kernel_tuning_thp'] is None and expected['md_raid_xfs_fstrim_timer'] is True
    assert expected['nvme_sched_read_ahead_kb'] == 2048 and expected['md_raid_xfs_arrays'] == LAB['md_raid_xfs_arrays']
    assert expected['md_raid_xfs_mount_opts'] == 'noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k'
    assert expected['nvmeof_initiator_connections'] == [] and expected['audit_numa_nodes'] == 1
    # The role default of the profile depends on the host's groups.
    other = plugin.expected(dict(inventory_hostname='x', group_names=['serving']))
    assert [layer['name'] for layer in other['kernel_tuning_layers']][0] == 'kernel_tuning_profile=none'


def test_expected_has_the_groups_and_the_initiator_variables(fabric_reads):
    """The host's groups decide which site role's checks judge it; the read-ahead is the role's default
    (8192 sectors) where the inventory sets none - compute1 of the nvmeof_pool lab, on a recorded read."""
    connections = [{'transport': 'tcp', 'traddr': '10.77.0.10', 'subnqn': SUB}]
    task_vars = {'inventory_hostname': 'compute1', 'group_names': ['nvmeof_initiators', 'k8s_workers'],
                 'nvmeof_initiator_connections': connections}
    plugin = action(audit_host, 'audit_host', {'reads': {'nvme_info': fabric_reads['tcp_live']}})
    expected = plugin.expected(task_vars)
    assert expected['group_names'] == ['k8s_workers', 'nvmeof_initiators']
    assert expected['nvmeof_initiator_connections'] == connections and expected['nvmeof_initiator_read_ahead_sectors'] == 8192
    found = dict((r['id'], r['status']) for r in plugin.run(task_vars=task_vars)['results'] if r['id'].startswith('fabric.'))
    assert found == {'fabric.connections': 'PASS', 'fabric.read_ahead': 'PASS'}
    # The same read on a host of another group: the initiator role does not run there.
    other = plugin.run(task_vars=dict(task_vars, group_names=['local_nvme']))['results']
    assert set(r['status'] for r in other if r['id'].startswith('fabric.')) == {'SKIP'}


@pytest.mark.parametrize('more, profile', [
    ({}, 'nvmeof'),
    # The role passes its own profile whatever the inventory's kernel_tuning_profile says.
    ({'kernel_tuning_profile': 'local_nvme'}, 'nvmeof'),
    ({'nvmeof_initiator_kernel_tuning_profile': 'local_nvme'}, 'local_nvme'),
    # Its switch off (given with -e as a string): the role leaves the kernel alone, the inventory decides.
    ({'nvmeof_initiator_kernel_tuning': 'false'}, 'none'),
])
def test_an_initiator_is_judged_against_the_profile_its_role_applies(more, profile):
    task_vars = dict({'inventory_hostname': 'compute1', 'group_names': ['nvmeof_initiators', 'k8s_workers']}, **more)
    expected = action(audit_host, 'audit_host', {'reads': {}}).expected(task_vars)
    assert expected['kernel_tuning_layers'][0]['name'] == 'kernel_tuning_profile=' + profile


def test_expected_serving_is_the_triton_compose_plan_input():
    """serving.* compare with the endpoints triton_compose's own plan gives for the host (role defaults, the
    inventory, the role's vars): the seed site's two instances."""
    with open(os.path.join(os.path.dirname(audit_host.__file__), '..', '..', 'inventories', 'hk_local_raid0', 'group_vars',
                           'serving.yml')) as handle:
        site = yaml.safe_load(handle)
    plugin = action(audit_host, 'audit_host', {'reads': {}})
    expected = plugin.expected(dict(site, inventory_hostname='hk-inf-01', group_names=['local_nvme', 'serving']))
    plan = triton_compose.plan(expected['triton_compose_params'])
    assert plan['errors'] == [] and plan['endpoints'] == ['http://127.0.0.1:8000', 'http://127.0.0.1:8100']
    assert expected['triton_compose_params']['triton_compose_model_repository'] == '/data/models'
    assert expected['triton_compose_deploy'] == 'always'
    assert expected['model_sync_models'] == [] and expected['model_sync_destination'] == '/data/models'


def test_audit_host_on_recorded_reads(recorded):
    plugin = action(audit_host, 'audit_host', {'reads': reads(recorded)})
    result = plugin.run(task_vars=lab_vars())
    assert result['changed'] is False and len(result['drives']) == 6 and result['failed_reads'] == {}
    by_id = dict(((r['id'], r['subject']), r['status']) for r in result['results'])
    assert by_id[('kernel.sysctl', 'vm.swappiness')] == 'FAIL' and by_id[('storage.md_present', '/dev/md/models')] == 'PASS'


def test_audit_host_names_the_failed_reads(recorded):
    """Every read that failed, whichever it is (the gates of audit_verify.yml and the rollout read this)."""
    failed = {'failed': True, 'msg': 'irq_info: /proc/interrupts: Permission denied'}
    skipped = {'skipped': True, 'changed': False}
    plugin = action(audit_host, 'audit_host', {'reads': reads(recorded, irq_info=failed, irq_pin=skipped)})
    result = plugin.run(task_vars=lab_vars())
    assert result['failed_reads'] == {'irq_info': failed}
    # The checks that read irq_info could not be evaluated; irq.pins reads irq_pin, which did not run.
    irq_statuses = dict((r['id'], r['status']) for r in result['results'] if r['id'].startswith('irq.'))
    assert irq_statuses.pop('irq.pins') == 'SKIP' and set(irq_statuses.values()) == {'NOT_CHECKED'}


def test_audit_host_refuses_unknown_reads():
    plugin = action(audit_host, 'audit_host', {'reads': {'nic_inf0': {}}})
    with pytest.raises(Exception, match='reads: unknown info module'):
        plugin.run(task_vars=lab_vars())


def report_action(tmp_path, monkeypatch, hostvars, **args):
    lines = []
    monkeypatch.setattr(audit_report.display, 'display', lines.append)
    plugin = action(audit_report, 'audit_report', dict({'hosts': sorted(hostvars), 'dest_dir': str(tmp_path)}, **args),
                    check_mode=True)
    task_vars = {'hostvars': hostvars, 'groups': {'all': sorted(hostvars), 'local_nvme': sorted(hostvars)}}
    return plugin.run(task_vars=task_vars), lines


def test_report_written_then_failed(recorded, tmp_path, monkeypatch):
    host = action(audit_host, 'audit_host', {'reads': reads(recorded)}).run(task_vars=lab_vars())
    hostvars = {'node1': {'__audit_host': host, 'group_names': ['local_nvme']},
                'node2': {'group_names': ['local_nvme']}}
    result, lines = report_action(tmp_path, monkeypatch, hostvars)
    assert result['failed'] and result['schema_checked'] is True
    assert os.listdir(str(tmp_path)) == [os.path.basename(result['report_path'])]
    with open(result['report_path']) as handle:
        report = json.load(handle)
    with open(audit_report.SCHEMA) as handle:
        jsonschema.validate(report, json.load(handle))
    assert report['meta']['check_mode'] is True and report['meta']['play_hosts'] == ['node1', 'node2']
    node2 = [e for e in report['hosts'] if e['host'] == 'node2'][0]
    assert node2['reachable'] is False and node2['results'][0]['id'] == 'audit.reachable'
    # node1's storage benchmark runs (storage_benchmark_info on the recorded records), side by side; node2 unread.
    node1 = [e for e in report['hosts'] if e['host'] == 'node1'][0]
    assert node1['benchmarks'] == host['benchmarks'] and host['benchmarks']['status'] == 'compared'
    assert (host['benchmarks']['before']['label'], host['benchmarks']['latest']['label']) == ('before-tuning', 'after-tuning')
    assert node2['benchmarks']['status'] == 'unread'
    assert lines[0].startswith('node audit: FAIL - 2 host(s), 2 failed; ') and lines[-1].startswith('node audit report: ')
    assert result['msg'].endswith('(report %s)' % result['report_path'])
    assert any(line.startswith('FAIL node1 kernel.sysctl [vm.swappiness]: ') for line in lines)


def test_allowed_statuses_for_tests(recorded, tmp_path, monkeypatch):
    host = action(audit_host, 'audit_host', {'reads': reads(recorded)}).run(task_vars=lab_vars())
    hostvars = {'node1': {'__audit_host': host, 'group_names': ['local_nvme']}}
    result, dummy = report_action(tmp_path, monkeypatch, hostvars, fail_on_fail=False,
                                  allowed={'storage.md_health': ['PASS', 'WARN']})
    assert not result.get('failed')
    # Critical first (the index not mounted), then the major ones in catalogue order: the local sysctl override,
    # and the recorded arrays (made by hand with mdadm --create) without their ARRAY lines.
    assert result['unexpected'] == [
        'node1: storage.mount [/data/index] FAIL: /dev/md/index is not mounted at /data/index',
        "node1: kernel.sysctl [net.ipv4.tcp_fin_timeout] FAIL: net.ipv4.tcp_fin_timeout = 15 wanted "
        "(kernel_tuning_profile=local_nvme['net.ipv4.tcp_fin_timeout']): runtime 30; "
        "/etc/sysctl.d/99-zz-local.conf line 3 sets 30 (a reboot gives that)",
        "node1: kernel.sysctl [vm.swappiness] FAIL: vm.swappiness = 1 wanted "
        "(kernel_tuning_profile=local_nvme['vm.swappiness']): runtime 10; "
        "/etc/sysctl.d/99-zz-local.conf line 2 sets 10 (a reboot gives that)",
    ] + ['node1: storage.md_conf [/dev/md/%s] FAIL: no ARRAY line for UUID %s in /etc/mdadm/mdadm.conf: the next boot '
         'may assemble the array under another name (md127) and its mount fail'
         % (name, recorded['md_info']['arrays'][name]['uuid']) for name in ('models', 'index')]


def test_a_variable_that_cannot_be_templated_is_unknown(recorded, monkeypatch):
    """An inventory value that does not template (here an undefined variable) makes its checks SKIP."""
    warnings = []
    monkeypatch.setattr(audit_host.display, 'warning', warnings.append)
    plugin = action(audit_host, 'audit_host', {'reads': reads(recorded)})
    # Trusted as a template, as a value from an inventory file is.
    task_vars = lab_vars(kernel_tuning_sysctl_host=trust_as_template('{{ no_such_variable }}'))
    expected = plugin.expected(task_vars)
    assert expected['kernel_tuning_layers'] is None and expected['nvme_sched_scheduler'] == 'none'
    assert len(warnings) == 1 and 'kernel_tuning_layers (__kernel_tuning_layers of role kernel_tuning)' in warnings[0]
    result = plugin.run(task_vars=task_vars)
    sysctl_results = [r for r in result['results'] if r['id'] == 'kernel.sysctl']
    assert [r['status'] for r in sysctl_results] == ['SKIP']


def test_outputs_and_diff_against_the_previous_report(recorded, tmp_path, monkeypatch):
    """The HTML page, JUnit XML and a textfile per host next to the JSON report; the diff against the newest
    report of the directory (here the one the audit wrote on a fresh lab guest) printed and kept in the report."""
    (tmp_path / 'audit-20261202T030858Z.json').write_text(fixture('audit', 'report_fresh_guest_check.json'))
    host = action(audit_host, 'audit_host', {'reads': reads(recorded)}).run(task_vars=lab_vars())
    hostvars = {'node1': {'__audit_host': host, 'group_names': ['local_nvme']},
                'node2': {'group_names': ['local_nvme']}}
    out = tmp_path / 'out'
    result, lines = report_action(tmp_path, monkeypatch, hostvars, fail_on_fail=False, html_path=str(out / 'audit.html'),
                                  junit_path=str(out / 'junit.xml'), prom_dir=str(out / 'textfile'))
    assert result['files'] == {'json': result['report_path'], 'html': str(out / 'audit.html'),
                               'junit': str(out / 'junit.xml'),
                               'prom': {'node1': str(out / 'textfile' / 'node1.prom'),
                                        'node2': str(out / 'textfile' / 'node2.prom')}}
    for path in [result['report_path'], str(out / 'audit.html'), str(out / 'junit.xml')] + list(result['files']['prom'].values()):
        assert os.path.getsize(path) > 0
    with open(result['report_path']) as handle:
        report = json.load(handle)
    assert report['diff']['previous'] == 'audit-20261202T030858Z.json' and report['diff'] == result['audit_diff']
    assert report['diff']['hosts_added'] == ['node2']
    fixed = [(e['id'], e['subject']) for e in report['diff']['fixed']]
    assert ('storage.md_present', '/dev/md/models') in fixed and ('kernel.sysctl', 'vm.swappiness') not in fixed
    assert result['diff_lines'][0] == 'since audit-20261202T030858Z.json: %d broke, %d fixed; new host(s): node2' % (
        len(report['diff']['broke']), len(report['diff']['fixed']))
    assert result['diff_lines'][0] in lines and 'node audit junit: %s' % (out / 'junit.xml') in lines
    with open(result['files']['prom']['node2']) as handle:
        assert 'inferops_audit_reachable 0\n' in handle.read()
    # No temporary file left behind by the atomic writes.
    assert sorted(os.listdir(str(out))) == ['audit.html', 'junit.xml', 'textfile']


def test_no_previous_report_no_diff(recorded, tmp_path, monkeypatch):
    host = action(audit_host, 'audit_host', {'reads': reads(recorded)}).run(task_vars=lab_vars())
    (tmp_path / 'audit-20200101T000000Z.json').write_text('{"schema_version": 0}')
    result, lines = report_action(tmp_path, monkeypatch, {'node1': {'__audit_host': host}}, fail_on_fail=False)
    assert result['audit_diff'] is None and result['files']['html'] is None and result['files']['prom'] == {}
    assert result['diff_lines'] == ['previous report %s is not schema version 1: no diff'
                                    % (tmp_path / 'audit-20200101T000000Z.json')]
    result, lines = report_action(tmp_path, monkeypatch, {'node1': {'__audit_host': host}}, fail_on_fail=False, compare=False)
    assert result['audit_diff'] is None and result['diff_lines'] == []


def test_a_checked_variable_no_role_declares_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(audit_catalogue, 'VARIABLES', audit_catalogue.VARIABLES + ('md_raid_xfs_no_such_thing',))
    plugin = action(audit_host, 'audit_host', {'reads': {}})
    with pytest.raises(AnsibleError, match='md_raid_xfs_no_such_thing is declared by no role'):
        plugin.expected(dict(inventory_hostname='x', group_names=['local_nvme']))
