# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""compose_state's decision on the recorded project (fixtures/compose): the cases the module tests do not
reach through the CLI - an image tag that now names another image, replicas, one-off containers."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.serving import compose_state
from ansible_collections.inferops.node.tests.unit.module_harness import fixture

IMAGE = 'inferops/tritonserver:2.51.0-cpu'


def recorded():
    definition = json.loads(fixture('compose', 'definition.json'))
    hashes = compose_state.parse_hashes(fixture('compose', 'hashes.txt'))
    current = compose_state.containers(fixture('compose', 'inspect_up.json'))
    images = compose_state.image_ids(fixture('compose', 'image_inspect.json'))
    return definition, hashes, current, images


def test_the_recorded_containers_carry_the_recorded_image_id():
    dummy, dummy, current, images = recorded()
    assert set(c['image_id'] for c in current) == set([images[IMAGE]])
    assert images[IMAGE].startswith('sha256:')


def test_a_rebuilt_image_recreates_every_service_on_it():
    definition, hashes, current, images = recorded()
    result = compose_state.pending(definition, hashes, current, {IMAGE: 'sha256:' + '0' * 64})
    assert result['restart'] == ['a', 'b']
    assert result['services'][0]['reason'] == 'its image %s is now sha256:%s' % (IMAGE, '0' * 64)


def test_an_image_not_there_yet_recreates_nothing_by_itself():
    definition, hashes, current, dummy = recorded()
    assert compose_state.pending(definition, hashes, current, {})['would_change'] is False


@pytest.mark.parametrize('service, wanted, action', [
    ({'deploy': {'replicas': 2}}, 2, 'create'),
    ({'scale': 0}, 0, 'scale'),
    ({}, 1, 'none'),
])
def test_replicas(service, wanted, action):
    definition, hashes, current, images = recorded()
    definition['services']['a'].update(service)
    assert compose_state.replicas(definition['services']['a']) == wanted
    result = compose_state.pending(definition, hashes, current, images)
    assert result['services'][0]['action'] == action


def test_one_off_containers_are_not_the_services():
    entries = json.loads(fixture('compose', 'inspect_up.json'))
    entries[1]['Config']['Labels']['com.docker.compose.oneoff'] = 'True'
    assert [c['name'] for c in compose_state.containers(json.dumps(entries))] == [
        c['name'] for c in compose_state.containers(fixture('compose', 'inspect_up.json'))
        if c['name'] != entries[1]['Name'].lstrip('/')]


def test_a_tag_less_reference_is_latest():
    definition, hashes, current, dummy = recorded()
    definition['services']['a']['image'] = 'inferops/tritonserver'
    result = compose_state.pending(definition, hashes, current, {'inferops/tritonserver:latest': 'sha256:1'})
    assert result['services'][0]['action'] == 'recreate'


def test_unexpected_hash_output_is_an_error():
    with pytest.raises(ValueError, match='unexpected line'):
        compose_state.parse_hashes('a 1 2\n')


def test_running_servers_to_recreate_are_replaced_one_at_a_time():
    # The recorded project: two services, both running; a changed cache size changes both hashes.
    definition, hashes, current, images = recorded()
    changed = dict((name, 'f' * 64) for name in hashes)
    result = compose_state.pending(definition, changed, current, images)
    assert result['restart'] == ['a', 'b']
    assert result['one_at_a_time'] == ['a', 'b']
    # A stopped server is started, not replaced in turn: nothing serves from it meanwhile.
    current[0]['running'] = False
    assert compose_state.pending(definition, changed, current, images)['one_at_a_time'] == ['b']


def test_a_single_server_and_a_first_deploy_are_not_rolled():
    definition, hashes, current, images = recorded()
    changed = dict((name, 'f' * 64) for name in hashes)
    assert compose_state.pending(definition, changed, [], images)['one_at_a_time'] == []
    del definition['services']['b']
    single = [c for c in current if c['service'] == 'a']
    result = compose_state.pending(definition, changed, single, images)
    assert result['restart'] == ['a'] and result['one_at_a_time'] == []


def test_started_epoch():
    # inspect_up.json's two containers: docker's nanoseconds, UTC.
    assert [c['started'] for c in compose_state.containers(fixture('compose', 'inspect_up.json'))] == pytest.approx([
        1796305927.85480245, 1796305928.003842026])
    assert compose_state.started_epoch('0001-01-01T00:00:00Z') is None   # created, never started
    assert compose_state.started_epoch('2026-12-03T13:52:08Z') == 1796305928
    assert compose_state.started_epoch('yesterday') is None


def test_a_model_synced_after_a_single_server_started_forces_its_recreation():
    """compose sees nothing changed: the role must pass recreate=always (recreate_always) - but not for a stopped
    server (starting it loads the repository as it is now) nor for one started after the sync."""
    definition, hashes, current, images = recorded()
    del definition['services']['b']
    single = [c for c in current if c['service'] == 'a']
    started = single[0]['started']
    result = compose_state.pending(definition, hashes, single, images, {'identity': started + 1, 'add': started - 1})
    assert [(s['action'], s['stale_models']) for s in result['services']] == [('recreate', ['identity'])]
    assert result['restart'] == ['a'] and result['one_at_a_time'] == [] and result['recreate_always'] == ['a']
    assert compose_state.pending(definition, hashes, single, images, {'identity': started - 1})['would_change'] is False
    single[0]['running'] = False
    result = compose_state.pending(definition, hashes, single, images, {'identity': started + 1})
    assert (result['services'][0]['action'], result['recreate_always']) == ('start', [])


def test_a_changed_setting_and_a_model_synced_since_the_start_are_both_named():
    """The first reason found is not the only one: the summary names the changed configuration and the stale
    model, and the server is replaced one at a time (not forced as a model-only recreation)."""
    definition, hashes, current, images = recorded()
    started = max(c['started'] for c in current)
    changed = dict(hashes, a='f' * 64)
    result = compose_state.pending(definition, changed, current, images, {'identity': started + 1})
    reason = result['services'][0]['reason']
    assert reason.startswith('its configuration changed (config hash ') and ', wanted %s)' % ('f' * 64) in reason
    assert reason.endswith('; model(s) identity synced after its server started (it serves what it loaded)')
    assert result['services'][1]['reason'].startswith('model(s) identity synced after')
    assert result['one_at_a_time'] == ['a', 'b'] and result['recreate_always'] == []


def test_models_synced_reads_the_markers(tmp_path):
    (tmp_path / 'identity').mkdir()
    (tmp_path / 'identity' / 'marker.json').write_text('{}')
    (tmp_path / 'by-hand').mkdir()
    assert list(compose_state.models_synced(str(tmp_path), 'marker.json')) == ['identity']
    assert compose_state.models_synced(str(tmp_path / 'missing'), 'marker.json') == {}
