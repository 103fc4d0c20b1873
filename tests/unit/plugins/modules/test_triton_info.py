# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""triton_info against what a real tritonserver 2.51 answered (fixtures/triton, served over HTTP on 127.0.0.1)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.modules import triton_info
from ansible_collections.inferops.node.tests.unit.module_harness import run_module
from ansible_collections.inferops.node.tests.unit.triton_replay import RecordedTriton, closed_port

NOT_READY = 'HTTP 400 {"error":"Model version not ready"}'
LOAD_ERROR = 'Internal: RuntimeError: weights.bin: no such file (recorded failure)'


@pytest.fixture(params=['degraded', 'ready'])
def recorded(request):
    server = RecordedTriton(request.param)
    yield server
    server.stop()
    assert server.unrecorded == []


def read(args, check_mode=False):
    return run_module(triton_info.main, args, check_mode=check_mode)


def test_degraded_server_one_model_failed():
    server = RecordedTriton('degraded')
    try:
        failed, result = read({'endpoints': [server.url], 'models': ['identity', 'broken', 'missing']})
    finally:
        server.stop()
    assert not failed and result['changed'] is False and result['not_answering'] == []
    [endpoint] = result['endpoints']
    assert endpoint['url'] == server.url and endpoint['reachable'] and endpoint['errors'] == []
    # Strict readiness: the server is live but not ready while one model failed to load.
    assert endpoint['live'] is True and endpoint['ready'] is False
    assert endpoint['server']['name'] == 'triton' and endpoint['server']['version'] == '2.51.0'
    assert 'model_repository' in endpoint['server']['extensions']
    broken, identity = endpoint['index']
    assert identity == {'name': 'identity', 'version': '1', 'state': 'READY', 'reason': None}
    assert broken['name'] == 'broken' and broken['state'] == 'UNAVAILABLE' and broken['reason'].startswith(LOAD_ERROR)
    models = dict((m['name'], m) for m in endpoint['models'])
    assert [m['name'] for m in endpoint['models']] == ['identity', 'broken', 'missing']
    assert models['identity'] == {'name': 'identity', 'version': '', 'ready': True, 'in_repository': True,
                                  'state': 'READY', 'reason': None}
    # The three not-ready models answered the same 400: the index tells a failed load from an unknown model.
    assert models['broken']['ready'] is False and models['broken']['in_repository'] is True
    assert models['broken']['state'] == 'UNAVAILABLE' and models['broken']['reason'].startswith(LOAD_ERROR)
    assert models['missing'] == {'name': 'missing', 'version': '', 'ready': False, 'in_repository': False,
                                 'state': None, 'reason': 'not in the repository index'}
    assert server.requests == [
        ('GET', '/v2/health/live'), ('GET', '/v2/health/ready'), ('GET', '/v2'), ('POST', '/v2/repository/index'),
        ('GET', '/v2/models/identity/ready'), ('GET', '/v2/models/broken/ready'), ('GET', '/v2/models/missing/ready')]


def test_ready_server_and_a_model_never_loaded():
    server = RecordedTriton('ready')
    try:
        failed, result = read({'endpoints': [server.url], 'models': ['identity', 'broken']})
    finally:
        server.stop()
    assert not failed
    [endpoint] = result['endpoints']
    assert endpoint['live'] is True and endpoint['ready'] is True
    # Explicit model control: broken is listed by name only.
    assert endpoint['index'] == [{'name': 'broken', 'version': None, 'state': None, 'reason': None},
                                 {'name': 'identity', 'version': '1', 'state': 'READY', 'reason': None}]
    identity, broken = endpoint['models']
    assert identity['ready'] is True and identity['reason'] is None
    assert broken == {'name': 'broken', 'version': '', 'ready': False, 'in_repository': True, 'state': None,
                      'reason': 'in the repository, never loaded'}


@pytest.mark.parametrize('version, ready, state, reason', [
    ('1', True, 'READY', None),
    ('2', False, None, 'version 2 not in the repository index'),
])
def test_model_version(recorded, version, ready, state, reason):
    failed, result = read({'endpoints': [recorded.url], 'models': ['identity'], 'model_version': version})
    assert not failed
    [model] = result['endpoints'][0]['models']
    assert model == {'name': 'identity', 'version': version, 'ready': ready, 'in_repository': True,
                     'state': state, 'reason': reason}
    assert ('GET', '/v2/models/identity/versions/%s/ready' % version) in recorded.requests


def test_check_mode_reads_the_same(recorded):
    args = {'endpoints': [recorded.url], 'models': ['identity', 'broken']}
    normal = read(args)
    checked = read(args, check_mode=True)
    assert checked == normal and not checked[0]
    # Reads only: the health, metadata and index endpoints and the models' ready endpoints, nothing else.
    assert set(recorded.requests) == {
        ('GET', '/v2/health/live'), ('GET', '/v2/health/ready'), ('GET', '/v2'), ('POST', '/v2/repository/index'),
        ('GET', '/v2/models/identity/ready'), ('GET', '/v2/models/broken/ready')}


def test_unreachable_endpoint_is_reported_not_failed(recorded):
    dead = 'http://127.0.0.1:%d' % closed_port()
    failed, result = read({'endpoints': [dead, recorded.url], 'models': ['identity']})
    assert not failed and result['not_answering'] == [dead]
    # A true 'unreachable' in a result makes Ansible report the host unreachable and stop its tasks.
    assert 'unreachable' not in result
    gone, alive = result['endpoints']
    assert gone['url'] == dead and gone['reachable'] is False and gone['live'] is False and gone['ready'] is False
    assert gone['server'] is None and gone['index'] is None
    assert len(gone['errors']) == 1 and 'ConnectionRefusedError' in gone['errors'][0]
    assert gone['models'] == [{'name': 'identity', 'version': '', 'ready': False, 'in_repository': None,
                               'state': None, 'reason': 'the endpoint did not answer'}]
    assert alive['reachable'] is True and alive['models'][0]['ready'] is True


def test_fail_on_unreachable(recorded):
    dead = 'http://127.0.0.1:%d' % closed_port()
    failed, result = read({'endpoints': [recorded.url, dead], 'fail_on_unreachable': True})
    assert failed and result['not_answering'] == [dead] and 'unreachable' not in result
    assert result['msg'].startswith('not answering: %s (GET /v2/health/live: ConnectionRefusedError' % dead)
    assert recorded.url not in result['msg'] and len(result['endpoints']) == 2
    failed, result = read({'endpoints': [recorded.url], 'fail_on_unreachable': True})
    assert not failed and result['endpoints'][0]['models'] == []


@pytest.mark.parametrize('args, message', [
    ({'endpoints': ['ftp://127.0.0.1:8000']}, "endpoints: unsupported URL scheme 'ftp' in 'ftp://127.0.0.1:8000'"),
    ({'endpoints': ['http://']}, "endpoints: no host in URL 'http://'"),
    ({'endpoints': []}, 'endpoints must not be empty'),
    ({'endpoints': ['http://127.0.0.1:8000'], 'request_timeout': 0}, 'request_timeout must be greater than 0 (got 0.0)'),
])
def test_bad_arguments(args, message):
    failed, result = read(args)
    assert failed and result['msg'] == message
