#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: sysctl_info
short_description: Report kernel parameters, the sysctl.d files that set them, transparent huge pages and loaded modules
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads the runtime value of kernel parameters from C(/proc/sys) - the ones named in O(names), or every
    readable one.
  - Reads the sysctl.d files in the order C(sysctl --system) applies them (C(/etc/sysctl.d),
    C(/run/sysctl.d), C(/usr/local/lib/sysctl.d), C(/usr/lib/sysctl.d), C(/lib/sysctl.d); a file name in an
    earlier directory hides the same name in a later one; applied in file name order; C(/etc/sysctl.conf)
    last), and tells which file and line sets each key last (the value a reboot or C(sysctl --system)
    gives it).
  - Reports the transparent huge pages modes (C(/sys/kernel/mm/transparent_hugepage/enabled) and
    C(defrag)) and the loaded kernel modules (C(/proc/modules)).
  - Never changes anything and runs no command.
options:
  names:
    description:
      - Kernel parameters to read, in dotted form (V(vm.swappiness)); a C(/) stands for a dot inside a
        component, as in sysctl.d(5) (V(net.ipv4.conf.eth0/100.rp_filter)).
      - Omitted - every file under C(/proc/sys) (C(/proc/sys/fs/binfmt_misc), an automount point, is not
        walked).
      - A well-formed name without a readable file is reported in RV(unreadable), not as a failure.
    type: list
    elements: str
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux procfs and sysfs.
    support: full
    platforms: posix
notes:
  - The same code (C(plugins/module_utils/kernel/sysctl.py)) gives the role C(inferops.node.kernel_tuning) its
    plan through the filter P(inferops.node.sysctl_plan#filter).
seealso:
  - module: ansible.posix.sysctl
'''

EXAMPLES = r'''
- name: Read two kernel parameters and where they are set
  inferops.node.sysctl_info:
    names: [vm.swappiness, net.ipv4.tcp_congestion_control]
  register: kernel

- name: Show the swappiness and the file that sets it at boot
  ansible.builtin.debug:
    msg: "{{ kernel.parameters['vm.swappiness'] }} from {{ kernel.set_by['vm.swappiness'].file | default('the kernel default') }}"

- name: Audit every kernel parameter
  inferops.node.sysctl_info:
  register: all_kernel_parameters
'''

RETURN = r'''
parameters:
  description: Runtime value of each parameter, whitespace collapsed to single spaces; null when unreadable.
  returned: always
  type: dict
  sample: {"vm.swappiness": "60", "net.ipv4.tcp_rmem": "4096 131072 6291456"}
paths:
  description: The C(/proc/sys) file of each parameter.
  returned: always
  type: dict
  sample: {"vm.swappiness": "/proc/sys/vm/swappiness"}
unreadable:
  description: The parameters of O(names) without a readable file (unknown to this kernel, or write-only).
  returned: always
  type: list
  elements: str
  sample: ["vm.no_such_knob"]
files:
  description: The sysctl.d files in the order C(sysctl --system) applies them.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
      sample: /etc/sysctl.d/90-inferops-kernel-tuning.conf
    readable:
      description: Whether it could be read.
      type: bool
    shadows:
      description: Files of the same name in later directories that it hides.
      type: list
      elements: str
    settings:
      description: The keys it sets (dotted form) and their values; a later line wins.
      type: dict
  sample: [{"path": "/etc/sysctl.d/90-inferops-kernel-tuning.conf", "readable": true, "shadows": [],
            "settings": {"vm.swappiness": "1"}}]
set_by:
  description:
    - For every key some file sets, the file and line applied last, the value, and whether the line starts
      with C(-) (failures ignored). A key absent here keeps the kernel's default at boot.
  returned: always
  type: dict
  sample: {"vm.swappiness": {"file": "/etc/sysctl.d/90-inferops-kernel-tuning.conf", "line": 5, "value": "1",
                             "ignore_failure": false}}
transparent_hugepage:
  description: The THP modes; each null when the kernel has no THP.
  returned: always
  type: dict
  contains:
    enabled:
      description: C(current) mode and C(available) modes of C(/sys/kernel/mm/transparent_hugepage/enabled).
      type: dict
      sample: {"current": "madvise", "available": ["always", "madvise", "never"]}
    defrag:
      description: The same for C(defrag).
      type: dict
      sample: {"current": "madvise", "available": ["always", "defer", "defer+madvise", "madvise", "never"]}
cpus_online:
  description: The CPUs online (C(/sys/devices/system/cpu/online), a cpulist); null when unreadable.
  returned: always
  type: str
  sample: 0-63
  version_added: 0.2.0
systemd_cpus:
  description: The CPUs PID 1 runs on now (C(Cpus_allowed_list) of C(/proc/1/status)); null when unreadable.
  returned: always
  type: str
  sample: 0-3,64-67
  version_added: 0.2.0
modules:
  description: Loaded kernel modules (C(/proc/modules)), sorted.
  returned: always
  type: list
  elements: str
  sample: ["tcp_bbr", "virtio_net"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.kernel.sysctl import host_info, key_path


def main():
    module = AnsibleModule(
        argument_spec=dict(names=dict(type='list', elements='str')),
        supports_check_mode=True,
    )
    names = module.params['names']
    if names is not None:
        bad = [name for name in names if key_path(name) is None]
        if bad:
            module.fail_json(msg='names: %s: not a sysctl key in dotted form (e.g. vm.swappiness)'
                             % ', '.join(repr(name) for name in bad))
    result = host_info(names)
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
