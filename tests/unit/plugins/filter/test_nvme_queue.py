# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvme_queue filters (plugins/filter/nvme_queue.py) on the nvme_info result of lab guest irqrec."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.filter import nvme_queue as f
from ansible_collections.inferops.node.plugins.modules import nvme_info
from ansible_collections.inferops.node.tests.unit.plugins.modules.test_nvme_info import Guest
from ansible_collections.inferops.node.tests.unit.module_harness import run_module

WANT = {'scheduler': 'none', 'read_ahead_kb': 2048, 'nr_requests': None, 'models': [], 'serials': [],
        'rules_file': '/etc/udev/rules.d/61-inferops-nvme-sched.rules'}


@pytest.fixture
def info(tmp_path, monkeypatch):
    Guest(tmp_path, monkeypatch, 'converged')
    return run_module(nvme_info.main, {})[1]


def test_lab_settings_are_valid(info):
    assert f.nvme_queue_errors(WANT, info) == []


@pytest.mark.parametrize('change, expected', [
    ({'scheduler': 'bfq-turbo'}, ['nvme_sched_scheduler = "bfq-turbo": not offered by nvme0n1, nvme1n1, nvme2n1, nvme3n1, '
                                  'nvme4n1, nvme5n1 (available: none, mq-deadline)']),
    ({'scheduler': 'Bad Name'}, ['nvme_sched_scheduler = "Bad Name": must be a scheduler name such as none or mq-deadline']),
    ({'read_ahead_kb': -8}, ['nvme_sched_read_ahead_kb = -8: must be a non-negative integer multiple of 4 (KiB, whole pages)']),
    ({'read_ahead_kb': '2MB'}, ['nvme_sched_read_ahead_kb = "2MB": must be a non-negative integer multiple of 4 (KiB, whole pages)']),
    ({'read_ahead_kb': 1001}, ['nvme_sched_read_ahead_kb = 1001: must be a non-negative integer multiple of 4 (KiB, whole pages)']),
    ({'read_ahead_kb': True}, ['nvme_sched_read_ahead_kb = true: must be a non-negative integer multiple of 4 (KiB, whole pages)']),
    ({'nr_requests': 0}, ['nvme_sched_nr_requests = 0: must be a positive integer or null (kernel default)']),
    ({'nr_requests': '64'}, []),
    ({'serials': ['LABNOSUCH0']}, ['nvme_sched_serials entry "LABNOSUCH0": no NVMe namespace on this host has that serial '
                                   '(present: LABMODEL0, LABMODEL1, LABMODEL2, LABMODEL3, LABINDEX0, LABINDEX1)']),
    ({'models': ['QEMU*'], 'serials': ['LABINDEX?']}, []),
    ({'models': ['a"b']}, ['nvme_sched_models = ["a\\"b"]: must be a list of non-blank strings (udev glob patterns) without '
                           '\'"\', \'|\' or \'\\\'']),
    ({'rules_file': '/etc/udev/rules.d/50-x.rules'}, [
        'nvme_sched_rules_file = "/etc/udev/rules.d/50-x.rules": must be a .rules file directly in /etc/udev/rules.d/ '
        'whose name starts with 61-99 (after 60-persistent-storage.rules)']),
])
def test_errors(info, change, expected):
    assert f.nvme_queue_errors(dict(WANT, **change), info) == expected


def test_input_only_skips_the_host():
    assert f.nvme_queue_errors(dict(WANT, scheduler='kyber', serials=['NOPE'])) == []


def test_select_and_drift(info):
    assert [ns['name'] for ns in f.nvme_queue_select(info, [], ['LABINDEX*'])] == ['nvme4n1', 'nvme5n1']
    assert [ns['name'] for ns in f.nvme_queue_select(info, ['QEMU NVMe Ctrl'], [])] == [
        'nvme0n1', 'nvme1n1', 'nvme2n1', 'nvme3n1', 'nvme4n1', 'nvme5n1']
    selected = f.nvme_queue_select(info)
    assert f.nvme_queue_drift(selected, 'none', 2048) == []
    assert f.nvme_queue_drift(selected[:1], 'mq-deadline', 4096, 64) == [
        {'name': 'nvme0n1', 'text': 'nvme0n1 (QEMU NVMe Ctrl LABMODEL0): scheduler [none], read_ahead_kb 2048, nr_requests 1023'}]
