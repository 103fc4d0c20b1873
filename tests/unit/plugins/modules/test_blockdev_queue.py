# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""blockdev_queue on the sysfs recorded on lab guest irqrec (fixtures/info: ``fresh`` - scheduler [none] of none and
mq-deadline, read_ahead_kb 128, nr_requests 1023 on the six QEMU drives; see fixtures/info/README.md)."""

from __future__ import annotations

import errno

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import blockdev_queue
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module

QUEUE = '/sys/class/block/%s/queue/%s'


class Guest(FakeHost):
    fixtures = 'info'
    snapshot_file = '%s/snapshot.json'

    def attr(self, kname, name):
        with open(self.path(sysfs.realpath(QUEUE % (kname, name)))) as handle:
            return handle.read().strip()


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'fresh')


@pytest.fixture
def kernel(fresh, monkeypatch):
    """A scheduler switch resets nr_requests to the new scheduler's default (mq-deadline: 256), as the kernel does."""
    real = sysfs.write_attr
    writes = []

    def write(path, value):
        writes.append((path, value))
        real(path, value)
        if path.endswith('/scheduler'):
            real(path.replace('/scheduler', '/nr_requests'), 256 if value == 'mq-deadline' else 1023)
    monkeypatch.setattr(sysfs, 'write_attr', write)
    return writes


def test_sets_what_differs_in_order_and_is_idempotent(fresh, kernel):
    args = {'devices': ['nvme0n1', '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABINDEX0'], 'scheduler': 'mq-deadline',
            'read_ahead_kb': 2048, 'nr_requests': 512}
    failed, result = run_module(blockdev_queue.main, args, diff=True)
    assert not failed, result
    # Sysfs only, no command.
    assert fresh.calls == []
    first = result['devices'][0]
    assert first == {'device': 'nvme0n1', 'kname': 'nvme0n1', 'changed': True,
                     'before': {'scheduler': 'none', 'nr_requests': 1023, 'read_ahead_kb': 128},
                     'after': {'scheduler': 'mq-deadline', 'nr_requests': 512, 'read_ahead_kb': 2048}}
    assert result['devices'][1]['kname'] == 'nvme4n1' and result['changed'] is True
    # The scheduler first: its switch reset nr_requests, which is written after it.
    assert [path.rsplit('/', 1)[1] for path, dummy in kernel[:3]] == ['scheduler', 'nr_requests', 'read_ahead_kb']
    assert (fresh.attr('nvme0n1', 'read_ahead_kb'), fresh.attr('nvme0n1', 'nr_requests')) == ('2048', '512')
    assert result['diff']['before'].startswith('nvme0n1: scheduler=none nr_requests=1023 read_ahead_kb=128\n')
    assert result['diff']['after'].startswith('nvme0n1: scheduler=mq-deadline nr_requests=512 read_ahead_kb=2048\n')

    del kernel[:]
    failed, again = run_module(blockdev_queue.main, args)
    assert not failed and again['changed'] is False and kernel == []


def test_nr_requests_reset_by_the_scheduler_switch_is_written_again(fresh, kernel):
    # nr_requests already 1023 before, but the switch to mq-deadline resets it to 256.
    failed, result = run_module(blockdev_queue.main, {'devices': ['nvme1n1'], 'scheduler': 'mq-deadline',
                                                      'nr_requests': 1023})
    assert not failed and result['devices'][0]['after'] == {'scheduler': 'mq-deadline', 'nr_requests': 1023,
                                                            'read_ahead_kb': 128}


def test_check_mode_predicts_without_writing(fresh, kernel):
    failed, result = run_module(blockdev_queue.main, {'devices': ['nvme0n1', 'nvme1n1'], 'scheduler': 'none',
                                                      'read_ahead_kb': 2048}, check_mode=True)
    assert not failed and result['changed'] is True and kernel == []
    assert [d['after']['read_ahead_kb'] for d in result['devices']] == [2048, 2048]
    assert fresh.attr('nvme0n1', 'read_ahead_kb') == '128'
    failed, result = run_module(blockdev_queue.main, {'devices': ['nvme0n1'], 'scheduler': 'none'}, check_mode=True)
    assert not failed and result['changed'] is False


@pytest.mark.parametrize('args, msg', [
    ({'devices': ['nvme0n1']}, 'one of scheduler, read_ahead_kb and nr_requests is required'),
    ({'devices': ['nvme0n1'], 'read_ahead_kb': 130}, 'read_ahead_kb=130 is not a multiple of the 4 KiB page size'),
    ({'devices': ['nvme0n1'], 'nr_requests': 0}, 'nr_requests=0 must be positive'),
    ({'devices': ['nvme0n1', 'nvme9n1'], 'read_ahead_kb': 2048}, 'device nvme9n1 does not exist'),
    ({'devices': ['nvme0n1'], 'scheduler': 'bfq'}, 'nvme0n1 (nvme0n1): scheduler=bfq is not offered (available: none, mq-deadline)'),
])
def test_refuses_before_writing(fresh, kernel, args, msg):
    failed, result = run_module(blockdev_queue.main, args)
    assert failed and result['msg'] == msg and kernel == []


def test_refused_write_fails_naming_the_device(fresh, monkeypatch):
    def refuse(path, value):
        raise sysfs.SysfsWriteError(path, value, OSError(errno.EINVAL, 'Invalid argument'))

    monkeypatch.setattr(sysfs, 'write_attr', refuse)
    failed, result = run_module(blockdev_queue.main, {'devices': ['nvme0n1'], 'read_ahead_kb': 2048})
    assert failed and result['msg'] == ("nvme0n1 (nvme0n1): writing 2048 to /sys/class/block/nvme0n1/queue/read_ahead_kb: "
                                        "Invalid argument")
