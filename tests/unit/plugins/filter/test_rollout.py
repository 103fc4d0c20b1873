# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters rollout_plan / rollout_record (playbooks/rollout.yml's controller side)."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.rollout import FilterModule
from ansible_collections.inferops.node.plugins.module_utils.fleet.rollout import LABELS_GROUP

VALUES = {'inferops_rollout_group': 'lab', 'inferops_rollout_state_file': '/tmp/s.json',
          'inferops_rollout_waves': [1, '100%'], 'inferops_rollout_max_wave': 1,
          'inferops_rollout_domain_var': 'rack'}


@pytest.fixture
def filters():
    return FilterModule().filters()


def test_plan_reads_domains_from_hostvars(filters):
    hostvars = {'a': {'rack': 'r1'}, 'b': {'rack': 'r1'}, 'c': {'rack': 'r2'}}
    the_plan = filters['rollout_plan'](['a', 'b', 'c'], VALUES, hostvars, {}, None)
    assert the_plan['errors'] == []
    assert the_plan['serial'] == [1, 1, 1]
    assert [wave['hosts'] for wave in the_plan['waves']] == [['a'], ['c'], ['b']]


def test_plan_errors_are_returned_not_raised(filters):
    the_plan = filters['rollout_plan'](['a'], dict(VALUES, inferops_rollout_max_wave='all'), {}, {}, '')
    assert the_plan['errors'] == ['inferops_rollout_max_wave = "all": not a host count or a percentage; use a whole '
                                  'number of hosts (2) or a percentage of the fleet ("10%")']


def test_plan_bad_call(filters):
    with pytest.raises(AnsibleFilterError):
        filters['rollout_plan']('a,b', VALUES)
    with pytest.raises(AnsibleFilterError):
        filters['rollout_plan'](['a'], None)


def test_record_reads_outcomes_from_hostvars(filters):
    the_plan = filters['rollout_plan'](['a', 'b', 'c'], dict(VALUES, inferops_rollout_domain_var=None))
    the_plan = json.loads(json.dumps(the_plan))  # what set_fact keeps
    hostvars = {'a': {'__inferops_rollout_outcome': {'ok': True}}}
    first = filters['rollout_record'](the_plan, '0', hostvars)
    assert first['halt'] is False and first['passed'] == ['a']
    the_plan['state'] = first['state']
    hostvars['b'] = {'__inferops_rollout_outcome': {'ok': False, 'step': 'verify', 'task': 't', 'message': 'm'}}
    second = filters['rollout_record'](the_plan, 1, hostvars)
    assert second['halt'] is True
    assert second['state']['halted']['untouched'] == ['c']


def test_record_bad_call(filters):
    the_plan = filters['rollout_plan'](['a'], VALUES, {'a': {'rack': 1}})
    with pytest.raises(AnsibleFilterError):
        filters['rollout_record'](the_plan, 5, {})
    with pytest.raises(AnsibleFilterError):
        filters['rollout_record'](the_plan, 'x', {})
    with pytest.raises(AnsibleFilterError):
        filters['rollout_record']({'errors': ['x'], 'waves': []}, 0, {})


def test_audit_errors(filters):
    results = [{'id': 'storage.mount', 'severity': 'critical', 'subject': '/data/models', 'status': 'FAIL',
                'reason': 'not mounted', 'expected': 'mounted', 'observed': None, 'fix': 'md_raid_xfs'},
               {'id': 'platform.os', 'severity': 'minor', 'status': 'FAIL'}]
    assert filters['rollout_audit_errors'](results) == [
        'audit storage.mount (critical) /data/models: not mounted; expected mounted, observed None; fix: md_raid_xfs']
    assert filters['rollout_audit_errors'](results, ['minor'])[0].startswith('audit platform.os (minor) -: FAIL;')
    with pytest.raises(AnsibleFilterError):
        filters['rollout_audit_errors'](None)


def test_site_roles_map_matches_the_site_playbooks():
    """playbooks/vars/site_roles.yml (preflight and rollout) lists the roles each site play runs, in order."""
    import os

    import yaml

    root = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
    with open(os.path.join(root, 'playbooks', 'vars', 'site_roles.yml')) as handle:
        sites = yaml.safe_load(handle)['__inferops_site_roles']
    found = {}
    for name in ('local_nvme.yml', 'nvmeof_pool.yml', 'serving.yml', 'node_health.yml'):
        with open(os.path.join(root, 'playbooks', name)) as handle:
            for play in yaml.safe_load(handle):
                if 'roles' in play:
                    found[play['hosts']] = [entry['role'].split('.')[-1] for entry in play['roles']
                                            if entry.get('when') != WORKERS_ONLY]
    assert found == sites


# How playbooks/serving.yml runs the labels role on the nodes that are Kubernetes workers.
WORKERS_ONLY = "'%s' in group_names" % LABELS_GROUP


def test_serving_play_syncs_models_before_deploy_and_warmup_and_labels_a_worker_last():
    """Issue 14: model_sync before the deploy and the page-cache warm-up; a worker's labels (triton-ready)
    decided on the warm servers, as a rollout does (LABELS_GROUP last); site.yml runs the pool's labels
    play before the serving play."""
    import os

    import yaml

    root = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
    with open(os.path.join(root, 'playbooks', 'serving.yml')) as handle:
        play = [entry for entry in yaml.safe_load(handle) if entry.get('hosts') == 'serving'][0]
    roles = [(entry['role'].split('.')[-1], entry.get('when')) for entry in play['roles']]
    assert [name for name, _when in roles] == ['model_sync', 'docker_engine', 'triton_compose', 'warmup', 'k8s_node_labels']
    assert roles[-1][1] == WORKERS_ONLY and roles[0][1] is None
    with open(os.path.join(root, 'playbooks', 'site.yml')) as handle:
        imported = [entry['ansible.builtin.import_playbook'] for entry in yaml.safe_load(handle)]
    assert imported.index('nvmeof_pool.yml') < imported.index('serving.yml')


def test_warmup_errors(filters):
    warmup = {'page_cache': {}, 'traffic': {'results': [
        {'endpoint': 'http://127.0.0.1:8000', 'model': 'identity', 'requests': 60, 'errors': 0, 'p99_ms': 900.0,
         'steady_p99_ms': 12.5},
        {'endpoint': 'http://127.0.0.1:8001', 'model': 'identity', 'requests': 60, 'errors': 1, 'p99_ms': 900.0,
         'steady_p99_ms': 1500.0}]}}
    assert filters['rollout_warmup_errors'](warmup) == [
        'warm-up of model identity on http://127.0.0.1:8001: P99 1500.0 ms (steady_p99_ms) above the bound of 1000 ms '
        '(inferops_rollout_warmup_p99_ms); 60 requests, 1 failed. Look at the node (page cache, CPU pinning, '
        'throttling) or raise the bound for this model']
    # the operator's forms: a number, a dict by model, false; the rollout passes its normalised setting
    assert len(filters['rollout_warmup_errors'](warmup, 10)) == 2
    assert filters['rollout_warmup_errors'](warmup, {'identity': 2000}) == []
    assert filters['rollout_warmup_errors'](warmup, {'*': 1000.0}) == filters['rollout_warmup_errors'](warmup)
    assert filters['rollout_warmup_errors'](warmup, False) == []
    assert filters['rollout_warmup_errors'](None, 100) == [
        'no warm-up result to judge (the warmup role did not run or published nothing); a warm-up P99 bound needs '
        'one']


def test_warmup_errors_bad_call(filters):
    with pytest.raises(AnsibleFilterError, match='the input must be the warmup role'):
        filters['rollout_warmup_errors']([1])
    with pytest.raises(AnsibleFilterError, match='inferops_rollout_warmup_p99_ms = "soon": not a number'):
        filters['rollout_warmup_errors']({}, 'soon')


def test_plan_of_a_pool_rollout_through_the_filter(filters):
    groups = {'nvmeof_targets': ['t1'], 'nvmeof_initiators': ['i1', 'i2']}
    sites = {'nvmeof_targets': ['nvmeof_target'], 'nvmeof_initiators': ['nvmeof_initiator']}
    values = dict(VALUES, inferops_rollout_group='nvmeof_initiators:nvmeof_targets', inferops_rollout_domain_var=None)
    the_plan = filters['rollout_plan'](['i1', 'i2', 't1'], values, {}, groups, '', sites)
    assert the_plan['errors'] == []
    assert [wave['hosts'] for wave in the_plan['waves']] == [['t1'], ['i1'], ['i2']]
    assert the_plan['host_roles'] == {'t1': ['nvmeof_target'], 'i1': ['nvmeof_initiator'],
                                      'i2': ['nvmeof_initiator']}
