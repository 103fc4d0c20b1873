# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters rollout_plan / rollout_record (playbooks/rollout.yml's controller side)."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.rollout import FilterModule

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
    for name in ('local_nvme.yml', 'nvmeof_pool.yml', 'serving.yml'):
        with open(os.path.join(root, 'playbooks', name)) as handle:
            for play in yaml.safe_load(handle):
                if 'roles' in play:
                    found[play['hosts']] = [entry['role'].split('.')[-1] for entry in play['roles']]
    assert found == sites
