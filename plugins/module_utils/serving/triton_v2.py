# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small KServe v2 (Triton) HTTP client and latency statistics, standard library only.

Used by the ``triton_warmup`` module on the target: ``http.client`` with one persistent
connection per endpoint, readiness gating that tolerates a server which is not
listening yet (connection refused while models load), request inputs built from the
model metadata and varied per request, and percentile / stability helpers.
Used by the ``triton_info`` module: ``endpoint_info`` reads, once and without waiting,
liveness, readiness, the server metadata, the repository index and the readiness of
given models; ``not_serving`` says from its result why endpoints do not serve given models, and
``url_errors`` is the endpoint URL rule (both also the k8s_node_labels role's, for triton_ready);
``index_states`` is the state of every model of a read repository index (the node audit's serving.models).
``answered_since_start`` counts each model's answered requests since the server started (is it warm?).
``WarmupProgress`` is what ``triton_warmup`` is doing (the readiness wait, the traffic per model), as the
snapshot its status file is written from (module_utils.status_file).
"""

from __future__ import annotations

import http.client
import json
import math
import random
import string
import threading
import time
from urllib.parse import quote, urlsplit

__all__ = [
    'TritonError', 'NotReady', 'TritonHTTP', 'wait_ready', 'build_inputs',
    'infer_request', 'percentile', 'summarize', 'StabilityTracker', 'element_count',
    'endpoint_info', 'index_states', 'not_serving', 'url_errors', 'NEVER_LOADED', 'NOT_IN_INDEX',
    'WarmupProgress', 'warmup_time_limit', 'answered_since_start',
]

# Errors that mean "the server is not (yet) answering"; readiness gating retries them.
# (connection refused/reset, timeouts and malformed or cut answers).
TRANSIENT_ERRORS = (OSError, http.client.HTTPException)

INT_RANGES = {
    'INT8': (-128, 127), 'INT16': (-32768, 32767), 'INT32': (-2 ** 31, 2 ** 31 - 1),
    'INT64': (-2 ** 63, 2 ** 63 - 1), 'UINT8': (0, 255), 'UINT16': (0, 65535),
    'UINT32': (0, 2 ** 32 - 1), 'UINT64': (0, 2 ** 64 - 1),
}
FLOAT_TYPES = ('FP16', 'FP32', 'FP64', 'BF16')

# Why a model does not serve, when the repository index says no more than its name, or not even that.
NEVER_LOADED = 'in the repository, never loaded'
NOT_IN_INDEX = 'not in the repository index'


class TritonError(Exception):
    """An HTTP exchange failed: transport error or a non-2xx status."""

    def __init__(self, message, status=None, body=None):
        super(TritonError, self).__init__(message)
        self.status = status
        self.body = body


class NotReady(Exception):
    """Readiness was not reached within the timeout."""

    def __init__(self, message, details):
        super(NotReady, self).__init__(message)
        self.details = details


class TritonHTTP(object):
    """One persistent HTTP/1.1 connection to a Triton (KServe v2) endpoint."""

    def __init__(self, url, timeout=30.0):
        parts = urlsplit(url if '://' in url else 'http://' + url)
        if parts.scheme not in ('http', 'https'):
            raise ValueError('unsupported URL scheme %r in %r' % (parts.scheme, url))
        if not parts.hostname:
            raise ValueError('no host in URL %r' % url)
        self.url = url
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == 'https' else 80)
        self.prefix = parts.path.rstrip('/')
        self.timeout = timeout
        self._conn = None

    def close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _connection(self):
        if self._conn is None:
            cls = http.client.HTTPSConnection if self.scheme == 'https' else http.client.HTTPConnection
            self._conn = cls(self.host, self.port, timeout=self.timeout)
        return self._conn

    def request(self, method, path, body=None):
        """Send one request; return ``(status, body_bytes)``. Transport errors raise."""
        headers = {'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body, separators=(',', ':')).encode('utf-8')
            headers['Content-Type'] = 'application/json'
        conn = self._connection()
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except Exception:
            self.close()
            raise
        if resp.getheader('Connection', '').lower() == 'close':
            self.close()
        return resp.status, payload

    def get_json(self, method, path, body=None):
        """Request and decode JSON; a non-2xx status raises ``TritonError`` with the server's error."""
        try:
            status, payload = self.request(method, path, body)
        except TRANSIENT_ERRORS as exc:
            raise TritonError('%s %s: %s' % (method, path, describe_exception(exc)))
        text = payload.decode('utf-8', 'replace')
        if status // 100 != 2:
            message = text
            try:
                message = json.loads(text).get('error', text)
            except (ValueError, AttributeError):
                pass
            raise TritonError('%s %s: HTTP %d: %s' % (method, path, status, message), status, text)
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            raise TritonError('%s %s: answer is not JSON: %r' % (method, path, text[:200]), status, text)

    def is_ok(self, path):
        """True when GET ``path`` answers 200; ``(False, reason)`` otherwise."""
        try:
            status, payload = self.request('GET', path)
        except TRANSIENT_ERRORS as exc:
            return False, describe_exception(exc)
        if status == 200:
            return True, None
        return False, 'HTTP %d %s' % (status, payload.decode('utf-8', 'replace').strip()[:200])

    def model_path(self, model, version=''):
        path = '/v2/models/' + quote(model, safe='')
        if version:
            path += '/versions/' + quote(str(version), safe='')
        return path

    def server_metadata(self):
        return self.get_json('GET', '/v2')

    def repository_index(self):
        return self.get_json('POST', '/v2/repository/index', {}) or []

    def model_metadata(self, model, version=''):
        return self.get_json('GET', self.model_path(model, version))


def url_errors(url):
    """Problems of an endpoint URL as ``TritonHTTP`` takes it (empty list = usable)."""
    if not isinstance(url, str):
        return ['%r is not a URL string' % (url,)]
    try:
        TritonHTTP(url)
    except ValueError as exc:
        return [str(exc)]
    return []


def _index_entry(entry):
    # Triton leaves out what a model does not have: in explicit model control a model that was
    # never loaded is listed by name only, and only a failed or unloaded one has a reason.
    return dict((key, entry.get(key)) for key in ('name', 'version', 'state', 'reason'))


def _served(entries):
    """The entry of a model's READY version among its index ``entries`` (the default version policy serves
    the READY one(s)), else the first; None for none."""
    return next((e for e in entries if e['state'] == 'READY'), entries[0] if entries else None)


def _model_info(client, index, model, version):
    """``index`` is None when it could not be read."""
    ok, answer = client.is_ok(client.model_path(model, version) + '/ready')
    named = [e for e in index or [] if e['name'] == model]
    listed = [e for e in named if not version or e['version'] == str(version)]
    # An asked version has one entry at most.
    entry = _served(listed)
    # Triton answers "Model version not ready" for a failed, an unloaded and an unknown model
    # alike: the index tells them apart, and its reason is the load error.
    if ok:
        reason = None
    elif index is not None and not named:
        reason = NOT_IN_INDEX
    elif index is not None and not listed:
        reason = 'version %s not in the repository index' % version
    elif entry and entry['reason']:
        reason = entry['reason']
    elif entry and entry['state'] is None:
        reason = NEVER_LOADED
    else:
        reason = answer
    return {'name': model, 'version': version, 'ready': ok,
            'in_repository': bool(named) if index is not None else None,
            'state': entry['state'] if entry else None, 'reason': reason}


def index_states(index, models=()):
    """``[{name, version, state, reason}]`` of every model of a repository ``index`` (as ``endpoint_info``
    reads it), then of each of ``models`` it does not list: the READY version's if one is; ``reason`` is None
    for a READY one, else the index's reason (the load error's first line), ``NEVER_LOADED``, the state
    (LOADING, UNLOADING) or ``NOT_IN_INDEX``."""
    names = []
    for name in [e['name'] for e in index] + list(models):
        if name not in names:
            names.append(name)
    out = []
    for name in names:
        entry = _served([e for e in index if e['name'] == name])
        if entry is None:
            reason = NOT_IN_INDEX
        elif entry['state'] == 'READY':
            reason = None
        else:
            reason = _first_line(entry['reason']) or (NEVER_LOADED if entry['state'] is None else entry['state'])
        out.append({'name': name, 'version': entry['version'] if entry else None,
                    'state': entry['state'] if entry else None, 'reason': reason})
    return out


def endpoint_info(client, models=(), version=''):
    """One read of an endpoint, no waiting: what ``triton_info`` returns for it.

    ``reachable`` - the server answered HTTP at all (when not, ``errors`` says why and nothing else
    is read, every model is not ready); ``live`` / ``ready`` - ``/v2/health/live`` / ``ready`` answered 200; ``server`` - name,
    version and extensions of ``GET /v2``; ``index`` - ``POST /v2/repository/index`` (name, version,
    state, reason, None where Triton leaves them out); ``models`` - per model of ``models``, its ready
    endpoint (at ``version``, empty: the version policy's) and its index state. A read that fails
    after the server answered leaves its part None and its message in ``errors``.
    """
    info = {'url': client.url, 'reachable': False, 'errors': [], 'live': False, 'ready': False,
            'server': None, 'index': None, 'models': []}
    try:
        status, _payload = client.request('GET', '/v2/health/live')
    except TRANSIENT_ERRORS as exc:
        info['errors'].append('GET /v2/health/live: %s' % describe_exception(exc))
        info['models'] = [{'name': model, 'version': version, 'ready': False, 'in_repository': None,
                           'state': None, 'reason': 'the endpoint did not answer'} for model in models]
        return info
    info['reachable'] = True
    info['live'] = status == 200
    info['ready'] = client.is_ok('/v2/health/ready')[0]
    try:
        meta = client.server_metadata() or {}
        info['server'] = dict((key, meta.get(key)) for key in ('name', 'version', 'extensions'))
    except TritonError as exc:
        info['errors'].append(str(exc))
    try:
        info['index'] = [_index_entry(e) for e in client.repository_index()]
    except TritonError as exc:
        info['errors'].append(str(exc))
    info['models'] = [_model_info(client, info['index'], model, version) for model in models]
    return info


def _first_line(text):
    # Triton's load errors carry the Python traceback after the message.
    return (text or '').strip().split('\n', 1)[0]


def not_serving(result, endpoints, models=()):
    """Why ``endpoints`` do not all serve ``models``, from a ``triton_info`` result (None: not run): one
    message per problem (empty list = every endpoint live and ready, every model ready on each)."""
    read = dict((e.get('url'), e) for e in (result or {}).get('endpoints') or [])
    problems = []
    for url in endpoints:
        info = read.get(url)
        if info is None:
            problems.append('%s not read (pass it to triton_info endpoints)' % url)
            continue
        if not info.get('reachable'):
            problems.append('%s not answering (%s)' % (url, '; '.join(info.get('errors') or [])))
            continue
        if not (info.get('live') and info.get('ready')):
            # Strict readiness: a server is not ready while one of its models failed to load - name them.
            failed = ['%s %s' % (e.get('name'), e.get('state')) for e in info.get('index') or []
                      if e.get('state') not in (None, 'READY')]
            problems.append('%s not %s%s' % (url, 'ready' if info.get('live') else 'live',
                                             ' (%s)' % ', '.join(failed) if failed else ''))
        asked = dict((m.get('name'), m) for m in info.get('models') or [])
        for model in models:
            if model not in asked:
                problems.append('%s model %s not read (pass it to triton_info models)' % (url, model))
            elif not asked[model].get('ready'):
                problems.append('%s model %s not ready: %s' % (url, model, _first_line(asked[model].get('reason'))))
    return problems


def answered_since_start(client, models, version=''):
    """Inference requests each of ``models`` answered since the server started, ``{model: count}``.

    From Triton's statistics (``GET /v2/models/stats``: ``inference_stats.success.count`` of every loaded
    version, counters that start at zero with the server). A model the statistics do not list counts 0;
    ``version`` narrows to that version. Raises ``TritonError`` when the statistics cannot be read.
    """
    counts = dict((model, 0) for model in models)
    answer = client.get_json('GET', '/v2/models/stats') or {}
    for entry in answer.get('model_stats') or []:
        name = entry.get('name')
        if name not in counts or (version and str(entry.get('version')) != str(version)):
            continue
        success = ((entry.get('inference_stats') or {}).get('success') or {}).get('count') or 0
        counts[name] += int(success)
    return counts


def describe_exception(exc):
    name = type(exc).__name__
    text = str(exc)
    return '%s: %s' % (name, text) if text else name


def wait_ready(client, models, timeout, interval=1.0, clock=time.monotonic, sleep=time.sleep,
               version='', progress=None):
    """Wait until ``/v2/health/ready`` and each model's ready endpoint answer 200.

    Connection errors and non-200 answers are retried until ``timeout`` seconds have
    passed. ``models`` may be empty: then only the server's readiness is awaited.
    Returns a dict ``{seconds, attempts, models}``; raises ``NotReady`` (with the last
    reason for each pending check and the repository index, when it could be read).
    ``progress`` (a WarmupProgress) is told what is still pending after every attempt.
    """
    start = clock()
    attempts = 0
    pending = ['server'] + list(models)
    reasons = {}
    while True:
        attempts += 1
        still = []
        for item in pending:
            path = '/v2/health/ready' if item == 'server' else client.model_path(item, version) + '/ready'
            ok, reason = client.is_ok(path)
            if not ok:
                reasons[item] = reason
                still.append(item)
                if item == 'server':
                    # Models cannot be ready before the server answers at all.
                    still.extend(m for m in pending if m != 'server')
                    break
            else:
                reasons.pop(item, None)
        pending = still
        elapsed = clock() - start
        if progress is not None:
            progress.not_ready(pending, reasons, attempts)
        if not pending:
            return {'seconds': round(elapsed, 3), 'attempts': attempts, 'models': list(models)}
        if elapsed >= timeout:
            details = {'pending': pending, 'reasons': reasons, 'seconds': round(elapsed, 3),
                       'attempts': attempts, 'index': None}
            try:
                details['index'] = client.repository_index()
            except TritonError:
                pass
            raise NotReady(_not_ready_message(client.url, timeout, details), details)
        sleep(min(interval, max(0.0, timeout - elapsed)))


def _not_ready_message(url, timeout, details):
    parts = []
    for item in details['pending']:
        reason = details['reasons'].get(item)
        label = 'server' if item == 'server' else 'model %s' % item
        parts.append('%s: %s' % (label, reason or 'not ready'))
    for entry in details.get('index') or []:
        if entry.get('state') not in (None, 'READY') and entry.get('reason'):
            parts.append('model %s %s: %s' % (entry.get('name'), entry.get('state'), entry.get('reason')))
    return '%s not ready after %ss (%s)' % (url, timeout, '; '.join(parts))


def element_count(shape):
    count = 1
    for dim in shape:
        count *= dim
    return count


def _concrete_shape(shape, dynamic_dim):
    return [dynamic_dim if int(dim) < 0 else int(dim) for dim in shape]


def _values(rng, datatype, count):
    if datatype == 'BOOL':
        return [rng.random() < 0.5 for dummy in range(count)]
    if datatype in INT_RANGES:
        low, high = INT_RANGES[datatype]
        # Small magnitudes: many models take indices or token ids.
        return [rng.randint(max(low, 0), min(high, 1000)) for dummy in range(count)]
    if datatype in FLOAT_TYPES:
        return [round(rng.uniform(-1.0, 1.0), 6) for dummy in range(count)]
    if datatype == 'BYTES':
        alphabet = string.ascii_lowercase + string.digits
        return [''.join(rng.choice(alphabet) for dummy in range(12)) for dummy2 in range(count)]
    raise ValueError('unsupported datatype %s' % datatype)


def build_inputs(metadata, seq, dynamic_dim=1, seed=0):
    """KServe v2 JSON ``inputs`` for request number ``seq``, from the model metadata.

    Variable dimensions (-1) become ``dynamic_dim``. Values are pseudo-random, derived
    from ``seed`` and ``seq``: every request carries different data, so a response cache
    cannot answer it, while a run stays reproducible.
    """
    rng = random.Random('%s/%s/%s' % (seed, metadata.get('name', ''), seq))
    inputs = []
    for spec in metadata.get('inputs') or []:
        shape = _concrete_shape(spec.get('shape') or [], dynamic_dim)
        datatype = spec.get('datatype')
        inputs.append({
            'name': spec['name'],
            'shape': shape,
            'datatype': datatype,
            'data': _values(rng, datatype, element_count(shape)),
        })
    return inputs


def infer_request(metadata, seq, dynamic_dim=1, seed=0):
    return {'id': 'inferops-warmup-%d' % seq,
            'inputs': build_inputs(metadata, seq, dynamic_dim, seed)}


def percentile(samples, q):
    """Percentile ``q`` (0-100) with linear interpolation between closest ranks."""
    if not samples:
        return None
    data = sorted(samples)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * (q / 100.0)
    low = int(math.floor(pos))
    high = int(math.ceil(pos))
    if low == high:
        return data[low]
    return data[low] + (data[high] - data[low]) * (pos - low)


def summarize(latencies_ms):
    """p50/p95/p99/min/max/mean in milliseconds (rounded to microseconds)."""
    def r(value):
        return None if value is None else round(value, 3)
    return {
        'p50_ms': r(percentile(latencies_ms, 50)),
        'p95_ms': r(percentile(latencies_ms, 95)),
        'p99_ms': r(percentile(latencies_ms, 99)),
        'min_ms': r(min(latencies_ms)) if latencies_ms else None,
        'max_ms': r(max(latencies_ms)) if latencies_ms else None,
        'mean_ms': r(sum(latencies_ms) / len(latencies_ms)) if latencies_ms else None,
    }


class StabilityTracker(object):
    """Decides when p99 latency has settled.

    Latencies are cut into consecutive windows of ``window`` requests; p99 is taken over
    each window. The run is settled when the p99 of the last window differs from the
    previous window's by at most ``tolerance`` (relative) or ``tolerance_ms`` (absolute,
    for sub-millisecond jitter), once at least ``min_requests`` requests were sent.
    """

    def __init__(self, window=20, tolerance=0.1, tolerance_ms=1.0, min_requests=0):
        if window < 2:
            raise ValueError('window must be at least 2')
        self.window = window
        self.tolerance = tolerance
        self.tolerance_ms = tolerance_ms
        self.min_requests = min_requests
        self.count = 0
        self._current = []
        self.window_p99 = []

    def add(self, latency_ms):
        """Record one successful request; return True when settled."""
        self.count += 1
        self._current.append(latency_ms)
        if len(self._current) >= self.window:
            self.window_p99.append(percentile(self._current, 99))
            self._current = []
        return self.settled

    @property
    def settled(self):
        if self.count < self.min_requests or len(self.window_p99) < 2:
            return False
        prev, last = self.window_p99[-2], self.window_p99[-1]
        delta = abs(last - prev)
        return delta <= self.tolerance_ms or delta <= self.tolerance * prev


class WarmupProgress(object):
    """What triton_warmup is doing, shared between the module's thread and the status writer's.

    The module calls ``waiting`` / ``not_ready`` (from wait_ready) / ``warming`` / ``request``
    (from warm_model); ``snapshot()`` is the status file's content, with a human ``line``:
    ``http://127.0.0.1:8000: waiting for ready - server not ready (ConnectionRefusedError: ...), 42 s of 600``,
    ``http://127.0.0.1:8000: model identity: 120 requests, 0 errors, p99 12.3 ms, 35 s of 60``.
    """

    def __init__(self, endpoints_total):
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.endpoints_total = endpoints_total
        self.state = 'starting'
        self.endpoint = None
        self.endpoint_index = 0
        self.model = None
        self.pending = []
        self.reasons = {}
        self.attempts = 0
        self.phase_started = self.started
        self.phase_limit = None
        self.requests = 0
        self.errors = 0
        self.latencies = []
        self.totals = {'requests': 0, 'errors': 0}
        self.error = None

    def waiting(self, url, timeout):
        with self.lock:
            self._phase('waiting', timeout)
            self.endpoint = url
            self.endpoint_index += 1
            self.model = None

    def not_ready(self, pending, reasons, attempts):
        with self.lock:
            self.pending = list(pending)
            self.reasons = dict(reasons)
            self.attempts = attempts

    def warming(self, model, duration):
        with self.lock:
            self._phase('warming', duration)
            self.model = model
            self.requests = 0
            self.errors = 0
            self.latencies = []

    def request(self, latency_ms, error):
        with self.lock:
            self.requests += 1
            self.totals['requests'] += 1
            if error:
                self.errors += 1
                self.totals['errors'] += 1
            else:
                self.latencies.append(latency_ms)

    def set_state(self, state):
        with self.lock:
            self.state = state

    def fail(self, error):
        """The module's failure message, shown in the last line (state failed)."""
        with self.lock:
            self.state = 'failed'
            self.error = error

    def _phase(self, state, limit):
        self.state = state
        self.phase_started = time.monotonic()
        self.phase_limit = limit
        self.pending = []
        self.reasons = {}
        self.attempts = 0

    def snapshot(self):
        with self.lock:
            now = time.monotonic()
            status = {
                'state': self.state,
                'endpoint': self.endpoint,
                'endpoint_index': self.endpoint_index,
                'endpoints_total': self.endpoints_total,
                'model': self.model,
                'pending': list(self.pending),
                'reasons': dict(self.reasons),
                'attempts': self.attempts,
                'requests': self.requests,
                'errors': self.errors,
                'requests_total': self.totals['requests'],
                'errors_total': self.totals['errors'],
                'phase_seconds': round(now - self.phase_started, 1),
                'phase_limit_seconds': self.phase_limit,
                'elapsed_seconds': round(now - self.started, 1),
                'error': self.error,
            }
            status.update(summarize(self.latencies))
        status['line'] = _progress_line(status)
        return status


def _progress_line(status):
    state = status['state']
    if state == 'failed' and status['error']:
        return 'failed after %s s: %s' % (status['elapsed_seconds'], _first_line(status['error'])[:300])
    if state == 'starting':
        return 'starting'
    if state in ('done', 'failed') or not status['endpoint']:
        return '%s: %d requests, %d errors, %s s' % (state, status['requests_total'], status['errors_total'],
                                                     status['elapsed_seconds'])
    where = status['endpoint']
    if status['endpoints_total'] > 1:
        where = 'endpoint %d/%d %s' % (status['endpoint_index'], status['endpoints_total'], where)
    of = '%d s of %g' % (status['phase_seconds'], status['phase_limit_seconds']) if status['phase_limit_seconds'] is not None \
        else '%d s' % status['phase_seconds']
    if state == 'waiting':
        if not status['pending']:
            return '%s: waiting for ready, %s' % (where, of)
        first = status['pending'][0]
        label = 'server' if first == 'server' else 'model %s' % first
        more = ' (+%d more)' % (len(status['pending']) - 1) if first != 'server' and len(status['pending']) > 1 else ''
        reason = _first_line(status['reasons'].get(first))
        return '%s: waiting for ready - %s not ready (%s)%s, %s' % (where, label, reason[:200] or 'not ready', more, of)
    if state == 'ready':
        return '%s: ready, reading the models' % where
    p99 = '?' if status['p99_ms'] is None else '%.1f ms' % status['p99_ms']
    return '%s: model %s: %d requests, %d errors, p99 %s, %s' % (
        where, status['model'], status['requests'], status['errors'], p99, of)


def warmup_time_limit(endpoints, ready_timeout, models, duration, request_timeout=30.0):
    """Seconds an async triton_warmup job may run: per endpoint its readiness wait and, per model, the warm-up
    duration, each with two request timeouts of slack (a probe or the metadata read, and a model's last
    request). ``models``: how many models are warmed on each endpoint (at least one is counted)."""
    slack = int(2 * request_timeout)
    per_model = int(math.ceil(float(duration) + slack))
    return int(endpoints) * (int(ready_timeout) + slack + max(int(models), 1) * per_model)
