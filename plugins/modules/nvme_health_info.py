#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nvme_health_info
short_description: Report the health of every NVMe controller - temperature, critical warnings, wear, media errors, PCIe link, firmware
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Runs C(nvme smart-log /dev/nvmeN -o json) for every NVMe controller (C(/sys/class/nvme)) and reports the
    temperature (the log gives Kelvin; returned in Kelvin and Celsius), the critical warning bits, available
    spare and its threshold, percentage used, media errors, error log entries, power-on hours and unsafe
    shutdowns.
  - With each controller its identity, firmware revision and PCIe link (current and maximum speed and width)
    from sysfs, as M(inferops.node.nvme_info) reads them.
  - A controller whose log cannot be read is reported with C(error) set; the module does not fail for it.
  - Never changes anything.
options: {}
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux sysfs and nvme-cli.
    support: full
    platforms: posix
requirements:
  - nvme-cli
seealso:
  - module: inferops.node.nvme_info
'''

EXAMPLES = r'''
- name: Read the drives' health
  inferops.node.nvme_health_info:
  register: nvme_health

- name: Drives warmer than 70 C
  ansible.builtin.debug:
    msg: "{{ nvme_health.controllers | selectattr('temperature_c') | selectattr('temperature_c', 'gt', 70) | map(attribute='serial') }}"
'''

RETURN = r'''
controllers:
  description: Every NVMe controller, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Kernel name.
      type: str
      sample: nvme0
    device:
      description: The character device read.
      type: str
      sample: /dev/nvme0
    model:
      description: Model number.
      type: str
    serial:
      description: Serial number.
      type: str
    firmware:
      description: Firmware revision.
      type: str
      sample: GDC5902Q
    transport:
      description: V(pcie), V(tcp), V(rdma), V(fc) or V(loop).
      type: str
    state:
      description:
        - The controller's state as the kernel reports it (V(live), V(connecting), V(resetting), V(deleting),
          V(dead)); a fabric controller that is not live answers no SMART log until it reconnects.
      type: str
      sample: live
      version_added: 0.2.0
    pci_address:
      description: PCI address, null for fabrics.
      type: str
    pci_link:
      description: As M(inferops.node.nvme_info) returns it (current and maximum speed and width, C(downgraded)).
      type: dict
    temperature_k:
      description: Composite temperature in Kelvin as the log reports it; null when not reported.
      type: int
      sample: 323
    temperature_c:
      description: The same in degrees Celsius.
      type: int
      sample: 50
    sensors_c:
      description: Temperature sensors 1-8 that report a value, in Celsius.
      type: list
      elements: int
    critical_warning:
      description: Critical warning bits (0 when none).
      type: int
    available_spare:
      description: Available spare in percent.
      type: int
    available_spare_threshold:
      description: Threshold of the available spare in percent.
      type: int
    percent_used:
      description: Percentage of the rated endurance used (may exceed 100).
      type: int
    media_errors:
      description: Unrecovered data integrity errors.
      type: int
    error_log_entries:
      description: Entries in the error information log over the life of the controller.
      type: int
    power_on_hours:
      description: Power-on hours.
      type: int
    unsafe_shutdowns:
      description: Unsafe shutdowns.
      type: int
    warning_temp_time:
      description: Minutes above the warning temperature threshold.
      type: int
    critical_comp_time:
      description: Minutes above the critical temperature threshold.
      type: int
    error:
      description: Why the log could not be read, null when it was.
      type: str
command_log:
  description: The commands run, C({argv, rc, ran}).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_devices
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.storage.nvme_health import health


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    runner = CommandRunner(module)
    controllers = nvme_devices.controllers()
    result = health(runner, controllers) if controllers else []
    module.exit_json(changed=False, controllers=result, command_log=runner.log)


if __name__ == '__main__':
    main()
