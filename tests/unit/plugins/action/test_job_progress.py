# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_progress on what a real page_cache job returned (tests/unit/fixtures/job_progress)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
from unittest.mock import MagicMock

import pytest

from ansible.playbook.task import Task
from ansible_collections.inferops.node.plugins.action import job_progress

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'job_progress')


def fixture(name):
    with open(os.path.join(FIXTURES, name + '.json')) as handle:
        return json.load(handle)


RUNNING_FILE = 'running'
JOB_KEYS = ('finished', 'started', 'results_file', 'stdout', 'stderr', 'stdout_lines', 'stderr_lines', 'attempts')


def job_file(state):
    """What the job's results file holds: async_wrapper's first write while the job runs, then the module's result
    (the recorded async_status answer without what async_status and its action added)."""
    if state == RUNNING_FILE:
        return json.dumps({'started': True, 'finished': False, 'ansible_job_id': fixture('async_status_running')['ansible_job_id']})
    return json.dumps(dict((k, v) for k, v in fixture('async_status_finished').items() if k not in JOB_KEYS))


def status_text(name):
    """The status file's text, from the recorded slurp of it."""
    slurped = fixture(name)
    return base64.b64decode(slurped['content']).decode('utf-8') if 'content' in slurped else None


def action(args, monkeypatch, jobs, statuses=None, tmp=None):
    """The action against real files: each read (one shell command, run here) finds the next of ``jobs`` in the job's
    results file (None: no file) and of ``statuses`` in the status file; async_status answers as recorded.
    Returns (action, calls, lines)."""
    task = Task()
    task.args = args
    task.action = 'inferops.node.job_progress'
    plugin = job_progress.ActionModule(task, MagicMock(), MagicMock(), loader=None, templar=None,
                                       shared_loader_obj=None)
    calls, lines = [], []
    async_dir = tempfile.mkdtemp(dir=tmp)
    plugin.get_shell_option = lambda option, default=None: async_dir
    plugin._remote_expand_user = lambda path, sudoable=True: path
    plugin._connection._shell.join_path = os.path.join
    jobs, statuses = list(jobs), list(statuses or [])

    def low_level(command, sudoable=True):
        job = jobs.pop(0) if len(jobs) > 1 else jobs[0]
        path = os.path.join(async_dir, args['jid'])
        if job is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            with open(path, 'w') as handle:
                handle.write(job_file(job) if job in (RUNNING_FILE, 'finished') else job)
        if args.get('status_file'):
            status = statuses.pop(0) if len(statuses) > 1 else (statuses[0] if statuses else None)
            if status is None:
                if os.path.exists(args['status_file']):
                    os.unlink(args['status_file'])
            else:
                with open(args['status_file'], 'w') as handle:
                    handle.write(status)
        calls.append('read')
        done = subprocess.run(['sh', '-c', command], capture_output=True, text=True, check=False)
        # As ssh -tt gives it (a terminal's CRLF line ends): what a lab guest answered.
        return {'rc': done.returncode, 'stdout': done.stdout.replace('\n', '\r\n'), 'stderr': done.stderr}

    def execute(module_name, module_args, task_vars):
        calls.append((module_name, module_args))
        assert module_name == 'ansible.legacy.async_status'
        return fixture('async_status_finished')
    plugin._low_level_execute_command = low_level
    plugin._execute_module = execute
    monkeypatch.setattr(job_progress.display, 'display', lines.append)
    return plugin, calls, lines


def test_running_job_prints_its_line(monkeypatch, tmp_path):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, lines = action({'jid': jid, 'status_file': str(tmp_path / 'status.json'), 'label': 'page cache'},
                                  monkeypatch, [RUNNING_FILE], [status_text('slurp_running')])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    # One shell command read both files; no module ran on the host.
    assert calls == ['read']
    assert lines == ['node1: page cache: reading 22.66 % (2.34 GiB of 10.34 GiB, 6/14 files, 0.922 GB/s, '
                     'eta 9.4 s, 4.21 s elapsed)']
    assert result['finished'] is False and result['started'] is True and result['changed'] is False
    assert result['progress']['state'] == 'reading'


def test_finished_job_keeps_its_result_and_says_so(monkeypatch, tmp_path):
    jid = fixture('async_status_finished')['ansible_job_id']
    plugin, calls, lines = action({'jid': jid, 'status_file': str(tmp_path / 'status.json')}, monkeypatch,
                                  ['finished'], [status_text('slurp_finished')])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert lines[0].startswith('node1: progress: done ') and lines[0].endswith(' - job finished')
    # The ended job's result through async_status, once.
    assert calls[0] == 'read' and calls[1][0] == 'ansible.legacy.async_status' and len(calls) == 2
    assert result['finished'] is True and result['changed'] is False
    # page_cache's own result comes with it: the role reads total from it.
    assert result['total']['files'] == 14 and result['job_changed'] is True


@pytest.mark.parametrize('status', [None, '{"state":'])  # no file yet; a file caught half-written
def test_no_status_yet(monkeypatch, tmp_path, status):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, dummy, lines = action({'jid': jid, 'status_file': str(tmp_path / 'status.json')}, monkeypatch,
                                  [RUNNING_FILE], [status])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert lines == ['node1: progress: no status yet'] and result['progress'] == {}


@pytest.mark.parametrize('job', ['', '{"started": tr'])  # the wrapper has not written it yet, or is writing it
def test_a_results_file_not_written_yet_is_a_running_job(monkeypatch, job):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, lines = action({'jid': jid}, monkeypatch, [job])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['finished'] is False and result['started'] is True and calls == ['read']
    assert lines == ['node1: progress: running']


def test_a_job_without_results_file_is_asked_of_async_status(monkeypatch):
    # async_status says "could not find job" (failed): its answer is the task's.
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, dummy = action({'jid': jid}, monkeypatch, [None])
    answers = {'failed': True, 'msg': 'could not find job', 'ansible_job_id': jid, 'started': True, 'finished': True}
    plugin._execute_module = lambda module_name, module_args, task_vars: calls.append(module_name) or dict(answers)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert calls == ['read', 'ansible.legacy.async_status']
    assert result['failed'] and result['msg'] == 'could not find job'


def test_without_status_file_reads_only_the_job(monkeypatch):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, lines = action({'jid': jid}, monkeypatch, [RUNNING_FILE])
    plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert calls == ['read'] and lines == ['node1: progress: running']


class Clock(object):
    """time.monotonic and time.sleep of the action: sleeping moves the clock, nothing waits."""

    def __init__(self, monkeypatch):
        self.now = 100.0
        self.slept = []
        monkeypatch.setattr(job_progress.time, 'monotonic', lambda: self.now)
        monkeypatch.setattr(job_progress.time, 'sleep', self.sleep)

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_wait_returns_once_the_job_has_finished(monkeypatch, tmp_path):
    jid = fixture('async_status_running')['ansible_job_id']
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': jid, 'status_file': str(tmp_path / 'status.json'), 'wait': 5},
                                  monkeypatch, [RUNNING_FILE, RUNNING_FILE, 'finished'], [status_text('slurp_finished')])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    # Read three times, a second apart, then the result once: two seconds, not the whole five.
    assert calls[:3] == ['read'] * 3 and calls[3][0] == 'ansible.legacy.async_status' and len(calls) == 4
    assert clock.slept == [1.0, 1.0]
    assert result['finished'] is True and lines[0].endswith(' - job finished')


def test_wait_ends_with_the_job_still_running(monkeypatch):
    jid = fixture('async_status_running')['ansible_job_id']
    clock = Clock(monkeypatch)
    plugin, calls, dummy = action({'jid': jid, 'wait': 2.5}, monkeypatch, [RUNNING_FILE])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert clock.slept == [1.0, 1.0, 0.5] and calls == ['read'] * 4 and result['finished'] is False


def test_negative_wait_is_refused(monkeypatch):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, dummy = action({'jid': jid, 'wait': -1}, monkeypatch, [RUNNING_FILE])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['msg'] == 'wait = -1.0: must be 0 or more seconds' and calls == []


def test_timeout_follows_the_job_to_its_end_a_line_per_wait(monkeypatch, tmp_path):
    jid = fixture('async_status_running')['ansible_job_id']
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': jid, 'status_file': str(tmp_path / 'status.json'), 'wait': 2,
                                   'timeout': 60, 'label': 'page cache'}, monkeypatch,
                                  [RUNNING_FILE] * 4 + ['finished'],
                                  [status_text('slurp_running')] * 4 + [status_text('slurp_finished')])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    # One task: the first two-second poll prints the running line, the second ends with the job - no retry loop.
    assert len(lines) == 2 and lines[0].startswith('node1: page cache: reading 22.66 %')
    assert lines[-1].endswith(' - job finished') and result['finished'] is True and not result.get('failed')
    assert calls.count('read') == 5 and len(calls) == 6 and clock.slept == [1.0, 1.0, 1.0]
    assert result['total']['files'] == 14


def test_timeout_fails_with_the_job_still_running(monkeypatch):
    jid = fixture('async_status_running')['ansible_job_id']
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': jid, 'wait': 5, 'timeout': 12, 'label': 'warm-up'}, monkeypatch,
                                  [RUNNING_FILE])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['finished'] is False
    assert result['msg'].startswith('warm-up: the job was still running after 12.0 s')
    assert lines == ['node1: warm-up: running'] * 3 and sum(clock.slept) == 15.0


def test_negative_timeout_is_refused(monkeypatch):
    jid = fixture('async_status_running')['ansible_job_id']
    plugin, calls, dummy = action({'jid': jid, 'timeout': -3}, monkeypatch, [RUNNING_FILE])
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['msg'] == 'timeout = -3.0: must be 0 or more seconds' and calls == []
