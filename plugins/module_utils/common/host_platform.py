# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform of a host as the node audit needs it (module ``platform_info``): OS and kernel release,
CPUs and NUMA nodes, SMT, cpufreq governors and cpuidle states. Reads procfs/sysfs only (through
module_utils/common/sysfs, whose ``ROOT`` unit tests point at a recorded tree); a file the kernel or a VM
lacks gives null, never an error. THP is read by ``sysctl_info`` (module_utils/kernel/sysctl.py), not here.
"""

from __future__ import annotations

import re

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import CpuListError, parse_cpulist

__all__ = ['host_info', 'kernel_version', 'parse_os_release']

CPU = '/sys/devices/system/cpu/'
NODE = '/sys/devices/system/node/'
_VERSION_RE = re.compile(r'^(\d+)\.(\d+)(?:\.(\d+))?')


def kernel_version(release):
    """``[major, minor, patch]`` of a kernel release (``6.1.0-57-amd64`` -> ``[6, 1, 0]``), None when unparsable."""
    match = _VERSION_RE.match(release or '')
    if not match:
        return None
    return [int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)]


def parse_os_release(text):
    """os-release(5) as a dict of lower-case keys (quotes removed)."""
    out = {}
    for line in (text or '').splitlines():
        line = line.strip()
        if not line or line.startswith('#') or '=' not in line:
            continue
        key, value = line.split('=', 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
            value = value[1:-1]
        out[key.strip().lower()] = value
    return out


def _cpus(path):
    value = sysfs.read_attr(path)
    if value is None:
        return None
    try:
        return parse_cpulist(value)
    except CpuListError:
        return None


def _cpu_dirs():
    return sorted((name for name in sysfs.listdir(CPU) if re.match(r'^cpu\d+$', name)), key=lambda n: int(n[3:]))


def _by_value(path_of):
    """``{value: [cpu numbers]}`` of one attribute over every CPU that has it, None when none has it."""
    seen = {}
    for name in _cpu_dirs():
        value = sysfs.read_attr(CPU + name + '/' + path_of)
        if value is not None:
            seen.setdefault(value.strip(), []).append(int(name[3:]))
    return seen or None


def _cpuidle_states():
    """The idle states of the first CPU that has any: name, latency (us) and the CPUs that disable it."""
    states = []
    for name in _cpu_dirs():
        base = CPU + name + '/cpuidle/'
        entries = sorted((s for s in sysfs.listdir(base) if re.match(r'^state\d+$', s)), key=lambda s: int(s[5:]))
        if not entries:
            continue
        for state in entries:
            disabled = [int(cpu[3:]) for cpu in _cpu_dirs()
                        if sysfs.read_int(CPU + cpu + '/cpuidle/' + state + '/disable') == 1]
            states.append({'state': state, 'name': sysfs.read_attr(base + state + '/name'),
                           'latency_us': sysfs.read_int(base + state + '/latency'), 'disabled_cpus': disabled})
        break
    return states


def host_info():
    release = sysfs.kernel_release()
    os_text = sysfs.read_attr('/etc/os-release')
    if os_text is None:
        os_text = sysfs.read_attr('/usr/lib/os-release')
    os_release = parse_os_release(os_text)
    nodes = _cpus(NODE + 'online')
    node_cpus = {}
    for node in nodes or []:
        node_cpus[str(node)] = _cpus(NODE + 'node%d/cpulist' % node)
    threads = _by_value('topology/thread_siblings_list')
    smt_control = sysfs.read_attr(CPU + 'smt/control')
    smt_active = sysfs.read_int(CPU + 'smt/active')
    return {
        'os': {'id': os_release.get('id'), 'version_id': os_release.get('version_id'),
               'pretty_name': os_release.get('pretty_name')} if os_release else None,
        'kernel': {'release': release, 'version': sysfs.read_attr('/proc/sys/kernel/version'),
                   'numbers': kernel_version(release)},
        'cmdline': sysfs.read_attr('/proc/cmdline'),
        'cpus': {'online': _cpus(CPU + 'online'), 'possible': _cpus(CPU + 'possible')},
        'numa': {'nodes': nodes, 'cpus': node_cpus},
        'smt': {
            'control': smt_control.strip() if smt_control is not None else None,
            'active': None if smt_active is None else smt_active == 1,
            # Threads per core from the topology, for kernels or VMs without smt/ files.
            'threads_per_core': max(len(parse_cpulist(v)) for v in threads) if threads else None,
        },
        'cpufreq': {
            'governors': _by_value('cpufreq/scaling_governor'),
            'drivers': _by_value('cpufreq/scaling_driver'),
        },
        'cpuidle': {
            'driver': sysfs.read_attr(CPU + 'cpuidle/current_driver'),
            'governor': sysfs.read_attr(CPU + 'cpuidle/current_governor_ro') or sysfs.read_attr(CPU + 'cpuidle/current_governor'),
            'states': _cpuidle_states(),
        },
    }
