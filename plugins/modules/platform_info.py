#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: platform_info
short_description: Report the OS and kernel release, CPUs, NUMA nodes, SMT, cpufreq governors and CPU idle states
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads the OS (C(/etc/os-release)), the kernel release and version (C(/proc/sys/kernel)), the kernel command
    line, the online and possible CPUs, the online NUMA nodes and their CPUs, SMT (C(/sys/devices/system/cpu/smt)
    and the threads per core from the CPU topology), the cpufreq governor and driver of every CPU, and the
    cpuidle driver, governor and states (with the CPUs that disable each state).
  - Procfs and sysfs only; runs no command. A file the kernel or a VM lacks (cpufreq in most VMs) gives null.
  - Transparent huge pages are reported by M(inferops.node.sysctl_info).
  - Never changes anything.
options: {}
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux procfs and sysfs.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.sysctl_info
'''

EXAMPLES = r'''
- name: Read the platform
  inferops.node.platform_info:
  register: platform

- name: Kernel and NUMA nodes
  ansible.builtin.debug:
    msg: "{{ platform.kernel.release }}, {{ platform.numa.nodes | length }} NUMA node(s)"
'''

RETURN = r'''
os:
  description: C(id), C(version_id) and C(pretty_name) of os-release(5); null without the file.
  returned: always
  type: dict
  sample: {id: debian, version_id: '12', pretty_name: Debian GNU/Linux 12 (bookworm)}
kernel:
  description: C(release) (C(uname -r)), C(version) (C(uname -v)) and C(numbers) (major, minor, patch of the release).
  returned: always
  type: dict
  sample: {release: 6.1.0-57-amd64, version: '#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1', numbers: [6, 1, 0]}
cmdline:
  description: The kernel command line.
  returned: always
  type: str
cpus:
  description: C(online) and C(possible) CPU numbers.
  returned: always
  type: dict
  sample: {online: [0, 1], possible: [0, 1]}
numa:
  description: C(nodes) (online NUMA nodes) and C(cpus) (the CPUs of each node, by node number as a string).
  returned: always
  type: dict
  sample: {nodes: [0], cpus: {'0': [0, 1]}}
smt:
  description:
    - C(control) (V(on), V(off), V(forceoff), V(notsupported), V(notimplemented)), C(active) (bool) and
      C(threads_per_core) (from C(topology/thread_siblings_list)); each null when the kernel has no such file.
  returned: always
  type: dict
  sample: {control: notsupported, active: false, threads_per_core: 1}
cpufreq:
  description: C(governors) and C(drivers) - each value with the CPUs that have it; null without cpufreq (most VMs).
  returned: always
  type: dict
  sample: {governors: {performance: [0, 1]}, drivers: {acpi-cpufreq: [0, 1]}}
cpuidle:
  description:
    - C(driver) and C(governor) of cpuidle, and C(states) of the first CPU that has any - C(state), C(name),
      C(latency_us) and C(disabled_cpus) (the CPUs where the state is disabled).
  returned: always
  type: dict
  sample: {driver: acpi_idle, governor: menu, states: [{state: state0, name: POLL, latency_us: 0, disabled_cpus: []}]}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.host_platform import host_info


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    module.exit_json(changed=False, **host_info())


if __name__ == '__main__':
    main()
