# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""triton_probe on tritonserver's own output (tests/unit/fixtures/triton/logs, recorded by record_logs.sh):
a start with the probe's options and the exit after an unknown flag. The docker CLI is replayed by a runner
that answers each command and records it, so every command the probe runs is asserted."""

from __future__ import annotations

import gzip
import os

from ansible_collections.inferops.node.plugins.module_utils.serving import triton_probe

LOGS = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'triton', 'logs')


def log(name):
    # bogus_flag.log is kept gzipped (record_logs.sh): its usage text has Unicode quotes.
    path = os.path.join(LOGS, name)
    if os.path.exists(path + '.gz'):
        with gzip.open(path + '.gz', 'rt', encoding='utf-8') as handle:
            return handle.read()
    with open(path) as handle:
        return handle.read()


class Docker(object):
    """Answers `docker run/logs/inspect/rm` from a script of (running, log) states, one per poll."""

    def __init__(self, states, run_rc=0):
        self.states = list(states)
        self.run_rc = run_rc
        self.log = []

    def run(self, args, changes=False, data=None):
        self.log.append(args)
        if args[1] == 'run':
            return (self.run_rc, '' if self.run_rc else 'c0ffee\n', 'Unable to find image' if self.run_rc else '')
        if args[1] == 'logs':
            return 0, self.states[0][1], ''
        if args[1] == 'inspect':
            running, code = self.states[0][0]
            if len(self.states) > 1:
                self.states.pop(0)
            return 0, '%s %d\n' % ('true' if running else 'false', code), ''
        return 0, 'c0ffee\n', ''


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_started_reads_the_services_lines():
    assert triton_probe.started(log('started_explicit.log'))
    assert not triton_probe.started(log('bogus_flag.log'))
    # Before the services: the option table only.
    head = log('started_explicit.log').split('Started ')[0]
    assert not triton_probe.started(head)


def test_server_errors_leave_out_the_usage_text_and_the_gpu_noise():
    errors = triton_probe.server_errors(log('bogus_flag.log'))
    assert len(errors) == 1 and errors[0].endswith("unrecognized option '--bogus-flag=1'")
    # A CPU-only host's "CudaDriverHelper has not been initialized", "Error: Failed to initialize NVML" and
    # the DCGM warning on every start are not the server's errors.
    assert triton_probe.server_errors(log('started_explicit.log')) == []


def test_server_errors_of_compose_logs_drop_the_service_prefix():
    text = '\n'.join('triton-a-1  | ' + line for line in log('bogus_flag.log').splitlines())
    errors = triton_probe.server_errors(text)
    assert len(errors) == 1 and errors[0].endswith("unrecognized option '--bogus-flag=1'")


def test_probe_args_append_explicit_mode_and_mount_the_repository_read_only():
    args = triton_probe.probe_args('img:1', ['tritonserver', '--model-repository=/models'], ['/srv/m:/models:ro'],
                                   {'B': '2', 'A': '1'}, 'nvidia', '"device=0,1"')
    assert args == ['docker', 'run', '--detach', '--network', 'none', '--label', 'org.inferops.probe=triton_compose',
                    '--volume', '/srv/m:/models:ro', '--env', 'A=1', '--env', 'B=2', '--runtime', 'nvidia',
                    '--gpus', '"device=0,1"', 'img:1', 'tritonserver', '--model-repository=/models',
                    '--model-control-mode=explicit']


def test_probe_passes_once_the_server_started_and_removes_the_container():
    head = log('started_explicit.log').split('Started ')[0]
    docker, clock = Docker([((True, 0), head), ((True, 0), log('started_explicit.log'))]), Clock()
    result = triton_probe.probe(docker, 'triton-a', ['docker', 'run', 'x'], 60, clock=clock, sleep=clock.sleep)
    assert result['ok'] and result['error'] is None and result['server_errors'] == []
    assert result['seconds'] == 0.5
    assert [a[:2] for a in docker.log] == [['docker', 'run'], ['docker', 'logs'], ['docker', 'inspect'],
                                           ['docker', 'logs'], ['docker', 'inspect'], ['docker', 'rm']]
    assert docker.log[-1] == ['docker', 'rm', '--force', 'c0ffee']


def test_probe_fails_with_the_servers_error_when_it_exits():
    docker, clock = Docker([((False, 1), log('bogus_flag.log'))]), Clock()
    result = triton_probe.probe(docker, 'triton-a', ['docker', 'run', 'x'], 60, clock=clock, sleep=clock.sleep)
    assert not result['ok'] and result['exit_code'] == 1
    assert result['error'] == 'the server exited (code 1) before it started a service'
    assert result['server_errors'][0].endswith("unrecognized option '--bogus-flag=1'")
    assert docker.log[-1] == ['docker', 'rm', '--force', 'c0ffee']


def test_probe_gives_up_after_the_timeout_and_still_removes_the_container():
    head = log('started_explicit.log').split('Started ')[0]
    docker, clock = Docker([((True, 0), head)]), Clock()
    result = triton_probe.probe(docker, 'triton-a', ['docker', 'run', 'x'], 3, clock=clock, sleep=clock.sleep)
    assert not result['ok'] and result['error'] == 'the server started no service within 3 s'
    assert docker.log[-1] == ['docker', 'rm', '--force', 'c0ffee']


def test_probe_reports_a_container_that_never_ran():
    docker = Docker([], run_rc=125)
    result = triton_probe.probe(docker, 'triton-a', ['docker', 'run', 'x'], 3)
    assert not result['ok'] and result['error'] == 'docker run: rc=125 Unable to find image'
    assert len(docker.log) == 1
