#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: triton_warmup
short_description: Wait for a Triton server and warm its models up with low-QPS KServe v2 requests
description:
  - Waits until each endpoint's C(/v2/health/ready) and each model's ready endpoint answer
    HTTP 200, tolerating refused connections and "not ready" answers while the server
    loads its models.
  - Reads each model's metadata (C(GET /v2/models/<name>)) and sends KServe v2 JSON
    inference requests (C(POST /v2/models/<name>/infer)) at a low, fixed rate. Inputs
    are built from the metadata (datatype and shape; variable dimensions become
    O(dynamic_dim)) and carry different pseudo-random values in every request, so a
    response cache cannot absorb them.
  - Each model runs for O(duration) seconds, or less with O(until_stable) once the p99
    latency of consecutive windows of O(window) requests settles within O(p99_tolerance).
  - Returns p50, p95 and p99 latencies, request and error counts per endpoint and model,
    and fails when the error rate of a model exceeds O(max_error_rate).
  - Uses only the Python standard library (C(http.client)) on the target.
  - Endpoints and models are handled in one call, one after the other.
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
extends_documentation_fragment:
  - inferops.node.status_file
options:
  endpoints:
    description:
      - Base URLs of the Triton HTTP endpoints, for example V(http://127.0.0.1:8000).
      - One per server instance; each is gated and warmed in turn.
    type: list
    elements: str
    required: true
  models:
    description:
      - Names of the models to gate on and warm up.
      - When empty, the models listed by the server's repository index
        (C(POST /v2/repository/index)) are used, once the server is ready.
    type: list
    elements: str
    default: []
  model_version:
    description:
      - Model version to address. Empty means the server's default version policy.
    type: str
    default: ''
  ready_timeout:
    description:
      - Seconds to wait, per endpoint, for the server and every model to be ready.
    type: float
    default: 300
  ready_interval:
    description:
      - Seconds between readiness probes.
    type: float
    default: 1.0
  warmup:
    description:
      - Send warm-up requests. When V(false), the module only gates on readiness and
        reads the metadata (useful right after a deployment).
    type: bool
    default: true
  skip_warm:
    description:
      - Read each ready endpoint's statistics (C(GET /v2/models/stats)) and leave out of the
        warm-up traffic an endpoint whose every model has answered inference requests since the
        server started (Triton's counters start at zero with the server) - it is serving already,
        or was warmed since its last start. RV(ready) says C(warm) and C(answered) per endpoint.
      - With O(warmup=false), only reads and reports them (no model metadata, no RV(results)); a
        role asks this way, with O(ready_timeout=0), whether anything needs warming at all.
      - Statistics that cannot be read count as not warm.
    type: bool
    default: false
    version_added: 0.2.0
  duration:
    description:
      - Maximum seconds of warm-up traffic per model and endpoint. Must be greater than 0.
    type: float
    default: 30
  qps:
    description:
      - Requests per second per model (sequential, paced; a slow answer is not followed
        by a burst).
    type: float
    default: 2.0
  until_stable:
    description:
      - Stop a model's warm-up before O(duration) once its p99 latency has settled.
    type: bool
    default: false
  window:
    description:
      - Number of successful requests per stability window (p99 is computed per window).
    type: int
    default: 20
  p99_tolerance:
    description:
      - Relative difference between the p99 of two consecutive windows under which the
        latency counts as settled (V(0.1) is 10 %).
    type: float
    default: 0.1
  p99_tolerance_ms:
    description:
      - Absolute difference in milliseconds under which the p99 of two consecutive
        windows counts as settled, whatever the relative difference (sub-millisecond
        models jitter by more than any sensible percentage).
    type: float
    default: 1.0
  min_requests:
    description:
      - Fewest requests per model before O(until_stable) may stop the warm-up.
    type: int
    default: 40
  max_error_rate:
    description:
      - Highest accepted share of failed requests per model (V(0.01) is 1 %). Above it
        the module fails, after all models were warmed.
    type: float
    default: 0.01
  request_timeout:
    description:
      - Seconds to wait for one HTTP answer.
    type: float
    default: 30
  dynamic_dim:
    description:
      - Size used for each variable (C(-1)) dimension of an input, the batch dimension
        included.
    type: int
    default: 1
  seed:
    description:
      - Seed of the pseudo-random input values (runs with the same seed send the same data).
    type: int
    default: 0
  status_file:
    description:
      - Path of a JSON progress file, rewritten atomically every O(status_interval) seconds while
        the module runs (not in check mode), for an C(async) task followed by
        M(inferops.node.job_progress), which prints its C(line).
      - >-
        C(line) says what the module is doing - while waiting, the endpoint, the first check not ready
        yet with its reason and the seconds waited of O(ready_timeout), for example
        C(http://127.0.0.1:8000: waiting for ready - server not ready ... 42 s of 600); while warming,
        for example C(http://127.0.0.1:8000: model identity: 120 requests, 0 errors, p99 12.3 ms, 35 s of 60).
      - Other keys - C(state) (V(starting), V(waiting), V(ready), V(warming), V(done) or V(failed)),
        C(endpoint), C(endpoint_index), C(endpoints_total), C(model), C(pending) and C(reasons) (the checks
        not ready yet and why), C(attempts), C(requests), C(errors), C(p50_ms), C(p95_ms), C(p99_ms),
        C(min_ms), C(max_ms), C(mean_ms) (the current model's), C(requests_total), C(errors_total),
        C(phase_seconds) and C(phase_limit_seconds) (of the readiness wait or the model's traffic),
        C(elapsed_seconds), C(warmup), C(started_at), C(updated_at) (ISO 8601 UTC), C(updated_epoch),
        C(pid), and C(error) (null until V(failed)).
      - >-
        The last write, when the module ends, adds the module's own RV(ready) and RV(results), so the
        file keeps what the last warm-up found on the node (per model P50/P95/P99 and errors) for whoever
        reads it later - a verify step, an operator, the node_health check.
      - Its directory must exist.
    type: path
attributes:
  check_mode:
    description:
      - Each endpoint is probed once for readiness, without waiting and without sending
        inference requests; nothing fails when it is not ready. O(status_file) is not written.
    support: full
  diff_mode:
    description: Nothing is written, so there is no diff.
    support: none
  platform:
    description: Any POSIX target with Python; only the standard library is used.
    support: full
    platforms: posix
notes:
  - The module never reports a change; warm-up alters no configuration.
seealso:
  - module: inferops.node.job_progress
    description: Follows the module run as an C(async) job and prints the O(status_file) line on every poll.
  - name: KServe v2 inference protocol
    description: The HTTP/REST protocol Triton implements.
    link: https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/
'''

EXAMPLES = r'''
- name: Gate on two instances and warm both models for 30 s
  inferops.node.triton_warmup:
    endpoints:
      - http://127.0.0.1:8000
      - http://127.0.0.1:8100
    models: [resnet50, bert]
    duration: 30
    qps: 2

- name: Stop as soon as p99 settles within 10 %, at most 60 s
  inferops.node.triton_warmup:
    endpoints: [http://127.0.0.1:8000]
    duration: 60
    until_stable: true
    p99_tolerance: 0.1
  register: warm

- name: Only wait for readiness (slow-loading models), 10 minutes at most
  inferops.node.triton_warmup:
    endpoints: [http://127.0.0.1:8000]
    warmup: false
    ready_timeout: 600

- name: Ask once, without waiting, whether every server is ready and has answered since it started
  inferops.node.triton_warmup:
    endpoints: [http://127.0.0.1:8000, http://127.0.0.1:8100]
    warmup: false
    skip_warm: true
    ready_timeout: 0
  register: probe
  failed_when: false
  # every server warm: probe.cold == []; not ready yet: probe.not_ready

- name: Warm up as an async job (at most the 600 s wait plus 60 s of traffic and a margin)
  inferops.node.triton_warmup:
    endpoints: [http://127.0.0.1:8000]
    models: [identity]
    duration: 60
    ready_timeout: 600
    status_file: /run/inferops-warmup-traffic.json
  async: 720
  poll: 0
  register: warm_job

- name: Print its progress line every 5 s until it ends
  inferops.node.job_progress:
    jid: "{{ warm_job.ansible_job_id }}"
    status_file: /run/inferops-warmup-traffic.json
    label: warm-up
  register: warm_status
  until: warm_status.finished
  retries: 145
  delay: 5
'''

RETURN = r'''
requests:
  description: Requests sent, all endpoints and models.
  returned: always
  type: int
  sample: 120
errors:
  description: Failed requests, all endpoints and models.
  returned: always
  type: int
  sample: 0
error_rate:
  description: RV(errors) divided by RV(requests) (0 when nothing was sent).
  returned: always
  type: float
  sample: 0.0
p50_ms:
  description: Median latency of the successful requests of all models, in milliseconds.
  returned: always
  type: float
  sample: 1.92
p95_ms:
  description: 95th percentile latency, all models, in milliseconds.
  returned: always
  type: float
  sample: 3.4
p99_ms:
  description: 99th percentile latency, all models, in milliseconds.
  returned: always
  type: float
  sample: 7.8
seconds:
  description: Wall-clock seconds of the whole call.
  returned: always
  type: float
  sample: 61.2
ready:
  description: Readiness per endpoint (URL as key).
  returned: always
  type: dict
  sample:
    http://127.0.0.1:8000:
      ready: true
      seconds: 12.4
      attempts: 13
      models: [add, identity]
  contains:
    warm:
      description: Whether every model answered inference requests since the server started.
      type: bool
      returned: with O(skip_warm), for a ready endpoint
    answered:
      description: Inference requests answered since the server started, per model.
      type: dict
      returned: with O(skip_warm), for a ready endpoint
not_ready:
  description:
    - The endpoints not ready with every model when the module ended, in the order given; after a
      failed readiness wait also those not reached. With O(ready_timeout=0), what one probe found.
  returned: always
  type: list
  elements: str
  sample: []
cold:
  description:
    - The endpoints not ready or not warm (see O(skip_warm)), in the order given; all of them after
      a failed readiness wait.
  returned: with O(skip_warm)
  type: list
  elements: str
  sample: [http://127.0.0.1:8100]
status_file:
  description: The progress file, when O(status_file) was given (not in check mode).
  returned: when O(status_file) is set, not in check mode
  type: str
  sample: /run/inferops-warmup-traffic.json
results:
  description: One entry per endpoint and model.
  returned: always
  type: list
  elements: dict
  sample:
    - endpoint: http://127.0.0.1:8000
      model: identity
      requests: 60
      errors: 0
      error_rate: 0.0
      p50_ms: 1.9
      p95_ms: 3.1
      p99_ms: 4.0
      min_ms: 1.2
      max_ms: 4.2
      mean_ms: 2.1
      steady_p99_ms: 2.9
      settled: true
      seconds: 30.0
      inputs: [{name: INPUT0, datatype: FP32, shape: [1, 16]}]
      error_samples: []
  contains:
    endpoint:
      description: Endpoint URL.
      type: str
      returned: always
    model:
      description: Model name.
      type: str
      returned: always
    requests:
      description: Requests sent.
      type: int
      returned: always
    errors:
      description: Failed requests (transport errors and non-200 answers).
      type: int
      returned: always
    error_rate:
      description: Share of failed requests.
      type: float
      returned: always
    p50_ms:
      description: Median latency of the successful requests, in milliseconds.
      type: float
      returned: always
    p95_ms:
      description: 95th percentile latency, in milliseconds.
      type: float
      returned: always
    p99_ms:
      description: 99th percentile latency, in milliseconds.
      type: float
      returned: always
    min_ms:
      description: Lowest latency, in milliseconds.
      type: float
      returned: always
    max_ms:
      description: Highest latency, in milliseconds.
      type: float
      returned: always
    mean_ms:
      description: Mean latency, in milliseconds.
      type: float
      returned: always
    steady_p99_ms:
      description: p99 of the last complete window of O(window) requests (null before one).
      type: float
      returned: always
    settled:
      description: Whether the p99 settled within the tolerance.
      type: bool
      returned: always
    seconds:
      description: Seconds spent on this model.
      type: float
      returned: always
    inputs:
      description: Name, datatype and concrete shape of each input sent.
      type: list
      elements: dict
      returned: always
    error_samples:
      description: Up to five distinct error messages.
      type: list
      elements: str
      returned: always
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import (
    NotReady,
    StabilityTracker,
    TRANSIENT_ERRORS,
    TritonError,
    TritonHTTP,
    describe_exception,
    infer_request,
    summarize,
    answered_since_start,
    url_errors,
    wait_ready,
    WarmupProgress,
)
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import (
    ARGUMENT_SPEC as STATUS_ARGUMENT_SPEC,
    StatusWriter,
    option_problems,
)


def warm_model(client, model, params, clock=time.monotonic, sleep=time.sleep, progress=None):
    """Send paced inference requests to one model; return its result entry."""
    version = params['model_version']
    metadata = client.model_metadata(model, version)
    if progress is not None:
        progress.warming(model, params['duration'])
    path = client.model_path(model, version) + '/infer'
    tracker = StabilityTracker(params['window'], params['p99_tolerance'],
                               params['p99_tolerance_ms'], params['min_requests'])
    period = 1.0 / params['qps']
    latencies = []
    errors = 0
    samples = []
    seq = 0
    start = clock()
    next_at = start
    while True:
        body = infer_request(metadata, seq, params['dynamic_dim'], params['seed'])
        sent = clock()
        error = None
        try:
            status, payload = client.request('POST', path, body)
            if status != 200:
                error = 'HTTP %d: %s' % (status, payload.decode('utf-8', 'replace').strip()[:300])
        except TRANSIENT_ERRORS as exc:
            error = describe_exception(exc)
        latency_ms = (clock() - sent) * 1000.0
        seq += 1
        if progress is not None:
            progress.request(latency_ms, error)
        if error is None:
            latencies.append(latency_ms)
            tracker.add(latency_ms)
        else:
            errors += 1
            if error not in samples and len(samples) < 5:
                samples.append(error)
        now = clock()
        if now - start >= params['duration']:
            break
        if params['until_stable'] and tracker.settled:
            break
        next_at = max(next_at + period, now)
        remaining = min(next_at, start + params['duration']) - now
        if remaining > 0:
            sleep(remaining)
        if clock() - start >= params['duration']:
            break
    entry = {
        'endpoint': client.url,
        'model': model,
        'requests': seq,
        'errors': errors,
        'error_rate': round(errors / float(seq), 6) if seq else 0.0,
        'steady_p99_ms': round(tracker.window_p99[-1], 3) if tracker.window_p99 else None,
        'settled': tracker.settled,
        'seconds': round(clock() - start, 3),
        'inputs': [{'name': i['name'], 'datatype': i['datatype'], 'shape': i['shape']}
                   for i in body['inputs']],
        'error_samples': samples,
    }
    entry.update(summarize(latencies))
    return entry, latencies


def run(module, params, clock=time.monotonic, sleep=time.sleep, progress=None):
    """Body of the module, separated for tests. Returns ``(failed, msg, result)``.
    ``progress`` (a WarmupProgress) follows the readiness wait and the traffic, for the status file."""
    started = clock()
    result = {'changed': False, 'ready': {}, 'results': [], 'requests': 0, 'errors': 0,
              'error_rate': 0.0}
    all_latencies = []
    failures = []
    for url in params['endpoints']:
        client = TritonHTTP(url, timeout=params['request_timeout'])
        try:
            if module.check_mode:
                ok, reason = client.is_ok('/v2/health/ready')
                result['ready'][url] = {'ready': ok, 'reason': reason, 'seconds': 0.0,
                                        'attempts': 1, 'models': list(params['models'])}
                continue
            if progress is not None:
                progress.waiting(url, params['ready_timeout'])
            try:
                ready = wait_ready(client, params['models'], params['ready_timeout'],
                                   params['ready_interval'], clock=clock, sleep=sleep,
                                   version=params['model_version'], progress=progress)
            except NotReady as exc:
                result['ready'][url] = dict(exc.details, ready=False)
                result.update(summarize(all_latencies))
                return True, str(exc), result
            if progress is not None:
                progress.set_state('ready')
            models = list(params['models'])
            if not models:
                try:
                    models = sorted(set(e['name'] for e in client.repository_index()
                                        if e.get('state', 'READY') == 'READY'))
                except TritonError as exc:
                    result.update(summarize(all_latencies))
                    return True, '%s: cannot list models: %s' % (url, exc), result
            ready['models'] = models
            ready['ready'] = True
            result['ready'][url] = ready
            if params['skip_warm']:
                try:
                    ready['answered'] = answered_since_start(client, models, params['model_version'])
                except TritonError as exc:
                    ready['answered'], ready['stats_error'] = {}, str(exc)
                ready['warm'] = bool(models) and all(ready['answered'].get(m) for m in models)
                if ready['warm'] or not params['warmup']:
                    continue  # serving already (no traffic of ours), or only asked whether it is
            for model in models:
                if not params['warmup']:
                    try:
                        metadata = client.model_metadata(model, params['model_version'])
                    except TritonError as exc:
                        result.update(summarize(all_latencies))
                        return True, '%s: model %s: %s' % (url, model, exc), result
                    result['results'].append({
                        'endpoint': url, 'model': model, 'requests': 0, 'errors': 0,
                        'error_rate': 0.0, 'steady_p99_ms': None, 'settled': False,
                        'seconds': 0.0, 'error_samples': [],
                        'inputs': [{'name': i['name'], 'datatype': i['datatype'], 'shape': i['shape']}
                                   for i in metadata.get('inputs') or []],
                    })
                    result['results'][-1].update(summarize([]))
                    continue
                try:
                    entry, latencies = warm_model(client, model, params, clock=clock, sleep=sleep,
                                                  progress=progress)
                except (TritonError, ValueError, KeyError) as exc:
                    result.update(summarize(all_latencies))
                    return True, '%s: model %s: %s' % (url, model, exc), result
                result['results'].append(entry)
                all_latencies.extend(latencies)
                result['requests'] += entry['requests']
                result['errors'] += entry['errors']
                if entry['error_rate'] > params['max_error_rate']:
                    failures.append('%s model %s: error rate %.4f > %.4f (%d of %d failed; %s)' % (
                        url, model, entry['error_rate'], params['max_error_rate'], entry['errors'],
                        entry['requests'], '; '.join(entry['error_samples'])))
        finally:
            client.close()
    if result['requests']:
        result['error_rate'] = round(result['errors'] / float(result['requests']), 6)
    result.update(summarize(all_latencies))
    result['seconds'] = round(clock() - started, 3)
    if failures:
        return True, 'warm-up error rate too high: ' + ' | '.join(failures), result
    return False, None, result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            endpoints=dict(type='list', elements='str', required=True),
            models=dict(type='list', elements='str', default=[]),
            model_version=dict(type='str', default=''),
            ready_timeout=dict(type='float', default=300),
            ready_interval=dict(type='float', default=1.0),
            warmup=dict(type='bool', default=True),
            skip_warm=dict(type='bool', default=False),
            duration=dict(type='float', default=30),
            qps=dict(type='float', default=2.0),
            until_stable=dict(type='bool', default=False),
            window=dict(type='int', default=20),
            p99_tolerance=dict(type='float', default=0.1),
            p99_tolerance_ms=dict(type='float', default=1.0),
            min_requests=dict(type='int', default=40),
            max_error_rate=dict(type='float', default=0.01),
            request_timeout=dict(type='float', default=30),
            dynamic_dim=dict(type='int', default=1),
            seed=dict(type='int', default=0),
            **STATUS_ARGUMENT_SPEC
        ),
        supports_check_mode=True,
    )
    params = module.params
    problems = []
    if not params['endpoints']:
        problems.append('endpoints must not be empty')
    for name in ('duration', 'qps', 'request_timeout', 'ready_interval'):
        if params[name] <= 0:
            problems.append('%s must be greater than 0 (got %s)' % (name, params[name]))
    if params['ready_timeout'] < 0:
        problems.append('ready_timeout must not be negative (got %s)' % params['ready_timeout'])
    if params['window'] < 2:
        problems.append('window must be at least 2 (got %s)' % params['window'])
    if params['dynamic_dim'] < 1:
        problems.append('dynamic_dim must be at least 1 (got %s)' % params['dynamic_dim'])
    if not 0 <= params['max_error_rate'] <= 1:
        problems.append('max_error_rate must be between 0 and 1 (got %s)' % params['max_error_rate'])
    if params['p99_tolerance'] < 0 or params['p99_tolerance_ms'] < 0:
        problems.append('p99_tolerance and p99_tolerance_ms must not be negative')
    problems += ['endpoints: %s' % p for url in params['endpoints'] for p in url_errors(url)]
    problems += [problem for dummy, problem in option_problems(params)]
    if problems:
        module.fail_json(msg='; '.join(problems))

    progress = status = None
    if params['status_file'] and not module.check_mode:
        progress = WarmupProgress(len(params['endpoints']))
        status = StatusWriter(params['status_file'], progress, params['status_interval'],
                              extra={'warmup': params['warmup']})
        status.start()
    failed, msg, result = True, 'unexpected error, see the task result', {}
    try:
        failed, msg, result = run(module, params, progress=progress)
    finally:
        # The last write keeps the outcome with the progress: per model percentiles and readiness.
        final = dict(ready=result.get('ready', {}), results=result.get('results', []))
        if status is not None and failed:
            progress.fail(msg)
            status.stop(state='failed', **final)
        elif status is not None:
            status.stop(state='done', **final)
    result['not_ready'] = [url for url in params['endpoints'] if not result['ready'].get(url, {}).get('ready')]
    if params['skip_warm']:
        result['cold'] = [url for url in params['endpoints'] if not result['ready'].get(url, {}).get('warm')]
    if status is not None:
        result['status_file'] = params['status_file']
        if status.error:
            module.warn('could not write status_file %s' % status.error)
    if failed:
        module.fail_json(msg=msg, **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
