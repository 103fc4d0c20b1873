# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""platform_info replayed on lab guest auditrec (fixtures/audit/fresh: a QEMU/TCG guest - no cpufreq, cpuidle
driver none, SMT not supported, one NUMA node)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import host_platform
from ansible_collections.inferops.node.plugins.modules import platform_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module


class Guest(FakeHost):
    fixtures = 'audit'
    snapshot_file = '%s/snapshot.json'


@pytest.fixture
def guest(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'fresh')


def test_recorded_guest(guest):
    failed, result = run_module(platform_info.main, {})
    assert not failed and result['changed'] is False and guest.calls == []
    assert result['os'] == {'id': 'debian', 'version_id': '12', 'pretty_name': 'Debian GNU/Linux 12 (bookworm)'}
    assert result['kernel']['release'] == '6.1.0-57-amd64' and result['kernel']['numbers'] == [6, 1, 0]
    assert result['kernel']['version'].startswith('#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3')
    assert 'console=ttyS0,115200' in result['cmdline']
    assert result['cpus'] == {'online': [0, 1], 'possible': [0, 1]}
    assert result['numa'] == {'nodes': [0], 'cpus': {'0': [0, 1]}}
    assert result['smt'] == {'control': 'notsupported', 'active': False, 'threads_per_core': 1}
    # A TCG guest has no cpufreq and no cpuidle states: null / empty, not an error.
    assert result['cpufreq'] == {'governors': None, 'drivers': None}
    assert result['cpuidle'] == {'driver': 'none', 'governor': 'menu', 'states': []}


def test_check_mode_reads_the_same(guest):
    assert run_module(platform_info.main, {}) == run_module(platform_info.main, {}, check_mode=True)


def test_cpufreq_and_idle_states_when_present(guest):
    """The files a bare-metal host has, written into the recorded tree (values as an EPYC host shows them)."""
    def write(path, value):
        import os
        os.makedirs(os.path.dirname(guest.path(path)), exist_ok=True)
        with open(guest.path(path), 'w') as handle:
            handle.write(value + '\n')
    for cpu, governor in ((0, 'performance'), (1, 'schedutil')):
        write('/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor' % cpu, governor)
        write('/sys/devices/system/cpu/cpu%d/cpufreq/scaling_driver' % cpu, 'acpi-cpufreq')
        for state, name, latency in (('state0', 'POLL', 0), ('state1', 'C1', 1), ('state2', 'C2', 400)):
            write('/sys/devices/system/cpu/cpu%d/cpuidle/%s/name' % (cpu, state), name)
            write('/sys/devices/system/cpu/cpu%d/cpuidle/%s/latency' % (cpu, state), str(latency))
            write('/sys/devices/system/cpu/cpu%d/cpuidle/%s/disable' % (cpu, state), '1' if state == 'state2' and cpu == 1 else '0')
    dummy, result = run_module(platform_info.main, {})
    assert result['cpufreq'] == {'governors': {'performance': [0], 'schedutil': [1]}, 'drivers': {'acpi-cpufreq': [0, 1]}}
    assert result['cpuidle']['states'][2] == {'state': 'state2', 'name': 'C2', 'latency_us': 400, 'disabled_cpus': [1]}


@pytest.mark.parametrize('release, numbers', [('6.1.0-57-amd64', [6, 1, 0]), ('5.18.19', [5, 18, 19]),
                                              ('4.19', [4, 19, 0]), ('garbage', None), (None, None)])
def test_kernel_version(release, numbers):
    assert host_platform.kernel_version(release) == numbers
