# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""compose_project_info on what Docker 26 and Compose 2.26.1 printed in the serving_docker lab guest
(fixtures/compose, recorded by record_compose.sh): a fresh project, the project up, one service's
configuration changed, one container stopped. Every command is asserted, with its standard input and
environment (module_harness.Replay)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.inferops.node.plugins.modules import compose_project_info
from ansible_collections.inferops.node.tests.unit.module_harness import Replay, fixture, run_module

IMAGE = 'inferops/tritonserver:2.51.0-cpu'
HASH = ['docker', 'compose', '--project-name', 'rec', '--file', '-', 'config', '--hash', '*']
PS = ['docker', 'ps', '--all', '--quiet', '--no-trunc', '--filter', 'label=com.docker.compose.project=rec']
IMAGES = ['docker', 'image', 'inspect', IMAGE]


def definition(name='definition.json'):
    return json.loads(fixture('compose', name))


def ids(name):
    return fixture('compose', name).split()


def calls(definition_file, hashes, ps, inspect=None):
    """The commands of one run: hashes of the definition (on stdin), the project's containers, the image."""
    wanted = definition(definition_file)
    sequence = [{'command': HASH, 'out': '@compose/' + hashes, 'data': json.dumps(wanted)},
                {'command': PS, 'out': '@compose/' + ps}]
    if inspect:
        sequence.append({'command': ['docker', 'inspect', '--type', 'container'] + ids(ps), 'out': '@compose/' + inspect})
    sequence.append({'command': IMAGES, 'out': '@compose/image_inspect.json'})
    return wanted, sequence


def info(monkeypatch, definition_file, hashes, ps, inspect=None, check_mode=False, model_repository=None):
    wanted, sequence = calls(definition_file, hashes, ps, inspect)
    replay = Replay(monkeypatch, sequence)
    args = {'project_name': 'rec', 'definition': wanted}
    if model_repository:
        args['model_repository'] = model_repository
    failed, result = run_module(compose_project_info.main, args, check_mode=check_mode)
    replay.done()
    assert not failed, result
    assert result['changed'] is False
    return result


def actions(result):
    return dict((s['name'], s['action']) for s in result['services'])


@pytest.mark.parametrize('check_mode', [False, True])
def test_fresh_project_creates_both_servers(monkeypatch, check_mode):
    result = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_fresh.txt', check_mode=check_mode)
    assert actions(result) == {'a': 'create', 'b': 'create'}
    assert result['restart'] == ['a', 'b'] and result['would_change'] is True
    assert result['containers'] == [] and result['orphans'] == []
    assert result['summary'] == ['a: create (no container yet)', 'b: create (no container yet)']


def test_project_up_as_defined_changes_nothing(monkeypatch):
    result = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json')
    assert actions(result) == {'a': 'none', 'b': 'none'}
    assert result['restart'] == [] and result['would_change'] is False and result['summary'] == []
    assert [(c['name'], c['service'], c['state'], c['running']) for c in result['containers']] == [
        ('rec-a-1', 'a', 'running', True), ('rec-b-1', 'b', 'running', True)]


def test_changed_environment_recreates_that_service_only(monkeypatch):
    result = info(monkeypatch, 'definition_changed.json', 'hashes_changed.txt', 'ps_up.txt', 'inspect_up.json')
    assert actions(result) == {'a': 'recreate', 'b': 'none'}
    assert result['restart'] == ['a']
    assert 'its configuration changed' in result['summary'][0]


def test_stopped_container_is_started(monkeypatch):
    result = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_b_stopped.json')
    assert actions(result) == {'a': 'none', 'b': 'start'}
    assert result['summary'] == ['b: start (rec-b-1 is exited)']


def without_b(monkeypatch):
    """The module on the project up, with service ``b`` removed from the definition."""
    wanted, sequence = calls('definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json')
    del wanted['services']['b']
    # config --hash of the smaller project: a's line only (same hash: a's configuration is unchanged).
    sequence[0] = {'command': HASH, 'data': json.dumps(wanted),
                   'out': ''.join(l + '\n' for l in fixture('compose', 'hashes.txt').splitlines() if l.startswith('a '))}
    replay = Replay(monkeypatch, sequence)
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec', 'definition': wanted})
    replay.done()
    assert not failed, result
    return result


def test_removed_service_is_an_orphan_and_no_restart(monkeypatch):
    result = without_b(monkeypatch)
    assert actions(result) == {'a': 'none'} and result['orphans'] == ['rec-b-1']
    assert result['restart'] == [] and result['would_change'] is True
    assert result['summary'] == ['rec-b-1: removed (orphan)']


def test_image_not_built_yet_is_read_as_absent(monkeypatch):
    wanted, sequence = calls('definition.json', 'hashes.txt', 'ps_fresh.txt')
    sequence[-1] = {'command': IMAGES, 'rc': 1, 'out': '@compose/image_inspect_missing.json',
                    'err': '@compose/image_inspect_missing.err'}
    replay = Replay(monkeypatch, sequence)
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec', 'definition': wanted})
    replay.done()
    assert not failed, result
    assert actions(result) == {'a': 'create', 'b': 'create'}


def test_compose_refusing_the_definition_fails_with_its_words(monkeypatch):
    wanted = definition()
    wanted['services']['a']['ports'] = ['not a port']
    replay = Replay(monkeypatch, [{'command': HASH, 'data': json.dumps(wanted), 'rc': 15,
                                   'err': 'invalid hostPort: not a port\n'}])
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec', 'definition': wanted})
    replay.done()
    assert failed and result['msg'] == 'docker compose config refused the definition: invalid hostPort: not a port'


def test_definition_without_services_is_refused_before_any_command(monkeypatch):
    replay = Replay(monkeypatch, [])
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec', 'definition': {'name': 'rec'}})
    replay.done()
    assert failed and 'services mapping' in result['msg']


def test_a_docker_cli_without_compose_v2_is_named(monkeypatch):
    # What a Docker 28.2.2 CLI without the compose plugin printed for this command on the development VM.
    wanted = definition()
    replay = Replay(monkeypatch, [{'command': HASH, 'data': json.dumps(wanted), 'rc': 125,
                                   'err': "unknown flag: --project-name\n\nUsage:  docker [OPTIONS] COMMAND [ARG...]\n\n"
                                          "Run 'docker --help' for more information\n"}])
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec', 'definition': wanted})
    replay.done()
    assert failed and result['msg'].startswith('the docker CLI has no Compose v2 plugin (docker compose): unknown flag')


def test_model_synced_after_the_servers_started_recreates_them_one_at_a_time(monkeypatch, tmp_path):
    """model_sync put a model in place after the recorded servers started (its marker's mtime): Triton still
    serves what it loaded at start, so both are recreated - one at a time - though compose sees no change."""
    up = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json')
    started = max(c['started'] for c in up['containers'])
    for model, when in (('identity', started + 60), ('add', started - 3600)):
        (tmp_path / model).mkdir()
        marker = tmp_path / model / '.inferops-model-sync.json'
        marker.write_text('{}')
        os.utime(str(marker), (when, when))
    (tmp_path / 'by-hand').mkdir()   # no marker: not model_sync's, left out
    result = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json',
                  model_repository=str(tmp_path))
    assert actions(result) == {'a': 'recreate', 'b': 'recreate'}
    assert [s['stale_models'] for s in result['services']] == [['identity'], ['identity']]
    assert result['one_at_a_time'] == ['a', 'b'] and result['recreate_always'] == []
    assert result['summary'][0] == 'a: recreate (model(s) identity synced after its server started (it serves what it loaded))'
    # The servers recreated since: nothing to do.
    os.utime(str(tmp_path / 'identity' / '.inferops-model-sync.json'), (started - 1, started - 1))
    result = info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json',
                  model_repository=str(tmp_path))
    assert actions(result) == {'a': 'none', 'b': 'none'} and result['would_change'] is False
