# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for triton_warmup and module_utils.triton_v2.

The HTTP side runs against a small KServe v2 server started in-process on 127.0.0.1
(a stand-in for Triton that answers the endpoints the module uses, with knobs for slow
readiness, failing models and errors). The real tritonserver is exercised by
molecule/serving.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.inferops.node.plugins.module_utils.serving import triton_v2
from ansible_collections.inferops.node.plugins.modules import triton_warmup
from ansible_collections.inferops.node.tests.unit.status_file_reader import read_status_while
from ansible_collections.inferops.node.tests.unit.triton_replay import RecordedTriton, closed_port, serve, stop


METADATA = {
    'add': {
        'name': 'add', 'versions': ['1'], 'platform': 'python',
        'inputs': [{'name': 'A', 'datatype': 'FP32', 'shape': [-1, 8]},
                   {'name': 'B', 'datatype': 'INT64', 'shape': [-1, 8]}],
        'outputs': [{'name': 'SUM', 'datatype': 'FP32', 'shape': [-1, 8]}],
    },
    'text': {
        'name': 'text', 'versions': ['1'], 'platform': 'python',
        'inputs': [{'name': 'S', 'datatype': 'BYTES', 'shape': [2]},
                   {'name': 'F', 'datatype': 'BOOL', 'shape': [3]}],
        'outputs': [{'name': 'O', 'datatype': 'BYTES', 'shape': [2]}],
    },
}


class FakeTriton(object):
    """In-process KServe v2 stand-in. Attributes are the knobs tests turn."""

    def __init__(self, port=0):
        self.ready_after = 0          # number of /v2/health/ready probes answered 503 first
        self.model_ready_after = {}  # model -> probes answered 400 first
        self.fail_every = 0          # every Nth inference answers 500
        self.unavailable = {}        # model -> reason (never ready)
        self.delay = 0.0
        self.probes = 0
        self.model_probes = {}
        self.infer_bodies = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                parts = self.path.strip('/').split('/')
                if self.path == '/v2/health/ready':
                    with fake.lock:
                        fake.probes += 1
                        ok = fake.probes > fake.ready_after
                    return self._send(200 if ok else 503, {} if ok else {'error': 'loading'})
                if parts[:2] == ['v2', 'models'] and len(parts) >= 3:
                    model = parts[2]
                    if model not in METADATA:
                        return self._send(400, {'error': "Request for unknown model: '%s'" % model})
                    if parts[-1] == 'ready':
                        with fake.lock:
                            n = fake.model_probes[model] = fake.model_probes.get(model, 0) + 1
                        ok = model not in fake.unavailable and n > fake.model_ready_after.get(model, 0)
                        return self._send(200 if ok else 400, {} if ok else {'error': 'not ready'})
                    return self._send(200, METADATA[model])
                return self._send(404, {'error': 'not found'})

            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(length) or b'{}')
                if self.path == '/v2/repository/index':
                    index = [{'name': m, 'version': '1', 'state': 'READY'} for m in sorted(METADATA)]
                    for model, reason in fake.unavailable.items():
                        index.append({'name': model, 'version': '1', 'state': 'UNAVAILABLE',
                                      'reason': reason})
                    return self._send(200, index)
                parts = self.path.strip('/').split('/')
                if parts[:2] == ['v2', 'models'] and parts[-1] == 'infer':
                    with fake.lock:
                        fake.infer_bodies.append(body)
                        n = len(fake.infer_bodies)
                    if fake.delay:
                        time.sleep(fake.delay)
                    if fake.fail_every and n % fake.fail_every == 0:
                        return self._send(500, {'error': 'injected failure'})
                    return self._send(200, {'model_name': parts[2], 'outputs': []})
                return self._send(404, {'error': 'not found'})

        self.server, self.url = serve(Handler, port)

    def stop(self):
        stop(self.server)


@pytest.fixture
def fake():
    server = FakeTriton()
    yield server
    server.stop()


class AnsibleExit(Exception):
    pass


class AnsibleFail(Exception):
    pass


def run_module(monkeypatch, args, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    monkeypatch.setattr(basic, '_ANSIBLE_ARGS', to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args})))
    monkeypatch.setattr(basic, '_ANSIBLE_PROFILE', 'legacy', raising=False)
    results = {}

    def exit_json(self, **kwargs):
        results.update(kwargs)
        raise AnsibleExit()

    def fail_json(self, **kwargs):
        kwargs['failed'] = True
        results.update(kwargs)
        raise AnsibleFail()

    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', exit_json)
    monkeypatch.setattr(basic.AnsibleModule, 'fail_json', fail_json)
    with pytest.raises((AnsibleExit, AnsibleFail)):
        triton_warmup.main()
    return results


# --- module_utils: statistics and inputs -----------------------------------------

def test_percentile_linear_interpolation():
    data = list(range(1, 101))
    assert triton_v2.percentile(data, 50) == pytest.approx(50.5)
    assert triton_v2.percentile(data, 99) == pytest.approx(99.01)
    assert triton_v2.percentile([7.0], 99) == 7.0
    assert triton_v2.percentile([], 50) is None


def test_summarize_empty_and_values():
    assert triton_v2.summarize([])['p99_ms'] is None
    s = triton_v2.summarize([1.0, 2.0, 3.0, 4.0])
    assert s['p50_ms'] == 2.5 and s['min_ms'] == 1.0 and s['max_ms'] == 4.0 and s['mean_ms'] == 2.5


def test_stability_tracker_settles_after_two_close_windows():
    tracker = triton_v2.StabilityTracker(window=5, tolerance=0.1, tolerance_ms=0.0, min_requests=10)
    for value in [50, 40, 30, 20, 10]:   # cold window
        assert not tracker.add(value)
    for value in [5, 5, 5, 5, 5]:        # p99 dropped from ~49.6 to 5: not settled
        assert not tracker.add(value)
    for value in [5, 5, 5, 5, 5.2]:      # within 10 % of the previous window
        tracker.add(value)
    assert tracker.settled
    assert len(tracker.window_p99) == 3


def test_stability_tracker_absolute_tolerance_and_min_requests():
    tracker = triton_v2.StabilityTracker(window=2, tolerance=0.0, tolerance_ms=1.0, min_requests=6)
    for value in [1.0, 1.1, 1.5, 1.6]:
        tracker.add(value)
    assert not tracker.settled           # close enough, but only 4 of 6 requests
    tracker.add(1.2)
    tracker.add(1.3)
    assert tracker.settled
    with pytest.raises(ValueError):
        triton_v2.StabilityTracker(window=1)


def test_build_inputs_follow_metadata_and_vary_per_request():
    first = triton_v2.build_inputs(METADATA['add'], 0, dynamic_dim=3)
    second = triton_v2.build_inputs(METADATA['add'], 1, dynamic_dim=3)
    assert [i['shape'] for i in first] == [[3, 8], [3, 8]]
    assert [i['datatype'] for i in first] == ['FP32', 'INT64']
    assert len(first[0]['data']) == 24 and all(isinstance(v, float) for v in first[0]['data'])
    assert all(isinstance(v, int) for v in first[1]['data'])
    assert first[0]['data'] != second[0]['data']
    # Same seed and sequence number: same data (reproducible runs).
    assert triton_v2.build_inputs(METADATA['add'], 0, dynamic_dim=3) == first
    assert triton_v2.build_inputs(METADATA['add'], 0, dynamic_dim=3, seed=1) != first


def test_build_inputs_bytes_and_bool():
    inputs = triton_v2.build_inputs(METADATA['text'], 5)
    assert all(isinstance(v, str) and len(v) == 12 for v in inputs[0]['data'])
    assert all(isinstance(v, bool) for v in inputs[1]['data'])
    with pytest.raises(ValueError):
        triton_v2.build_inputs({'inputs': [{'name': 'X', 'datatype': 'COMPLEX', 'shape': [1]}]}, 0)


def test_int_values_stay_in_range():
    meta = {'name': 'u8', 'inputs': [{'name': 'X', 'datatype': 'INT8', 'shape': [500]}]}
    values = triton_v2.build_inputs(meta, 0)[0]['data']
    assert all(0 <= v <= 127 for v in values)


def test_client_rejects_bad_url():
    with pytest.raises(ValueError):
        triton_v2.TritonHTTP('ftp://example.invalid')
    assert triton_v2.TritonHTTP('127.0.0.1:8000').port == 8000


# --- readiness gating --------------------------------------------------------------

def test_wait_ready_tolerates_connection_refused_then_gets_ready():
    port = closed_port()
    client = triton_v2.TritonHTTP('http://127.0.0.1:%d' % port, timeout=2)
    started = {}

    def late_start():
        time.sleep(0.6)
        started['server'] = FakeTriton(port)   # the server comes up late

    thread = threading.Thread(target=late_start)
    thread.start()
    try:
        result = triton_v2.wait_ready(client, ['add'], timeout=10, interval=0.1)
    finally:
        thread.join()
        client.close()
        if 'server' in started:
            started['server'].stop()
    assert result['attempts'] > 1
    assert result['seconds'] >= 0.5


def test_wait_ready_waits_for_slow_model(fake):
    fake.ready_after = 2
    fake.model_ready_after = {'text': 3}
    client = triton_v2.TritonHTTP(fake.url)
    result = triton_v2.wait_ready(client, ['add', 'text'], timeout=10, interval=0.01)
    client.close()
    assert fake.model_probes['text'] == 4
    assert result['attempts'] >= 4


def test_wait_ready_timeout_reports_index_reason(fake):
    fake.unavailable = {'broken': 'failed to load: ModuleNotFoundError'}
    METADATA['broken'] = {'name': 'broken', 'inputs': []}
    try:
        client = triton_v2.TritonHTTP(fake.url)
        with pytest.raises(triton_v2.NotReady) as err:
            triton_v2.wait_ready(client, ['add', 'broken'], timeout=0.3, interval=0.05)
        client.close()
    finally:
        del METADATA['broken']
    assert 'model broken' in str(err.value)
    assert 'ModuleNotFoundError' in str(err.value)
    assert err.value.details['pending'] == ['broken']


def test_wait_ready_refused_timeout_message():
    client = triton_v2.TritonHTTP('http://127.0.0.1:%d' % closed_port(), timeout=1)
    with pytest.raises(triton_v2.NotReady) as err:
        triton_v2.wait_ready(client, ['add'], timeout=0.2, interval=0.05)
    assert 'ConnectionRefusedError' in str(err.value)
    assert err.value.details['pending'] == ['server', 'add']


# --- the module ---------------------------------------------------------------------

def test_module_warms_all_indexed_models(monkeypatch, fake):
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'duration': 0.5, 'qps': 40})
    assert not result.get('failed'), result
    assert result['changed'] is False
    assert [r['model'] for r in result['results']] == ['add', 'text']
    assert result['requests'] == sum(r['requests'] for r in result['results'])
    assert result['requests'] >= 10 and result['errors'] == 0
    assert result['p50_ms'] <= result['p95_ms'] <= result['p99_ms']
    assert result['results'][0]['inputs'][0] == {'name': 'A', 'datatype': 'FP32', 'shape': [1, 8]}
    # Every request differs (a response cache cannot answer them).
    add_bodies = [json.dumps(b['inputs']) for b in fake.infer_bodies if b['inputs'][0]['name'] == 'A']
    assert len(set(add_bodies)) == len(add_bodies)


def test_module_paces_requests(monkeypatch, fake):
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add'],
                                      'duration': 1.0, 'qps': 5})
    # Paced: about qps x duration requests, not as many as the server can answer. The upper
    # bound on the time only catches a runaway loop (a loaded CI box slows every request).
    assert 4 <= result['requests'] <= 6
    assert 0.9 <= result['results'][0]['seconds'] < 10


def test_module_until_stable_stops_early(monkeypatch, fake):
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add'], 'duration': 30,
                                      'qps': 200, 'until_stable': True, 'window': 5,
                                      'min_requests': 10, 'p99_tolerance_ms': 60000})
    # Any two windows are within a minute of each other, so the warm-up must stop at the
    # first point it may: two full windows, min_requests reached - whatever the load on
    # the machine running the test (a 50 ms tolerance failed in CI at load 8).
    entry = result['results'][0]
    assert entry['settled'] is True
    assert entry['requests'] == 10
    assert entry['seconds'] < 30


def test_module_fails_on_error_rate(monkeypatch, fake):
    fake.fail_every = 2
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add'],
                                      'duration': 0.3, 'qps': 50, 'max_error_rate': 0.1})
    assert result['failed']
    assert 'error rate' in result['msg'] and 'injected failure' in result['msg']
    assert result['errors'] >= 1
    assert result['results'][0]['error_samples']


def test_module_tolerates_error_rate_below_threshold(monkeypatch, fake):
    fake.fail_every = 4
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add'],
                                      'duration': 0.4, 'qps': 50, 'max_error_rate': 0.5})
    assert not result.get('failed'), result
    assert result['errors'] >= 1


def test_module_readiness_only(monkeypatch, fake):
    fake.ready_after = 1
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add', 'text'],
                                      'warmup': False, 'ready_interval': 0.05})
    assert not result.get('failed'), result
    assert result['requests'] == 0 and not fake.infer_bodies
    assert result['ready'][fake.url]['ready'] is True
    assert result['results'][1]['inputs'][0]['datatype'] == 'BYTES'


def test_module_not_ready_fails_with_reason(monkeypatch):
    url = 'http://127.0.0.1:%d' % closed_port()
    result = run_module(monkeypatch, {'endpoints': [url], 'ready_timeout': 0.3, 'ready_interval': 0.1})
    assert result['failed']
    assert 'not ready after' in result['msg'] and 'ConnectionRefusedError' in result['msg']
    assert result['ready'][url]['ready'] is False


def test_module_unknown_model_fails(monkeypatch, fake):
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['nope'],
                                      'ready_timeout': 0.2, 'ready_interval': 0.05})
    assert result['failed']
    assert 'model nope' in result['msg']


def test_module_check_mode_probes_once(monkeypatch, fake):
    down = 'http://127.0.0.1:%d' % closed_port()
    result = run_module(monkeypatch, {'endpoints': [fake.url, down]}, check_mode=True)
    assert not result.get('failed'), result
    assert result['ready'][fake.url]['ready'] is True
    assert result['ready'][down]['ready'] is False
    assert result['requests'] == 0 and not fake.infer_bodies


@pytest.mark.parametrize('args, text', [
    ({'duration': 0}, 'duration must be greater than 0'),
    ({'duration': -5}, 'duration must be greater than 0'),
    ({'qps': 0}, 'qps must be greater than 0'),
    ({'window': 1}, 'window must be at least 2'),
    ({'max_error_rate': 2}, 'max_error_rate must be between 0 and 1'),
    ({'endpoints': ['ftp://x']}, 'unsupported URL scheme'),
    ({'endpoints': []}, 'endpoints must not be empty'),
    ({'status_interval': 0}, 'status_interval must be greater than 0'),
])
def test_module_rejects_bad_parameters(monkeypatch, args, text):
    params = {'endpoints': ['http://127.0.0.1:1']}
    params.update(args)
    result = run_module(monkeypatch, params)
    assert result['failed']
    assert text in result['msg']


# --- progress (status_file) ---------------------------------------------------------

class RecordingProgress(triton_v2.WarmupProgress):
    """The real WarmupProgress, keeping the line of every snapshot taken after a wait_ready attempt."""

    def __init__(self, *args, **kwargs):
        super(RecordingProgress, self).__init__(*args, **kwargs)
        self.lines = []

    def not_ready(self, pending, reasons, attempts):
        super(RecordingProgress, self).not_ready(pending, reasons, attempts)
        self.lines.append(self.snapshot()['line'])


def test_progress_names_what_readiness_waits_for(fake):
    fake.ready_after = 2
    fake.model_ready_after = {'text': 2}
    progress = RecordingProgress(2)
    progress.waiting(fake.url, 10)
    client = triton_v2.TritonHTTP(fake.url)
    triton_v2.wait_ready(client, ['add', 'text'], timeout=10, interval=0.01, progress=progress)
    client.close()
    prefix = 'endpoint 1/2 %s: waiting for ready - ' % fake.url
    assert progress.lines[0].startswith(prefix + 'server not ready (HTTP 503 {"error": "loading"}), 0 s of 10')
    assert progress.lines[2].startswith(prefix + 'model text not ready (HTTP 400 {"error": "not ready"}), 0 s of 10')
    assert progress.lines[-1] == 'endpoint 1/2 %s: waiting for ready, 0 s of 10' % fake.url
    status = progress.snapshot()
    assert status['state'] == 'waiting' and status['pending'] == [] and status['attempts'] == len(progress.lines)


def test_progress_of_refused_connections_names_the_error():
    url = 'http://127.0.0.1:%d' % closed_port()
    progress = RecordingProgress(1)
    progress.waiting(url, 0.2)
    client = triton_v2.TritonHTTP(url, timeout=1)
    with pytest.raises(triton_v2.NotReady):
        triton_v2.wait_ready(client, ['add'], timeout=0.2, interval=0.05, progress=progress)
    assert progress.lines[0].startswith('%s: waiting for ready - server not ready (ConnectionRefusedError: ' % url)
    assert progress.lines[0].endswith('0 s of 0.2')
    assert progress.snapshot()['pending'] == ['server', 'add']


def test_module_status_file_follows_the_wait_and_the_traffic(monkeypatch, tmp_path):
    port = closed_port()
    url = 'http://127.0.0.1:%d' % port
    path = str(tmp_path / 'traffic.json')
    started = {}

    def late_start():
        time.sleep(0.5)
        started['server'] = FakeTriton(port)   # refused connections first, as while tritonserver starts

    thread = threading.Thread(target=late_start)
    thread.start()
    try:
        result, seen = read_status_while(path, lambda: run_module(monkeypatch, {
            'endpoints': [url], 'models': ['add', 'text'], 'duration': 0.5, 'qps': 20, 'ready_timeout': 10,
            'ready_interval': 0.05, 'status_file': path, 'status_interval': 0.02}))
    finally:
        thread.join()
        started['server'].stop()
    assert not result.get('failed'), result
    assert result['status_file'] == path
    lines = [s['line'] for s in seen]
    assert any(line.startswith('%s: waiting for ready - server not ready (ConnectionRefusedError: ' % url)
               and line.endswith(' s of 10') for line in lines), lines
    warming = [s for s in seen if s['state'] == 'warming' and s['requests'] > 0]
    assert set(s['model'] for s in warming) == set(['add', 'text']), lines
    assert any(warming_line(s['line'], url) for s in warming), lines
    final = json.loads(open(path).read())
    assert final['state'] == 'done' and final['warmup'] is True
    assert final['requests_total'] == result['requests'] and final['errors_total'] == 0
    assert final['line'].startswith('done: %d requests, 0 errors, ' % result['requests'])
    for key in ('started_at', 'updated_at', 'updated_epoch', 'pid', 'elapsed_seconds'):
        assert key in final
    # The last write keeps the module's outcome: readiness and per model percentiles.
    assert final['ready'] == result['ready'] and final['results'] == result['results']
    assert sorted(r['model'] for r in final['results']) == ['add', 'text']
    assert all(r['p99_ms'] is not None and r['errors'] == 0 for r in final['results'])
    assert sorted(p.name for p in tmp_path.iterdir()) == ['traffic.json']


def warming_line(line, url):
    return re.match(r'^%s: model (add|text): [1-9][0-9]* requests, 0 errors, p99 [0-9.]+ ms, [0-9]+ s of 0\.5$'
                    % re.escape(url), line)


def test_module_status_file_says_failed(monkeypatch, tmp_path):
    url = 'http://127.0.0.1:%d' % closed_port()
    path = tmp_path / 'traffic.json'
    result = run_module(monkeypatch, {'endpoints': [url], 'ready_timeout': 0.2, 'ready_interval': 0.05,
                                      'status_file': str(path)})
    assert result['failed'] and 'not ready after' in result['msg']
    final = json.loads(path.read_text())
    assert final['state'] == 'failed' and final['error'] == result['msg']
    assert final['line'] == 'failed after %s s: %s' % (final['elapsed_seconds'], result['msg'])
    assert final['ready'] == result['ready'] and final['ready'][url]['ready'] is False


def test_module_status_file_not_written_in_check_mode(monkeypatch, fake, tmp_path):
    path = tmp_path / 'traffic.json'
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'status_file': str(path)}, check_mode=True)
    assert not result.get('failed'), result
    assert 'status_file' not in result and not path.exists()


@pytest.mark.parametrize('status_file, text', [
    ('/nonexistent/inferops/traffic.json', 'status_file: directory /nonexistent/inferops does not exist'),
    ('/', 'status_file: / is a directory'),
])
def test_module_rejects_bad_status_file(monkeypatch, status_file, text):
    result = run_module(monkeypatch, {'endpoints': ['http://127.0.0.1:1'], 'status_file': status_file})
    assert result['failed'] and text in result['msg']


# --- skip_warm: what a real tritonserver's statistics say (fixtures/triton) -------------------

@pytest.mark.parametrize('state, warm, answered', [('served', True, 1), ('serving', False, 0)])
def test_skip_warm_reads_whether_each_model_answered_since_the_start(monkeypatch, state, warm, answered):
    server = RecordedTriton(state)
    try:
        result = run_module(monkeypatch, {'endpoints': [server.url], 'models': ['identity'], 'warmup': False,
                                          'skip_warm': True, 'ready_timeout': 0})
    finally:
        server.stop()
    assert not result.get('failed'), result
    ready = result['ready'][server.url]
    assert ready['ready'] is True and ready['warm'] is warm and ready['answered'] == {'identity': answered}
    assert result['cold'] == ([] if warm else [server.url]) and result['not_ready'] == []
    # Asked, not warmed: no metadata read, no inference sent.
    assert result['results'] == [] and server.unrecorded == []


def test_skip_warm_sends_no_traffic_to_a_server_that_answered_since_its_start(monkeypatch):
    server = RecordedTriton('served')
    try:
        result = run_module(monkeypatch, {'endpoints': [server.url], 'models': ['identity'], 'skip_warm': True,
                                          'duration': 1, 'ready_timeout': 0})
    finally:
        server.stop()
    assert not result.get('failed'), result
    assert result['ready'][server.url]['warm'] is True
    assert result['requests'] == 0 and result['results'] == []
    assert [path for _method, path in server.requests if path.endswith('/infer')] == []


def test_skip_warm_a_model_missing_from_the_statistics_is_not_warm(monkeypatch):
    # degraded: broken never loaded - the statistics list identity only, so the server is not warm.
    server = RecordedTriton('degraded')
    try:
        counts = triton_v2.answered_since_start(triton_v2.TritonHTTP(server.url), ['identity', 'broken'])
    finally:
        server.stop()
    assert counts == {'identity': 0, 'broken': 0}


def test_skip_warm_unreadable_statistics_count_as_not_warm(monkeypatch, fake):
    # The stand-in has no statistics endpoint (it takes 'stats' for a model name): warm up as without skip_warm.
    result = run_module(monkeypatch, {'endpoints': [fake.url], 'models': ['add'], 'skip_warm': True,
                                      'duration': 0.3, 'qps': 20})
    assert not result.get('failed'), result
    ready = result['ready'][fake.url]
    assert ready['warm'] is False and ready['stats_error'].startswith('GET /v2/models/stats: HTTP 400')
    assert result['cold'] == [fake.url]
    assert result['requests'] > 0


def test_skip_warm_a_server_not_ready_yet_is_cold(monkeypatch):
    url = 'http://127.0.0.1:%d' % closed_port()
    result = run_module(monkeypatch, {'endpoints': [url], 'warmup': False, 'skip_warm': True, 'ready_timeout': 0})
    assert result['failed'] and result['ready'][url]['ready'] is False
    assert result['cold'] == [url] and result['not_ready'] == [url]
