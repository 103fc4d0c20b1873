#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: boot_package
short_description: Install a boot-time script and the module code it runs as one Python zip application
version_added: 0.2.0
description:
  - Builds, on the controller, one zip application of a role's boot-time script (for example the irq_affinity
    role's C(inferops_irq_pin.py)) and the collection's C(plugins/module_utils) files it imports, and installs
    it with M(ansible.builtin.copy). The host runs it with C(python3 -ES <dest>), without Ansible.
  - The script becomes the zip's C(__main__.py); the files it names in C(from inferops.<package> import ...)
    (C(from inferops.interrupts import irq)), and every module_utils file they import with relative imports
    (C(from . import irq_devices), C(from ..common import sysfs)), become the package C(inferops) inside the zip,
    laid out as C(plugins/module_utils) (C(inferops/common/sysfs.py), with an empty C(__init__.py) per package).
  - The zip is the same byte for byte on every controller (sorted entries, stored uncompressed, fixed times and
    modes), so a second run reports no change. One file is copied per run and replaced atomically.
  - Fails before copying anything when an imported file needs more than the standard library and other
    module_utils files (an import inside C(try/except ImportError) is optional), naming the file and the import.
options:
  script:
    description:
      - The boot-time script, looked up like M(ansible.builtin.copy)'s O(ansible.builtin.copy#module:src) (a role's
        C(files/) first).
    type: str
    required: true
extends_documentation_fragment:
  - inferops.node.package_install
attributes:
  diff_mode:
    description:
      - The same in check mode and in a real run, nothing when the file does not change. First the files in the
        package with their sha1 and size, before and after (the first line is the zip's own sha1, the C(checksum)
        M(ansible.builtin.copy) returns). Then, when a package is already installed, a text diff of each file in it
        that is added, removed or changed, named C(<dest>/<file>) (M(ansible.builtin.copy) could only say that the
        zip is binary). A first install lists its files without printing them. A change of owner or mode alone as
        M(ansible.builtin.copy) shows it.
      - Reads the installed file with M(ansible.builtin.slurp) before copying, one module run more.
    support: full
  platform:
    description: Any POSIX managed node with Python 3.
    support: full
    platforms: posix
seealso:
  - module: ansible.builtin.copy
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Install the IRQ pin script with the irq_pin module's code
  inferops.node.boot_package:
    script: inferops_irq_pin.py
    dest: /usr/local/lib/inferops-irq-pin.pyz
    owner: root
    group: root
    mode: "0644"
'''

RETURN = r'''
modules:
  description: The module_utils files in the package as module names below C(plugins/module_utils) (C(package.file),
    without C(.py)), sorted.
  returned: always
  type: list
  elements: str
  sample: [common.cpulist, common.sysfs, interrupts.irq, interrupts.irq_devices]
dest:
  description: The installed file (the other keys are M(ansible.builtin.copy)'s).
  returned: success
  type: str
  sample: /usr/local/lib/inferops-irq-pin.pyz
'''
