# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit's serving checks (serving.ready, serving.models) on what ``triton_info`` returns from the answers of
a real tritonserver 2.51 (fixtures/triton, served over HTTP on 127.0.0.1): ``serving`` - identity alone, default
model control, as triton_compose runs it; ``degraded`` - identity READY, broken failed to load, the server not
ready; ``ready`` - explicit model control, broken never loaded. The expected endpoints are the triton_compose
role's plan over its defaults with the instances pointed at the recorded server.

serving.containers on what ``compose_project_info`` returns from Docker 26 and Compose 2.26.1's recorded answers
(fixtures/compose, replayed as test_compose_project_info does): project ``rec``, services ``a`` and ``b`` - the
role's plan is named the same (project ``rec``, instances ``a`` and ``b``), so each service of its definition is
judged on what compose said of the recorded container of that name."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import jsonschema
import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue, outputs as audit_outputs
from ansible_collections.inferops.node.plugins.module_utils.serving import compose_state
from ansible_collections.inferops.node.plugins.modules import compose_project_info, triton_info
from ansible_collections.inferops.node.tests.unit.module_harness import fixture, run_module
from ansible_collections.inferops.node.tests.unit.plugins.modules import test_compose_project_info as recorded_compose
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_outputs import promtool
from ansible_collections.inferops.node.tests.unit.triton_replay import RecordedTriton, closed_port

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '..')
DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'triton_compose', 'defaults', 'main.yml')))
# The keys of the role's __triton_compose_params: every variable the role declares (lookup role_settings).
PARAM_NAMES = sorted(yaml.safe_load(open(os.path.join(ROOT, 'roles', 'triton_compose', 'meta', 'argument_specs.yml')))[
    'argument_specs']['main']['options'])
LOAD_ERROR = 'Internal: RuntimeError: weights.bin: no such file (recorded failure)'


@pytest.fixture
def servers():
    started = []

    def start(state):
        started.append(RecordedTriton(state))
        return started[-1].url

    yield start
    for server in started:
        server.stop()
        assert server.unrecorded == []


def port(url):
    return int(url.rsplit(':', 1)[1])


def expected(*ports, **more):
    """The role's variables (its defaults) with one instance per port, as the action resolves them."""
    params = dict((name, DEFAULTS[name]) for name in PARAM_NAMES)
    # The gRPC and metrics ports are never bound: below Linux's ephemeral range (32768-60999), so
    # they never equal a recorded server's or closed_port()'s port (41001 did once: the plan's
    # duplicate-port refusal, not the server, answered).
    params['triton_compose_instances'] = [
        {'name': 'triton-%d' % index, 'http_port': http, 'grpc_port': 20000 + index, 'metrics_port': 21000 + index}
        for index, http in enumerate(ports)]
    out = {'triton_compose_params': params, 'triton_compose_deploy': 'always', 'model_sync_models': [],
           'model_sync_destination': '/data/models'}
    out.update(more)
    return out


def read(wanted, urls=None):
    """triton_info on ``urls`` (the plan's endpoints by default), as the audit's reads."""
    if urls is None:
        urls = ['http://127.0.0.1:%d' % i['http_port'] for i in wanted['triton_compose_params']['triton_compose_instances']]
    failed, result = run_module(triton_info.main, {'endpoints': urls})
    assert not failed
    return {'triton_info': result}


def audit(wanted, urls=None):
    """The serving results by id."""
    return evaluate(read(wanted, urls), wanted)


def evaluate(reads, wanted):
    out = {}
    for r in audit_catalogue.evaluate_host(reads, wanted):
        if r['id'].startswith('serving.'):
            out.setdefault(r['id'], []).append(r)
    return out


def test_all_ready_passes(servers):
    url = servers('serving')
    found = audit(expected(port(url)))
    [ready] = found['serving.ready']
    assert ready['status'] == 'PASS' and ready['subject'] == url and ready['reason'] is None
    assert ready['observed'] == {'reachable': True, 'live': True, 'ready': True, 'version': '2.51.0'}
    assert ready['evidence'] == 'GET %s/v2/health/live, %s/v2/health/ready' % (url, url)
    assert ready['fix'].startswith('role triton_compose (tag triton_compose)')
    [model] = found['serving.models']
    assert model['status'] == 'PASS' and model['subject'] == url + '/v2/models/identity'
    assert model['expected'] == 'READY' and model['observed'] == {'state': 'READY', 'version': '1'}
    assert model['evidence'] == 'POST %s/v2/repository/index' % url


def test_model_failed_to_load_fails_naming_it(servers):
    url = servers('degraded')
    found = audit(expected(port(url)))
    [ready] = found['serving.ready']
    # Strict readiness: live, not ready, and the reason names the model that failed.
    assert ready['status'] == 'FAIL' and ready['reason'] == '%s not ready (broken UNAVAILABLE)' % url
    assert ready['observed'] == {'reachable': True, 'live': True, 'ready': False, 'version': '2.51.0'}
    models = dict((r['subject'].rsplit('/', 1)[1], r) for r in found['serving.models'])
    assert models['identity']['status'] == 'PASS'
    assert models['broken']['status'] == 'FAIL' and models['broken']['reason'] == '%s: model broken %s' % (url, LOAD_ERROR)
    assert models['broken']['observed'] == {'state': 'UNAVAILABLE', 'version': '1'}


def test_model_of_model_sync_missing_fails_naming_it(servers):
    url = servers('serving')
    found = audit(expected(port(url), model_sync_models=[{'name': 'identity', 'version': '1'},
                                                         {'name': 'resnet50', 'version': '3'},
                                                         {'name': 'old', 'version': '1', 'state': 'absent'}]))
    assert [r['status'] for r in found['serving.ready']] == ['PASS']
    models = dict((r['subject'].rsplit('/', 1)[1], r) for r in found['serving.models'])
    assert sorted(models) == ['identity', 'resnet50']
    assert models['resnet50']['status'] == 'FAIL'
    assert models['resnet50']['reason'] == '%s: model resnet50 not in the repository index' % url
    # model_sync filling another directory says nothing about this repository.
    found = audit(expected(port(url), model_sync_models=[{'name': 'resnet50', 'version': '3'}],
                           model_sync_destination='/srv/other'))
    assert [r['subject'] for r in found['serving.models']] == [url + '/v2/models/identity']


def test_model_never_loaded_warns_unless_model_sync_holds_it(servers):
    url = servers('ready')
    found = audit(expected(port(url)))
    assert [r['status'] for r in found['serving.ready']] == ['PASS']
    models = dict((r['subject'].rsplit('/', 1)[1], r) for r in found['serving.models'])
    assert models['identity']['status'] == 'PASS'
    assert models['broken']['status'] == 'WARN'
    assert models['broken']['reason'] == '%s: model broken in the repository, never loaded (added after the server started?)' % url
    found = audit(expected(port(url), model_sync_models=[{'name': 'broken', 'version': '1'}]))
    broken = [r for r in found['serving.models'] if r['subject'].endswith('/broken')]
    assert [r['status'] for r in broken] == ['FAIL']


def test_unreachable_instance_fails_with_its_url(servers):
    url = servers('serving')
    down = closed_port()
    found = audit(expected(port(url), down))
    ready = dict((r['subject'], r) for r in found['serving.ready'])
    down_url = 'http://127.0.0.1:%d' % down
    assert ready[url]['status'] == 'PASS'
    assert ready[down_url]['status'] == 'FAIL' and ready[down_url]['reason'].startswith(
        '%s not answering (GET /v2/health/live: ConnectionRefusedError' % down_url)
    assert ready[down_url]['observed'] == {'reachable': False, 'live': False, 'ready': False, 'version': None}
    assert ready[down_url]['evidence'] == 'GET %s/v2/health/live, %s/v2/health/ready' % (down_url, down_url)
    # Its models cannot be read: SKIP, serving.ready says why.
    models = dict((r['subject'], r) for r in found['serving.models'])
    assert models[down_url]['status'] == 'SKIP' and models[down_url]['reason'] == '%s does not answer (serving.ready)' % down_url
    assert models[url + '/v2/models/identity']['status'] == 'PASS'


def test_endpoint_not_read_is_skip(servers):
    url = servers('serving')
    found = audit(expected(port(url), 8100), urls=[url])
    ready = dict((r['subject'], r) for r in found['serving.ready'])
    assert ready['http://127.0.0.1:8100']['status'] == 'SKIP'
    assert ready['http://127.0.0.1:8100']['reason'] == 'triton_info did not read http://127.0.0.1:8100'


@pytest.mark.parametrize('reads, wanted, reason', [
    # A host outside the serving group: the playbook passes its reason.
    ({'triton_info': {'skipped': True, 'msg': 'not in the serving group'}}, expected(8000),
     'triton_info was not run on this host: not in the serving group'),
    ({}, expected(8000), 'triton_info was not run on this host'),
])
def test_skip_with_reason(reads, wanted, reason):
    found = evaluate(reads, wanted)
    for check_id in ('serving.ready', 'serving.models'):
        [result] = found[check_id]
        assert result['status'] == 'SKIP' and result['reason'] == reason


def test_a_failed_read_is_not_checked():
    found = evaluate({'triton_info': {'failed': True, 'msg': 'endpoints must not be empty'}}, expected(8000))
    for check_id in ('serving.ready', 'serving.models'):
        [result] = found[check_id]
        assert result['status'] == 'NOT_CHECKED' and result['reason'] == 'triton_info failed: endpoints must not be empty'


@pytest.mark.parametrize('wanted, reason', [
    (expected(8000, triton_compose_deploy='never'),
     'triton_compose_deploy is never: the role renders the compose project, starts no server'),
    (dict(expected(8000), triton_compose_params=None), 'the triton_compose variables are unknown'),
    (expected(8000, 8000), 'the triton_compose variables are invalid (the role refuses them): '
     'triton_compose_instances: port conflict: port 8000 is both triton-0.http_port and triton-1.http_port'),
])
def test_role_without_servers_skips_every_serving_check(wanted, reason):
    found = evaluate({'triton_info': {'skipped': True}, 'compose_project_info': {'skipped': True}}, wanted)
    for check_id in ('serving.ready', 'serving.models', 'serving.containers', 'serving.model_mount'):
        [result] = found[check_id]
        assert result['status'] == 'SKIP' and result['reason'] == reason


# ------------------------------------------------------------------ serving.containers

CONTAINERS_FIX = 'role triton_compose (tag triton_compose) (a FAIL: docker compose up would create, recreate or start'
WANTED = 'running, created from the configuration and image the role renders'


def compose_expected(*services):
    """The role's defaults with the recorded project's name and one instance per recorded service."""
    wanted = expected(*range(8000, 8000 + len(services)))
    params = wanted['triton_compose_params']
    params['triton_compose_project_name'] = 'rec'
    for instance, name in zip(params['triton_compose_instances'], services):
        instance['name'] = name
    return wanted


def containers(result, *services):
    """serving.containers by subject, on compose_project_info's result."""
    found = evaluate({'compose_project_info': result}, compose_expected(*services))
    return dict((r['subject'], r) for r in found['serving.containers'])


def test_containers_as_rendered_pass(monkeypatch):
    result = recorded_compose.info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json')
    found = containers(result, 'a', 'b')
    assert sorted(found) == ['a', 'b']
    for name in ('a', 'b'):
        assert found[name]['status'] == 'PASS' and found[name]['reason'] is None
        assert found[name]['expected'] == WANTED
        assert found[name]['observed'] == {'containers': ['rec-%s-1' % name], 'action': 'none'}
        assert found[name]['severity'] == 'critical'
        assert found[name]['evidence'] == 'docker compose config --hash, docker inspect (compose_project_info)'
        assert found[name]['fix'].startswith(CONTAINERS_FIX)


def test_container_of_another_configuration_fails_with_both_hashes(monkeypatch):
    # a's container was created from definition.json; the role now renders definition_changed.json.
    result = recorded_compose.info(monkeypatch, 'definition_changed.json', 'hashes_changed.txt', 'ps_up.txt',
                                   'inspect_up.json')
    running = compose_state.parse_hashes(fixture('compose', 'hashes.txt'))['a']
    wanted = compose_state.parse_hashes(fixture('compose', 'hashes_changed.txt'))['a']
    found = containers(result, 'a', 'b')
    assert found['a']['status'] == 'FAIL'
    assert found['a']['reason'] == ('its configuration changed (config hash %s, wanted %s) '
                                    '(docker compose up would recreate it)' % (running, wanted))
    assert found['a']['observed'] == {'containers': ['rec-a-1'], 'action': 'recreate'}
    assert found['b']['status'] == 'PASS'


def test_stopped_container_fails(monkeypatch):
    result = recorded_compose.info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_b_stopped.json')
    found = containers(result, 'a', 'b')
    assert found['a']['status'] == 'PASS'
    assert found['b']['status'] == 'FAIL' and found['b']['reason'] == 'rec-b-1 is exited (docker compose up would start it)'


def test_no_container_fails(monkeypatch):
    result = recorded_compose.info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_fresh.txt')
    found = containers(result, 'a', 'b')
    for name in ('a', 'b'):
        assert found[name]['status'] == 'FAIL'
        assert found[name]['reason'] == 'no container yet (docker compose up would create it)'
        assert found[name]['observed'] == {'containers': [], 'action': 'create'}


def test_container_of_a_service_no_longer_rendered_warns(monkeypatch):
    found = containers(recorded_compose.without_b(monkeypatch), 'a')
    assert found['a']['status'] == 'PASS'
    assert found['rec-b-1']['status'] == 'WARN' and found['rec-b-1']['observed'] == {'container': 'rec-b-1'}
    assert found['rec-b-1']['reason'] == ("container rec-b-1 of project rec belongs to no service of the role (an orphan: "
                                          "the role's compose up removes it)")


def test_service_not_read_is_skip(monkeypatch):
    result = recorded_compose.info(monkeypatch, 'definition.json', 'hashes.txt', 'ps_up.txt', 'inspect_up.json')
    found = containers(result, 'a', 'c')
    assert found['a']['status'] == 'PASS'
    assert found['c']['status'] == 'SKIP' and found['c']['reason'] == 'compose_project_info did not read service c'


def test_host_without_docker_is_not_checked_with_the_modules_message(monkeypatch, tmp_path):
    # The module itself on a host whose PATH has no docker CLI (the read fails; the audit registers it).
    monkeypatch.setenv('PATH', str(tmp_path))
    failed, result = run_module(compose_project_info.main, {'project_name': 'rec',
                                                            'definition': recorded_compose.definition()})
    assert failed and result['msg'].startswith('docker: command not found on the host')
    [skip] = containers(dict(result, failed=True), 'a', 'b').values()
    assert skip['status'] == 'NOT_CHECKED' and skip['reason'] == 'compose_project_info failed: ' + result['msg']


@pytest.mark.parametrize('result, reason', [
    ({'skipped': True, 'msg': 'not in the serving group'},
     'compose_project_info was not run on this host: not in the serving group'),
    (None, 'compose_project_info was not run on this host'),
])
def test_containers_not_read_is_skip(result, reason):
    [skip] = containers(result, 'a', 'b').values()
    assert skip['status'] == 'SKIP' and skip['reason'] == reason


# ------------------------------------------------------------------ serving.model_mount
# On the mounts Docker 26 reported in the serving_docker guest (fixtures/compose, record_mounts.sh): the role's
# two servers with the repository /srv/models read-only at /models, and a project created with it read-write for
# triton-a and another directory read-only for triton-b.

def mount_expected(*services):
    """The serving_docker scenario's instances and repository over the role's defaults."""
    wanted = compose_expected(*services)
    params = wanted['triton_compose_params']
    params['triton_compose_model_repository'] = '/srv/models'
    params['triton_compose_model_repository_target'] = '/models'
    return wanted


def model_mounts(inspect, *services):
    """serving.model_mount by subject, on the containers compose_project_info parses from ``inspect``."""
    read = {'containers': compose_state.containers(fixture('compose', inspect)), 'services': [], 'orphans': []}
    found = evaluate({'compose_project_info': read}, mount_expected(*services))
    return dict((r['subject'], r) for r in found['serving.model_mount'])


def test_read_only_model_repository_passes():
    found = model_mounts('inspect_triton.json', 'triton-a', 'triton-b')
    assert sorted(found) == ['inferops-triton-triton-a-1:/models', 'inferops-triton-triton-b-1:/models']
    for result in found.values():
        assert result['status'] == 'PASS' and result['severity'] == 'critical'
        assert result['expected'] == {'source': '/srv/models', 'rw': False}
        assert result['observed'] == {'source': '/srv/models', 'rw': False}
        assert result['evidence'] == 'docker inspect (compose_project_info): Mounts'


def test_read_write_or_other_source_fails():
    found = model_mounts('inspect_mounts_wrong.json', 'triton-a', 'triton-b')
    assert found['mounts-triton-a-1:/models']['status'] == 'FAIL'
    assert found['mounts-triton-a-1:/models']['observed'] == {'source': '/srv/models', 'rw': True}
    assert found['mounts-triton-a-1:/models']['reason'] == 'mounts-triton-a-1 mounts /srv/models read-write at /models'
    assert found['mounts-triton-b-1:/models']['status'] == 'FAIL'
    assert found['mounts-triton-b-1:/models']['reason'] == \
        'mounts-triton-b-1 mounts /srv/other-models at /models, not /srv/models'


def test_container_without_the_mount_fails_and_service_without_container_skips():
    # fixtures/compose's inspect_up.json: rec-a-1 and rec-b-1 run sleep with no mount at all.
    found = model_mounts('inspect_up.json', 'a', 'c')
    assert found['rec-a-1:/models']['status'] == 'FAIL'
    assert found['rec-a-1:/models']['reason'] == 'rec-a-1 has nothing mounted at /models'
    assert found['c']['status'] == 'SKIP' and found['c']['reason'] == 'service c has no container (serving.containers)'


def test_report_outputs_with_serving_results(servers):
    """URL subjects in the report (schema), the node_exporter textfile (promtool) and JUnit XML."""
    url = servers('degraded')
    down = 'http://127.0.0.1:%d' % closed_port()
    wanted = expected(port(url), port(down))
    results = audit_catalogue.evaluate_host(read(wanted), wanted)
    report = audit_catalogue.build_report({'hk-inf-01': {'results': results, 'groups': ['serving']}}, {'serving': ['hk-inf-01']})
    with open(os.path.join(ROOT, 'schemas', 'audit_report.schema.json')) as handle:
        jsonschema.validate(json.loads(json.dumps(report)), json.load(handle))
    text = audit_outputs.textfile(report['hosts'][0], '2026-12-02T16:00:00Z')
    assert promtool(text) == (0, '')
    assert 'inferops_audit_check{check="serving.models",severity="critical",status="FAIL",subject="%s/v2/models/broken"} 1' % url in text
    cases = dict(((c.get('classname'), c.get('name')), c) for c in ET.fromstring(audit_outputs.junit_xml(report)).iter('testcase'))
    assert cases[('hk-inf-01.serving.ready', down)].find('failure').get('message').startswith('%s not answering' % down)
