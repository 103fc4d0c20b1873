# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of the platform, on ``platform_info``: OS, kernel against what the features in use need,
NUMA nodes, SMT, cpufreq governor and C-states (THP is with the kernel parameters, audit/kernel.py)."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, read
from ansible_collections.inferops.node.plugins.module_utils.common.host_platform import kernel_version

__all__ = ['CHECKS', 'KERNEL_FEATURES', 'kernel_needs']

# Features of the roles that need a kernel release: (name, minimum, role variable that turns the feature on).
KERNEL_FEATURES = (
    ('nvmeof_initiator read-ahead re-trigger on the NVME_EVENT=connected uevent', [5, 18, 0],
     'nvmeof_initiator_connections'),
)


def _version(numbers):
    return '.'.join(str(n) for n in numbers)


def kernel_needs(expected):
    """``[(minimum, why)]``: ``audit_kernel_min`` and the minimum of every feature the inventory turns on."""
    needs = []
    floor = expected.get('audit_kernel_min')
    if floor:
        minimum = kernel_version(str(floor))
        if minimum is None:
            raise ValueError('audit_kernel_min = %r: not a kernel version (e.g. 6.1)' % (floor,))
        needs.append((minimum, 'audit_kernel_min = %s' % floor))
    for name, minimum, variable in KERNEL_FEATURES:
        if expected.get(variable):
            needs.append((minimum, '%s (%s is set)' % (name, variable)))
    return needs


@Check('platform.os', 'OS release is the one the collection targets', 'minor', '/etc/os-release',
       'reinstall or set audit_os_releases')
def os_release(check, reads, expected):
    found = read(reads, 'platform_info', 'os')
    wanted = expected.get('audit_os_releases') or []
    observed = '%s %s' % (found.get('id'), found.get('version_id'))
    if not wanted:
        return [check.skip('audit_os_releases is empty: no OS release expected')]
    if observed in wanted:
        return [check.passed(None, wanted, observed)]
    return [check.warn(None, wanted, observed, 'OS %s (%s) is not one of audit_os_releases'
                       % (observed, found.get('pretty_name')))]


@Check('platform.kernel', 'Kernel release is new enough for the features in use', 'major',
       '/proc/sys/kernel/osrelease', 'upgrade the kernel (or turn the feature off)',
       variables=tuple(variable for dummy, dummy, variable in KERNEL_FEATURES))
def kernel(check, reads, expected):
    found = read(reads, 'platform_info', 'kernel')
    numbers = found.get('numbers')
    if not numbers:
        return [check.skip('kernel release %r not understood' % found.get('release'))]
    try:
        needs = kernel_needs(expected)
    except ValueError as exc:
        return [check.fail(None, expected.get('audit_kernel_min'), found['release'], str(exc))]
    if not needs:
        return [check.passed(None, None, found['release'], 'no feature in use needs a minimum kernel')]
    minimum, why = max(needs, key=lambda need: need[0])
    shown = '>= %s' % _version(minimum)
    lacking = [w for m, w in needs if numbers < m]
    if lacking:
        return [check.fail(None, shown, found['release'], 'kernel %s is older than %s, needed by: %s'
                           % (found['release'], _version(minimum), '; '.join(lacking)))]
    return [check.passed(None, shown, found['release'], 'needed by: %s' % why)]


@Check('platform.numa', 'NUMA nodes as the inventory expects (NPS setting)', 'major', '/sys/devices/system/node/online',
       'BIOS NPS setting (audit_numa_nodes)')
def numa(check, reads, expected):
    nodes = read(reads, 'platform_info', 'numa').get('nodes')
    wanted = expected.get('audit_numa_nodes')
    if wanted is None:
        return [check.skip('audit_numa_nodes is not set', expected=None)]
    if nodes is None:
        return [check.skip('the kernel reports no NUMA node list')]
    return [check.compare(None, int(wanted), len(nodes), '%d NUMA node(s) online (%s), audit_numa_nodes = %s'
                          % (len(nodes), nodes, wanted))]


@Check('platform.smt', 'SMT on or off as the inventory expects', 'minor', '/sys/devices/system/cpu/smt/active',
       'BIOS SMT setting or the nosmt kernel parameter (audit_smt)')
def smt(check, reads, expected):
    found = read(reads, 'platform_info', 'smt')
    wanted = expected.get('audit_smt')
    if wanted is None:
        return [check.skip('audit_smt is not set')]
    active = found.get('active')
    if active is None and found.get('threads_per_core'):
        active = found['threads_per_core'] > 1
    if active is None:
        return [check.skip('the kernel reports no SMT state (no smt/active, no CPU topology)')]
    return [check.compare(None, bool(wanted), active, 'SMT is %s (control %s), audit_smt = %s'
                          % ('active' if active else 'inactive', found.get('control'), wanted))]


@Check('platform.cpufreq', 'cpufreq governor of every CPU', 'minor',
       '/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor', 'cpufrequtils / kernel parameter (audit_cpufreq_governor)')
def cpufreq(check, reads, expected):
    governors = read(reads, 'platform_info', 'cpufreq').get('governors')
    wanted = expected.get('audit_cpufreq_governor')
    if not wanted:
        return [check.skip('audit_cpufreq_governor is not set')]
    if not governors:
        return [check.skip('no cpufreq on this host (a VM, or frequency managed by the firmware)', expected=wanted)]
    other = dict((g, cpus) for g, cpus in governors.items() if g != wanted)
    if other:
        return [check.warn(None, wanted, governors, 'CPUs with another governor: %s' % ', '.join(
            '%s on CPUs %s' % (g, cpus) for g, cpus in sorted(other.items())))]
    return [check.passed(None, wanted, governors)]


@Check('platform.cstates', 'No enabled CPU idle state deeper than the allowed exit latency', 'minor',
       '/sys/devices/system/cpu/cpu*/cpuidle/state*/{latency,disable}',
       'BIOS C-states or processor.max_cstate (audit_cpuidle_max_latency_us)')
def cstates(check, reads, expected):
    idle = read(reads, 'platform_info', 'cpuidle')
    limit = expected.get('audit_cpuidle_max_latency_us')
    if limit is None:
        return [check.skip('audit_cpuidle_max_latency_us is not set')]
    states = idle.get('states') or []
    if not states:
        return [check.skip('no cpuidle states (driver %s)' % idle.get('driver'), expected=limit)]
    deep = ['%s (%s, %d us)' % (s['state'], s['name'], s['latency_us']) for s in states
            if s.get('latency_us') is not None and s['latency_us'] > int(limit) and not s.get('disabled_cpus')]
    observed = dict((s['name'], s['latency_us']) for s in states)
    if deep:
        return [check.warn(None, '<= %s us' % limit, observed, 'enabled idle states with a longer exit latency: %s'
                           % ', '.join(deep))]
    return [check.passed(None, '<= %s us' % limit, observed)]


CHECKS = [os_release, kernel, numa, smt, cpufreq, cstates]
