# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``triton_ready`` check of module_utils/serving/node_labels.py on what ``triton_info`` returns from the answers
of a real tritonserver 2.51 (fixtures/triton, served over HTTP on 127.0.0.1): ``degraded`` - identity READY,
broken failed to load, the server not ready (strict readiness); ``ready`` - identity only, server ready."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels as nl
from ansible_collections.inferops.node.plugins.modules import triton_info
from ansible_collections.inferops.node.tests.unit.module_harness import run_module
from ansible_collections.inferops.node.tests.unit.triton_replay import RecordedTriton, closed_port

LABEL = {nl.DEFAULT_PREFIX + '/triton-ready': 'true'}


@pytest.fixture
def servers():
    started = {}

    def start(state):
        started[state] = RecordedTriton(state)
        return started[state].url

    yield start
    for server in started.values():
        server.stop()
        assert server.unrecorded == []


def triton_plan(endpoints, models, read_endpoints=None, read_models=None):
    """As the role does: triton_info on the configured endpoints and models, then the plan."""
    failed, result = run_module(triton_info.main, {'endpoints': read_endpoints or endpoints,
                                                   'models': models if read_models is None else read_models})
    assert not failed
    return nl.plan({'triton_endpoints': endpoints, 'triton_models': models}, None, None, result)


def test_ready_server_and_models_earn_the_label(servers):
    url = servers('ready')
    plan = triton_plan([url], ['identity'])
    assert plan['errors'] == [] and plan['failed'] == [] and plan['labels'] == LABEL
    assert plan['checks'] == [{'name': 'triton_ready', 'passed': True, 'labels': {'triton-ready': 'true'},
                               'reason': '1 endpoint(s) ready, with 1 model(s) ready on each'}]
    assert triton_plan([url], [])['labels'] == LABEL


def test_a_failed_model_makes_the_server_not_ready(servers):
    """identity is ready, but broken failed to load: strict readiness, no label, and the reason names broken."""
    url = servers('degraded')
    plan = triton_plan([url], ['identity'])
    assert plan['labels'] == {} and plan['failed'] == ['triton_ready']
    assert plan['checks'][0]['reason'] == '%s not ready (broken UNAVAILABLE)' % url
    plan = triton_plan([url], ['identity', 'broken'])
    assert plan['checks'][0]['reason'] == (
        '%s not ready (broken UNAVAILABLE); %s model broken not ready: Internal: RuntimeError: weights.bin: '
        'no such file (recorded failure)' % (url, url))


@pytest.mark.parametrize('model, reason', [
    ('missing', 'not in the repository index'),
    ('broken', 'in the repository, never loaded'),
])
def test_a_model_not_ready_on_a_ready_server(servers, model, reason):
    url = servers('ready')
    plan = triton_plan([url], ['identity', model])
    assert plan['labels'] == {}
    assert plan['checks'][0]['reason'] == '%s model %s not ready: %s' % (url, model, reason)


def test_every_endpoint_must_be_ready(servers):
    ready, degraded = servers('ready'), servers('degraded')
    dead = 'http://127.0.0.1:%d' % closed_port()
    plan = triton_plan([ready, dead, degraded], ['identity'])
    assert plan['labels'] == {}
    reason = plan['checks'][0]['reason'].split('; ')
    assert reason[0].startswith('%s not answering (GET /v2/health/live: ConnectionRefusedError' % dead)
    assert reason[1:] == ['%s not ready (broken UNAVAILABLE)' % degraded]


def test_what_was_not_read_does_not_pass(servers):
    url = servers('ready')
    plan = triton_plan([url], ['identity'], read_models=[])
    assert plan['checks'][0]['reason'] == '%s model identity not read (pass it to triton_info models)' % url
    plan = nl.plan({'triton_endpoints': [url]}, None, None, None)
    assert plan['labels'] == {} and plan['checks'][0]['reason'] == '%s not read (pass it to triton_info endpoints)' % url


def test_no_endpoints_no_check():
    assert nl.plan({'triton_endpoints': [], 'triton_models': []})['checks'] == []


def test_expect_errors():
    assert nl.expect_errors({'triton_endpoints': ['ftp://127.0.0.1:8000', 8000], 'triton_models': ['a', '']}) == [
        'k8s_node_labels_triton_endpoints[0] = "ftp://127.0.0.1:8000": unsupported URL scheme \'ftp\' in '
        '\'ftp://127.0.0.1:8000\' (e.g. http://127.0.0.1:8000)',
        'k8s_node_labels_triton_endpoints[1] = 8000: 8000 is not a URL string (e.g. http://127.0.0.1:8000)',
        'k8s_node_labels_triton_models = ["a", ""]: must be a list of model names',
    ]
    assert nl.expect_errors({'triton_models': ['identity']}) == [
        'k8s_node_labels_triton_models = ["identity"]: the models are checked on the endpoints of '
        'k8s_node_labels_triton_endpoints, which is empty; list the endpoints or leave the models out']
    assert nl.expect_errors({'triton_endpoints': '127.0.0.1:8000'}) == [
        'k8s_node_labels_triton_endpoints = "127.0.0.1:8000": must be a list of URLs']
    assert nl.expect_errors({'triton_endpoints': ['127.0.0.1:8000', 'http://[::1]:8000'], 'triton_models': ['a']}) == []
