#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: service_info
short_description: Read what apt has of some packages and what systemd says of some units, in one run
version_added: 0.3.0
author:
  - inferops.node maintainers (@inferops)
description:
  - One reading for a role that installs packages and keeps units enabled and running, so that a run with nothing
    to do runs no M(ansible.builtin.apt) and no M(ansible.builtin.systemd_service) task just to find that out.
  - Runs C(apt-cache policy) for O(packages) and one C(systemctl show) for O(units), in the C locale; never changes
    anything.
options:
  packages:
    description: Packages to ask apt about; empty - apt is not asked.
    type: list
    elements: str
    default: []
  units:
    description: systemd units to read (C(name.service), C(name.timer)); empty - systemd is not asked.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux hosts with systemd; Debian-family for O(packages).
    support: full
    platforms: posix
seealso:
  - module: inferops.node.docker_engine_info
'''

EXAMPLES = r'''
- name: Read the exporter's package and units
  inferops.node.service_info:
    packages: [prometheus-node-exporter]
    units: [prometheus-node-exporter.service]
  register: state

- name: Install it only when it is missing
  ansible.builtin.apt:
    name: "{{ state.missing }}"
  when: state.missing | length > 0
'''

RETURN = r'''
packages:
  description: Per package of O(packages), its versions (C(installed) and C(candidate), null for none); null for a
    package apt does not know.
  returned: always
  type: dict
  sample: {sysstat: {installed: 12.6.1-1, candidate: 12.6.1-1}}
missing:
  description: The packages of O(packages) not installed, in the order given.
  returned: always
  type: list
  elements: str
  sample: [prometheus-node-exporter]
units:
  description: Per unit of O(units) - C(enabled) (the UnitFileState, C(not-found) for a unit systemd does not
    know), C(active) (the ActiveState), C(load) (the LoadState).
  returned: always
  type: dict
  sample: {sysstat-collect.timer: {enabled: enabled, active: active, load: loaded}}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.apt_policy import read_packages
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.common.systemd_units import read_units


def main():
    module = AnsibleModule(
        argument_spec=dict(
            packages=dict(type='list', elements='str', default=[]),
            units=dict(type='list', elements='str', default=[]),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    packages = module.params['packages']
    report = read_packages(runner, packages, 'service_info')
    module.exit_json(changed=False, command_log=runner.log, packages=report,
                     missing=[name for name in packages if not (report.get(name) or {}).get('installed')],
                     units=read_units(runner, module.params['units'], 'service_info'))


if __name__ == '__main__':
    main()
