#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: sysctl_runtime
short_description: Set kernel parameters (sysctl) now, without writing a file
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Sets the runtime value of several kernel parameters in one call by writing their files under C(/proc/sys),
    only where the value differs, and reads each value back.
  - Values are compared as the role P(inferops.node.kernel_tuning#role) compares them (whitespace collapsed, integers
    canonical), so V(0010) and V(10) are equal and V(4096  87380) equals V(4096 87380).
  - Writes no file; what applies at boot is a sysctl.d drop-in the caller installs (for example with
    M(ansible.builtin.template)).
  - Every key and value is validated against the running kernel before anything is written.
options:
  parameters:
    description:
      - Kernel parameters to set, dotted key (V(vm.swappiness); a C(/) stands for a dot inside a component, as in
        sysctl.d(5)) to value (an integer, or a string; several numbers as one string separated by spaces).
      - Every key must have a file under C(/proc/sys) (load the kernel module that provides it first).
      - A V(null) value is ignored.
    type: dict
    required: true
attributes:
  check_mode:
    description: Nothing is written; RV(parameters[].after) is the value that would be set.
    support: full
  diff_mode:
    description: The values of O(parameters) before and after, one C(key = value) line each.
    support: full
  platform:
    description: Linux procfs.
    support: full
    platforms: posix
notes:
  - The kernel may adjust a value it accepts (C(vm.nr_hugepages) when memory is short, a clamped range). Such a
    key is written, reported in RV(not_applied) with the value read back, and a warning says so; the module does
    not fail, so the caller decides (the role P(inferops.node.kernel_tuning#role) reports drift with the file that
    sets the key at boot).
  - A value the kernel refuses (C(EINVAL) on the write) fails the module; keys before it in O(parameters) stay
    set.
  - The rule (key paths, validation, comparison) is C(plugins/module_utils/kernel/sysctl.py), the same that
    M(inferops.node.sysctl_info) and the filter P(inferops.node.sysctl_plan#filter) use.
seealso:
  - module: inferops.node.sysctl_info
  - module: ansible.posix.sysctl
    description: Sets one key and writes it to a file.
'''

EXAMPLES = r'''
- name: Set the wanted kernel parameters now (the drop-in applies them at boot)
  inferops.node.sysctl_runtime:
    parameters:
      vm.swappiness: 1
      net.core.somaxconn: 1024
      net.ipv4.tcp_rmem: 4096 87380 6291456
  register: kernel_now

- name: md resync speed limits (md_mod loaded)
  inferops.node.sysctl_runtime:
    parameters:
      dev.raid.speed_limit_min: 10000
      dev.raid.speed_limit_max: 50000
'''

RETURN = r'''
parameters:
  description: One entry per key of O(parameters) (V(null) values left out), in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    key:
      description: The dotted key.
      type: str
      sample: vm.swappiness
    path:
      description: Its file under C(/proc/sys).
      type: str
      sample: /proc/sys/vm/swappiness
    wanted:
      description: The wanted value in compared form.
      type: str
      sample: "1"
    before:
      description: The value before the call (compared form).
      type: str
      sample: "60"
    after:
      description: The value read back after writing; the wanted value in check mode.
      type: str
      sample: "1"
    changed:
      description: Whether the key was (in check mode would be) written.
      type: bool
changed_keys:
  description: The keys that were (in check mode would be) written.
  returned: always
  type: list
  elements: str
  sample: [vm.swappiness]
not_applied:
  description: Keys whose value read back after writing differs from the wanted one (the kernel adjusted it).
  returned: always
  type: list
  elements: str
  sample: []
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.kernel import sysctl
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown


def plan(parameters):
    """``(entries, errors)``: per key its path, wanted, current and whether it differs; the problems of the
    request against the running kernel (the role's rule, ``sysctl.entry_errors``)."""
    wanted = dict((key, value) for key, value in parameters.items() if value is not None)
    paths = dict((key, sysctl.key_path(key)) for key in wanted)
    values = sysctl.read_values([key for key in wanted if paths[key]])
    runtime = dict((key, sysctl.normalize(value)) for key, value in values.items() if value is not None)
    errors = sysctl.entry_errors(
        dict((key, {'value': value, 'source': 'parameters[%s]' % shown(key)}) for key, value in wanted.items()),
        dict((key, path) for key, path in paths.items() if path), runtime)
    entries = []
    for key, value in wanted.items():
        want = sysctl.normalize(value)
        before = runtime.get(key)
        entries.append({'key': key, 'path': paths[key], 'wanted': want, 'before': before, 'after': before,
                        'changed': sysctl.differs(before, want)})
    return entries, errors


def main():
    module = AnsibleModule(
        argument_spec=dict(parameters=dict(type='dict', required=True)),
        supports_check_mode=True,
    )
    entries, errors = plan(module.params['parameters'])
    result = dict(changed=False, parameters=entries, changed_keys=[e['key'] for e in entries if e['changed']],
                  not_applied=[])
    if errors:
        module.fail_json(msg='; '.join(errors), **result)
    result['changed'] = bool(result['changed_keys'])

    for entry in entries:
        if not entry['changed']:
            continue
        if module.check_mode:
            entry['after'] = entry['wanted']
            continue
        try:
            sysfs.write_attr(entry['path'], entry['wanted'])
        except sysfs.SysfsWriteError as exc:
            module.fail_json(msg='%s: %s' % (entry['key'], to_native(exc.strerror)), **result)
        read = sysfs.read_attr(entry['path'])
        entry['after'] = sysctl.normalize(read) if read is not None else None
        if sysctl.differs(entry['after'], entry['wanted']):
            result['not_applied'].append(entry['key'])
            module.warn('%s: wrote %s, the kernel reports %s' % (entry['key'], entry['wanted'], entry['after']))

    if module._diff:
        result['diff'] = dict(
            before_header='kernel parameters', after_header='kernel parameters',
            before=''.join('%s = %s\n' % (e['key'], e['before']) for e in entries),
            after=''.join('%s = %s\n' % (e['key'], e['after']) for e in entries))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
