# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_progress on what a real page_cache job returned (tests/unit/fixtures/job_progress)."""

from __future__ import annotations

import json
import os
from unittest.mock import MagicMock

import pytest

from ansible.playbook.task import Task
from ansible_collections.inferops.node.plugins.action import job_progress

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'job_progress')


def fixture(name):
    with open(os.path.join(FIXTURES, name + '.json')) as handle:
        return json.load(handle)


def action(args, replies, monkeypatch):
    """The action with the managed node replaced by the recorded replies; returns (action, calls, lines)."""
    task = Task()
    task.args = args
    task.action = 'inferops.node.job_progress'
    plugin = job_progress.ActionModule(task, MagicMock(), MagicMock(), loader=None, templar=None,
                                       shared_loader_obj=None)
    calls, lines = [], []
    plugin.get_shell_option = lambda option, default=None: default
    plugin._remote_expand_user = lambda path, sudoable=True: path.replace('~', '/root')

    def execute(module_name, module_args, task_vars):
        calls.append((module_name, module_args))
        return dict(replies[module_name])
    plugin._execute_module = execute
    monkeypatch.setattr(job_progress.display, 'display', lines.append)
    return plugin, calls, lines


def test_running_job_prints_its_line(monkeypatch):
    running = fixture('async_status_running')
    plugin, calls, lines = action(
        {'jid': running['ansible_job_id'], 'status_file': '/tmp/status.json', 'label': 'page cache'},
        {'ansible.legacy.async_status': running, 'ansible.legacy.slurp': fixture('slurp_running')}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert calls == [
        ('ansible.legacy.async_status', {'jid': running['ansible_job_id'], 'mode': 'status',
                                         '_async_dir': '/root/.ansible_async'}),
        ('ansible.legacy.slurp', {'src': '/tmp/status.json'}),
    ]
    assert lines == ['node1: page cache: reading 22.66 % (2.34 GiB of 10.34 GiB, 6/14 files, 0.922 GB/s, '
                     'eta 9.4 s, 4.21 s elapsed)']
    assert result['finished'] is False and result['started'] is True and result['changed'] is False
    assert result['progress']['state'] == 'reading'


def test_finished_job_keeps_its_result_and_says_so(monkeypatch):
    finished = fixture('async_status_finished')
    plugin, dummy, lines = action(
        {'jid': finished['ansible_job_id'], 'status_file': '/tmp/status.json'},
        {'ansible.legacy.async_status': finished, 'ansible.legacy.slurp': fixture('slurp_finished')}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert lines[0].startswith('node1: progress: done ') and lines[0].endswith(' - job finished')
    assert result['finished'] is True and result['changed'] is False
    # page_cache's own result comes with it: the role reads total from it.
    assert result['total']['files'] == 14 and result['job_changed'] is True


@pytest.mark.parametrize('slurped', [
    {'failed': True, 'msg': 'file not found: /tmp/status.json'},
    {'content': 'eyJzdGF0ZSI6', 'encoding': 'base64'},  # a file caught half-written
])
def test_no_status_yet(monkeypatch, slurped):
    running = fixture('async_status_running')
    plugin, dummy, lines = action(
        {'jid': running['ansible_job_id'], 'status_file': '/tmp/status.json'},
        {'ansible.legacy.async_status': running, 'ansible.legacy.slurp': slurped}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert lines == ['node1: progress: no status yet'] and result['progress'] == {}


def test_without_status_file_reads_only_the_job(monkeypatch):
    running = fixture('async_status_running')
    plugin, calls, lines = action({'jid': running['ansible_job_id']},
                                  {'ansible.legacy.async_status': running}, monkeypatch)
    plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert [c[0] for c in calls] == ['ansible.legacy.async_status'] and lines == ['node1: progress: running']


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


def test_wait_returns_once_the_job_has_finished(monkeypatch):
    running, finished = fixture('async_status_running'), fixture('async_status_finished')
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': running['ansible_job_id'], 'status_file': '/tmp/status.json', 'wait': 5},
                                  {'ansible.legacy.slurp': fixture('slurp_finished')}, monkeypatch)
    answers = [running, running, finished]

    def execute(module_name, module_args, task_vars):
        calls.append((module_name, module_args))
        return dict(answers.pop(0)) if module_name == 'ansible.legacy.async_status' else fixture('slurp_finished')
    plugin._execute_module = execute
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    # Asked three times, a second apart, then the status file once: two seconds, not the whole five.
    assert [c[0] for c in calls] == ['ansible.legacy.async_status'] * 3 + ['ansible.legacy.slurp']
    assert clock.slept == [1.0, 1.0]
    assert result['finished'] is True and lines[0].endswith(' - job finished')


def test_wait_ends_with_the_job_still_running(monkeypatch):
    running = fixture('async_status_running')
    clock = Clock(monkeypatch)
    plugin, calls, dummy = action({'jid': running['ansible_job_id'], 'wait': 2.5},
                                  {'ansible.legacy.async_status': running}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert clock.slept == [1.0, 1.0, 0.5] and len(calls) == 4 and result['finished'] is False


def test_negative_wait_is_refused(monkeypatch):
    running = fixture('async_status_running')
    plugin, calls, dummy = action({'jid': running['ansible_job_id'], 'wait': -1},
                                  {'ansible.legacy.async_status': running}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['msg'] == 'wait = -1.0: must be 0 or more seconds' and calls == []


def test_timeout_follows_the_job_to_its_end_a_line_per_wait(monkeypatch):
    running, finished = fixture('async_status_running'), fixture('async_status_finished')
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': running['ansible_job_id'], 'status_file': '/tmp/status.json', 'wait': 2,
                                   'timeout': 60, 'label': 'page cache'}, {}, monkeypatch)
    answers = [running] * 4 + [finished]

    def execute(module_name, module_args, task_vars):
        calls.append(module_name)
        if module_name == 'ansible.legacy.async_status':
            return dict(answers.pop(0))
        return fixture('slurp_finished' if not answers else 'slurp_running')
    plugin._execute_module = execute
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    # One task: the first two-second poll prints the running line, the second ends with the job - no retry loop.
    assert len(lines) == 2 and lines[0].startswith('node1: page cache: reading 22.66 %')
    assert lines[-1].endswith(' - job finished') and result['finished'] is True and not result.get('failed')
    assert calls.count('ansible.legacy.slurp') == 2 and clock.slept == [1.0, 1.0, 1.0]
    assert result['total']['files'] == 14


def test_timeout_fails_with_the_job_still_running(monkeypatch):
    running = fixture('async_status_running')
    clock = Clock(monkeypatch)
    plugin, calls, lines = action({'jid': running['ansible_job_id'], 'wait': 5, 'timeout': 12, 'label': 'warm-up'},
                                  {'ansible.legacy.async_status': running}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['finished'] is False
    assert result['msg'].startswith('warm-up: the job was still running after 12.0 s')
    assert lines == ['node1: warm-up: running'] * 3 and sum(clock.slept) == 15.0


def test_negative_timeout_is_refused(monkeypatch):
    running = fixture('async_status_running')
    plugin, calls, dummy = action({'jid': running['ansible_job_id'], 'timeout': -3},
                                  {'ansible.legacy.async_status': running}, monkeypatch)
    result = plugin.run(task_vars={'inventory_hostname': 'node1'})
    assert result['failed'] and result['msg'] == 'timeout = -3.0: must be 0 or more seconds' and calls == []
