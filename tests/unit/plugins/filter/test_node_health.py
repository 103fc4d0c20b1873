# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check's plan (module_utils/health/node_health.py): the role's variables, and the configuration its
checker reads - from what audit_host really resolves for the lab inventory's hosts (the action plugin over the
roles' defaults and vars, as in test_audit_actions), not from hand-written values.

* The reads are those of playbooks/tasks/audit_host.yml: same modules, same arguments (the md_info request of
  the md_raid_xfs role, the irq_pin rules in list_only, triton_compose's endpoints and definition).
* The Kubernetes label gate is there on a worker only, with k8s_node_labels' file and prefix.
* residency_ratio measures real files on this machine (mincore/cachestat, as page_cache does).
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins.action import audit_host
from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue
from ansible_collections.inferops.node.plugins.module_utils.health import node_health
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose
from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import StatusWriter
from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import WarmupProgress
from ansible_collections.inferops.node.tests.unit.plugins.action.test_audit_actions import action, lab_vars

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'node_health', 'defaults', 'main.yml')))


def expected(**task_vars):
    return action(audit_host, 'audit_host', {'reads': {}}).expected(lab_vars(**task_vars))


def settings(**more):
    out = dict(DEFAULTS)
    out.update(more)
    return out


def test_the_role_defaults_are_valid():
    assert node_health.errors(DEFAULTS) == []
    # As -e gives them (strings): accepted as the role's argument spec accepts them.
    assert node_health.errors(settings(node_health_interval_minutes='10', node_health_sysstat='false')) == []


@pytest.mark.parametrize('name, value, words', [
    ('node_health_interval_minutes', 0, 'node_health_interval_minutes = 0: must be a whole number of minutes from 1 to 60'),
    ('node_health_interval_minutes', True, 'node_health_interval_minutes = True: must be a whole number'),
    ('node_health_interval_minutes', '5 min', "node_health_interval_minutes = '5 min': must be a whole number"),
    ('node_health_sysstat_interval_minutes', 15, 'node_health_sysstat_interval_minutes = 15: must be a whole number of '
                                                 'minutes from 1 to 10'),
    ('node_health_node_exporter', 'docker', "node_health_node_exporter = 'docker': must be one of install, existing"),
    ('node_health_textfile_dir', 'textfiles', "node_health_textfile_dir = 'textfiles': must be an absolute directory"),
    ('node_health_textfile_dir', '/', "node_health_textfile_dir = '/': must be an absolute directory"),
    ('node_health_node_exporter_args', '--collector.systemd', "node_health_node_exporter_args = '--collector.systemd': "
                                                              "must be a list of node_exporter flags"),
    ('node_health_node_exporter_args', ['--collector.textfile.directory=/srv'],
     'node_health_node_exporter_args: --collector.textfile.directory is set by node_health_textfile_dir'),
    ('node_health_sysstat', 'sometimes', "node_health_sysstat = 'sometimes': must be true or false"),
])
def test_a_bad_variable_is_named_with_its_value_and_the_fix(name, value, words):
    problems = node_health.errors(settings(**{name: value}))
    assert len(problems) == 1 and problems[0].startswith(words), problems


# The units the audit's md_info read asks about (playbooks/tasks/audit_host.yml).
AUDIT_MD_UNITS = [t for t in yaml.safe_load(open(os.path.join(ROOT, 'playbooks', 'tasks', 'audit_host.yml')))
                  if 'inferops.node.md_info' in t][0]['inferops.node.md_info']['units']


def test_a_local_nvme_node_reads_what_the_audit_reads_there():
    wanted = expected()
    reads = node_health.read_arguments(wanted)
    # Not in the serving group: no Triton reads (the audit skips them: "not in the serving group").
    assert sorted(reads) == ['irq_info', 'irq_pin', 'md_info', 'nvme_health_info', 'nvme_info', 'platform_info',
                             'storage_benchmark_info', 'sysctl_info']
    # md_info: the md_raid_xfs role's request of the lab's arrays, as audit_host.yml's md_raid_want
    assert reads['md_info'] == {
        'arrays': [a['info'] for a in md_raid_plan.want({'md_raid_xfs_arrays': lab_vars()['md_raid_xfs_arrays']})],
        'units': AUDIT_MD_UNITS, 'mdadm_conf': '/etc/mdadm/mdadm.conf'}
    assert [a['name'] for a in reads['md_info']['arrays']] == [a['name'] for a in lab_vars()['md_raid_xfs_arrays']]
    assert reads['irq_pin'] == {'rules': [irq.normalize_rule(r) for r in lab_vars()['irq_affinity_rules']],
                                'list_only': True}
    # storage_benchmark's default results directory, resolved like the checks' variables
    assert reads['storage_benchmark_info'] == {'path': '/var/lib/inferops/benchmarks'}
    config = node_health.config(wanted, settings())
    assert config['repository'] is None and config['labels'] is None and config['expected'] is wanted
    assert config['textfile'] == '/var/lib/prometheus/node-exporter/inferops_health.prom'


def test_every_read_is_one_the_audit_makes():
    """The checker reads nothing the audit does not, and the audit's playbook names every module it reads."""
    wanted = expected(group_names=['local_nvme', 'serving', 'k8s_workers'])
    reads = node_health.read_arguments(wanted)
    assert set(reads) == set(audit_catalogue.INFO_MODULES)
    with open(os.path.join(ROOT, 'playbooks', 'tasks', 'audit_host.yml')) as handle:
        tasks = yaml.safe_load(handle)
    evaluated = [t for t in tasks if 'inferops.node.audit_host' in t][0]['inferops.node.audit_host']['reads']
    assert set(evaluated) == set(reads)


def test_a_serving_worker_reads_its_servers_and_gates_its_label():
    wanted = expected(group_names=['serving', 'k8s_workers'])
    plan = triton_compose.plan(wanted['triton_compose_params'])
    reads = node_health.read_arguments(wanted)
    assert reads['triton_info'] == {'endpoints': plan['endpoints']} and plan['endpoints']
    assert reads['compose_project_info'] == {'project_name': 'inferops-triton', 'definition': plan['definition']}
    config = node_health.config(wanted, settings(node_health_state_dir='/var/lib/inferops/node-health/'))
    assert config['repository'] == wanted['triton_compose_params']['triton_compose_model_repository']
    assert config['labels'] == {
        'file': '/etc/kubernetes/node-feature-discovery/features.d/inferops-node',
        'label': 'inferops.feature.node.kubernetes.io/triton-ready',
        'held': '/var/lib/inferops/node-health/held-label.json'}
    # The inventory's prefix, as k8s_node_labels uses it; the switches turn both off.
    assert node_health.config(expected(group_names=['serving', 'k8s_workers'], k8s_node_labels_prefix='ops.example.com'),
                              settings())['labels']['label'] == 'ops.example.com/triton-ready'
    off = node_health.config(wanted, settings(node_health_k8s_label_gate='false', node_health_page_cache=False))
    assert off['labels'] is None and off['repository'] is None
    # The warm-up's traffic status file, the warmup role's default as the audit resolves it; none off serving.
    assert config['warmup_status'] == '/run/inferops-warmup-traffic.json'
    assert node_health.config(expected(), settings())['warmup_status'] is None


def test_warmup_success_from_the_status_file_triton_warmup_writes(tmp_path):
    # Written by the module's own writer and progress (status_file.StatusWriter, triton_v2.WarmupProgress), as
    # triton_warmup writes /run/inferops-warmup-traffic.json.
    path = str(tmp_path / 'traffic.json')
    assert node_health.warmup_success(path) is None and node_health.warmup_success(None) is None
    writer = StatusWriter(path, WarmupProgress(2), interval=60, extra={'warmup': True})
    writer.start()
    assert node_health.warmup_success(path) is None  # running
    writer.stop(state='done')
    with open(path) as handle:
        written = json.load(handle)
    assert written['state'] == 'done'
    assert node_health.warmup_success(path) == written['updated_epoch']
    writer = StatusWriter(path, WarmupProgress(2), interval=60)
    writer.start()
    writer.stop(state='failed')
    assert node_health.warmup_success(path) is None
    (tmp_path / 'traffic.json').write_text('not json')
    assert node_health.warmup_success(path) is None


def test_a_serving_node_that_deploys_nothing_reads_no_server():
    reads = node_health.read_arguments(expected(group_names=['serving'], triton_compose_deploy='never'))
    assert 'triton_info' not in reads and 'compose_project_info' not in reads


def test_residency_of_files_read_and_of_nothing(tmp_path):
    (tmp_path / 'model.onnx').write_bytes(os.urandom(256 * 1024))
    (tmp_path / 'config.pbtxt').write_text('name: "identity"\n')
    for path in tmp_path.iterdir():
        path.read_bytes()
    assert node_health.residency_ratio(str(tmp_path)) == 1.0
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert node_health.residency_ratio(str(empty)) is None
