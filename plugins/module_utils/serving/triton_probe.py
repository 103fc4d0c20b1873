# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Triton command line tried in a throwaway container before it replaces running servers.

``docker compose up`` stops the running containers before it starts the new ones: a wrong
server flag would leave a node with no server at all. ``probe(runner, ...)`` starts each new
command from the same image, with the model repository mounted read-only, on no network, and
``--model-control-mode=explicit`` appended (no model is loaded: the server parses its options,
opens its caches and backends' directories and starts its services within seconds), and waits
until the server says it started a service or the container exits. The container is removed
either way.

``started(log)`` and ``server_errors(log)`` read tritonserver's output; the roles use the same
rule for the containers' logs (filter ``triton_server_errors``).
"""

from __future__ import annotations

import re
import time

__all__ = ['PROBE_LABEL', 'started', 'server_errors', 'probe_args', 'probe']

PROBE_LABEL = 'org.inferops.probe=triton_compose'
# The last option wins in tritonserver's parser: appended, explicit mode loads no model.
EXPLICIT = '--model-control-mode=explicit'
_STARTED_RE = re.compile(r'Started (GRPCInferenceService|HTTPService|Metrics Service) at ')
# glog E-lines and unindented lines naming an error; tritonserver's usage text (printed after an
# option error) is indented and full of "error". A "service-1  | " prefix of compose logs is dropped.
_ERROR_RE = re.compile(r'(?i)(^E[0-9]{4} |unrecogni[sz]ed|invalid|\berror\b|failed|exception|traceback)')
_COMPOSE_PREFIX_RE = re.compile(r'^[A-Za-z0-9_.-]+ +[|] ?')
# CPU-only hosts: what tritonserver and the GPU libraries say on every start without a GPU is not an error.
_NOISE_RE = re.compile(r'Failed to initialize NVML|DCGM unable to start|CudaDriverHelper has not been initialized')


def started(log):
    """Whether tritonserver said it started one of its services (its options and repository were taken)."""
    return any(_STARTED_RE.search(line) for line in log.splitlines())


def server_errors(log, limit=20):
    """The error lines of a tritonserver log (at most the last ``limit``)."""
    lines = [_COMPOSE_PREFIX_RE.sub('', line) for line in log.splitlines()]
    errors = [line for line in lines if line and not line[0].isspace() and _ERROR_RE.search(line)
              and not _NOISE_RE.search(line)]
    return errors[-limit:]


def probe_args(image, command, volumes=(), environment=None, runtime=None, gpus=None):
    """``docker run`` arguments of the probe of one command (detached; removed by ``probe``)."""
    args = ['docker', 'run', '--detach', '--network', 'none', '--label', PROBE_LABEL]
    for volume in volumes:
        args.extend(['--volume', volume])
    for key in sorted(environment or {}):
        args.extend(['--env', '%s=%s' % (key, environment[key])])
    if runtime:
        args.extend(['--runtime', runtime])
    if gpus:
        args.extend(['--gpus', gpus])
    return args + [image] + list(command) + [EXPLICIT]


def probe(runner, name, args, timeout, interval=0.5, clock=time.monotonic, sleep=time.sleep):
    """Run one probe (``args`` from ``probe_args``); return ``{name, ok, seconds, exit_code, server_errors, log_tail, error}``."""
    begin = clock()
    result = {'name': name, 'ok': False, 'seconds': None, 'exit_code': None, 'server_errors': [], 'log_tail': [],
              'error': None}
    rc, out, err = runner.run(args)
    container = out.strip()
    if rc != 0 or not container:
        result['error'] = 'docker run: rc=%d %s' % (rc, (err or out).strip())
        return result
    try:
        while True:
            rc, out, err = runner.run(['docker', 'logs', container])
            log = out + err
            rc, state, err = runner.run(['docker', 'inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', container])
            running, _sep, code = state.strip().partition(' ')
            if started(log):
                result['ok'] = True
                break
            if running != 'true':
                result['exit_code'] = int(code) if code.lstrip('-').isdigit() else None
                result['error'] = 'the server exited (code %s) before it started a service' % code
                break
            if clock() - begin > timeout:
                result['error'] = 'the server started no service within %s s' % timeout
                break
            sleep(interval)
        result['seconds'] = round(clock() - begin, 1)
        result['server_errors'] = server_errors(log)
        result['log_tail'] = log.splitlines()[-40:]
    finally:
        runner.run(['docker', 'rm', '--force', container])
    return result
