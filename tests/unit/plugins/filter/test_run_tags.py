# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles_run_by_tags (the preflight's host checks follow --tags / --skip-tags), and the rule it rests on:
every role of the site playbooks carries its own name as its one tag."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.run_tags import roles_run_by_tags

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


def _site_playbooks():
    """The playbooks site.yml imports, but its preflight."""
    with open(os.path.join(ROOT, 'playbooks', 'site.yml')) as handle:
        imported = [play['ansible.builtin.import_playbook'] for play in yaml.safe_load(handle)]
    return [name for name in imported if name != 'preflight.yml']


SITE_PLAYBOOKS = _site_playbooks()
SERVING = ['model_sync', 'docker_engine', 'triton_compose', 'warmup']


@pytest.mark.parametrize('run_tags, skip_tags, expected', [
    (None, None, SERVING),
    (['all'], [], SERVING),
    (['all'], ['docker_engine'], ['model_sync', 'triton_compose', 'warmup']),
    (['triton_compose', 'warmup'], [], ['triton_compose', 'warmup']),
    (['triton_compose', 'md_raid_xfs'], ['triton_compose'], []),
    (['tagged'], ['warmup'], ['model_sync', 'docker_engine', 'triton_compose']),
    (['untagged'], [], []),
    (['all'], ['tagged'], []),
    (['all'], ['all'], []),
    # As a set, the way some ansible-core versions pass ansible_run_tags.
    ({'all'}, {'docker_engine'}, ['model_sync', 'triton_compose', 'warmup']),
    # The preflight's own tag selects no role by itself.
    (['always'], [], []),
])
def test_roles_run_by_tags(run_tags, skip_tags, expected):
    assert roles_run_by_tags(SERVING, run_tags, skip_tags) == expected


def test_refuses_what_is_not_a_list():
    with pytest.raises(AnsibleFilterError, match='list of role names'):
        roles_run_by_tags('docker_engine', ['all'], [])
    with pytest.raises(AnsibleFilterError, match='skip_tags must be a list'):
        roles_run_by_tags(SERVING, ['all'], 'docker_engine')


def _site_role_entries():
    for name in SITE_PLAYBOOKS:
        with open(os.path.join(ROOT, 'playbooks', name)) as handle:
            for play in yaml.safe_load(handle):
                for entry in play.get('roles', []):
                    yield name, entry


def test_every_site_role_is_tagged_with_its_own_name_only():
    entries = list(_site_role_entries())
    assert len(entries) >= 10
    for name, entry in entries:
        role = entry['role'].split('.')[-1]
        assert entry.get('tags') == [role], '%s: role %s has tags %r' % (name, role, entry.get('tags'))


def test_every_role_the_preflight_knows_is_in_a_site_playbook():
    with open(os.path.join(ROOT, 'playbooks', 'vars', 'site_roles.yml')) as handle:
        site_roles = yaml.safe_load(handle)['__inferops_site_roles']
    tagged = {entry['role'].split('.')[-1] for dummy, entry in _site_role_entries()}
    assert {role for roles in site_roles.values() for role in roles} <= tagged
