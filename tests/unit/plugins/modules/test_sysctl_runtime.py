# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl_runtime on the /proc/sys recorded on lab guest ktrec (fixtures/sysctl, ``fresh`` right after boot:
swappiness 60, cubic, see fixtures/sysctl/README.md)."""

from __future__ import annotations

import errno

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import sysctl_runtime
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module


class Guest(FakeHost):
    fixtures = 'sysctl'
    snapshot_file = '%s.json'


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'fresh')


WANT = {'vm.swappiness': 1, 'net.ipv4.tcp_congestion_control': 'cubic', 'net.ipv4.tcp_rmem': '4096  87380 6291456',
        'vm.dirty_ratio': None}


def test_writes_only_what_differs_and_reads_back(fresh):
    rmem = fresh.read('/proc/sys/net/ipv4/tcp_rmem')
    failed, result = run_module(sysctl_runtime.main, {'parameters': WANT}, diff=True)
    assert not failed, result
    # No command: procfs only.
    assert fresh.calls == []
    assert result['changed'] is True and result['changed_keys'] == ['vm.swappiness', 'net.ipv4.tcp_rmem']
    assert result['parameters'][0] == {'key': 'vm.swappiness', 'path': '/proc/sys/vm/swappiness', 'wanted': '1',
                                       'before': '60', 'after': '1', 'changed': True}
    assert result['parameters'][1]['changed'] is False
    # A null value is left out; the written form is the compared one (blanks collapsed).
    keys = [p['key'] for p in result['parameters']]
    assert keys == ['vm.swappiness', 'net.ipv4.tcp_congestion_control', 'net.ipv4.tcp_rmem']
    assert fresh.read('/proc/sys/vm/swappiness') == '1'
    assert fresh.read('/proc/sys/net/ipv4/tcp_rmem') == '4096 87380 6291456' != rmem
    assert result['not_applied'] == []
    assert result['diff']['before'].startswith('vm.swappiness = 60\nnet.ipv4.tcp_congestion_control = cubic\n')
    assert result['diff']['after'].startswith('vm.swappiness = 1\n')

    again = run_module(sysctl_runtime.main, {'parameters': WANT})[1]
    assert again['changed'] is False and again['changed_keys'] == []


def test_check_mode_predicts_without_writing(fresh):
    failed, result = run_module(sysctl_runtime.main, {'parameters': {'vm.swappiness': '0001'}}, check_mode=True)
    assert not failed and result['changed'] is True
    assert (result['parameters'][0]['before'], result['parameters'][0]['after']) == ('60', '1')
    assert fresh.read('/proc/sys/vm/swappiness') == '60\n'
    # Same value written differently: nothing to do.
    assert run_module(sysctl_runtime.main, {'parameters': {'vm.swappiness': '060'}}, check_mode=True)[1]['changed'] is False


def test_refuses_before_writing_anything(fresh):
    failed, result = run_module(sysctl_runtime.main, {'parameters': {
        'vm.swappiness': 1, 'vm.no_such_knob': 1, 'vm.dirty_ratio': 'yes', 'swappiness': 1}})
    assert failed and result['changed'] is False
    assert result['msg'] == (
        'parameters["vm.no_such_knob"] = 1: unknown kernel parameter vm.no_such_knob (no readable '
        '/proc/sys/vm/no_such_knob on this host); '
        'parameters["vm.dirty_ratio"] = "yes": boolean values are refused; write the value the kernel expects '
        '(e.g. 0 or 1); '
        'parameters["swappiness"] = 1: "swappiness" is not a sysctl key in dotted form (e.g. vm.swappiness)')
    assert fresh.read('/proc/sys/vm/swappiness') == '60\n'


def test_kernel_adjusted_value_is_reported_not_failed(fresh, monkeypatch):
    real = sysfs.write_attr

    def short_of_memory(path, value):
        real(path, '3' if path.endswith('nr_hugepages') else value)

    warnings = []
    monkeypatch.setattr(sysfs, 'write_attr', short_of_memory)
    monkeypatch.setattr(sysctl_runtime.AnsibleModule, 'warn', lambda module, text: warnings.append(text))
    failed, result = run_module(sysctl_runtime.main, {'parameters': {'vm.nr_hugepages': 512}})
    assert not failed and result['changed'] is True
    assert result['not_applied'] == ['vm.nr_hugepages'] and result['parameters'][0]['after'] == '3'
    assert warnings == ['vm.nr_hugepages: wrote 512, the kernel reports 3']


def test_refused_write_fails_naming_the_key(fresh, monkeypatch):
    def refuse(path, value):
        raise sysfs.SysfsWriteError(path, value, OSError(errno.EINVAL, 'Invalid argument'))

    monkeypatch.setattr(sysfs, 'write_attr', refuse)
    failed, result = run_module(sysctl_runtime.main, {'parameters': {'net.ipv4.tcp_congestion_control': 'bbr'}})
    assert failed
    assert result['msg'] == ("net.ipv4.tcp_congestion_control: writing 'bbr' to "
                             "/proc/sys/net/ipv4/tcp_congestion_control: Invalid argument")
