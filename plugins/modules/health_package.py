#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: health_package
short_description: Install the node health check and the audit code it runs as one Python zip application
version_added: 0.3.0
description:
  - Builds, on the controller, one zip application of a script (the node_health role's checker), the
    collection modules it runs by name (O(modules)), and everything they and the script import - the collection's
    C(plugins/module_utils) files at their collection paths (C(ansible_collections/inferops/node/...)) and the
    C(ansible.module_utils) files of the controller's ansible-core, which AnsiballZ sends with every module it runs.
    The host runs it with C(python3 -ES <dest>), without Ansible installed.
  - The code keeps its own imports, so the checker runs the audit's info modules and checks themselves, not a copy
    (C(plugins/module_utils/health/health_package.py)).
  - Installs it as M(inferops.node.boot_package) does - deterministic bytes (a second run reports no change),
    one file replaced atomically, the same C(--diff) (the files in the package with their sha1, then a text diff
    of each file that changes).
  - Fails before copying anything when a collection file imports more than the standard library, the collection
    and C(ansible.module_utils) (an import inside C(try/except ImportError) is optional), naming the file and the
    import.
options:
  script:
    description:
      - The script, looked up like M(ansible.builtin.copy)'s O(ansible.builtin.copy#module:src) (a role's
        C(files/) first). It becomes the zip's C(__main__.py).
    type: str
    required: true
  modules:
    description:
      - Modules of this collection the script imports by name at run time (C(importlib)), which no import
        statement shows - for example V(md_info).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - inferops.node.package_install
attributes:
  diff_mode:
    description:
      - As M(inferops.node.boot_package) - the files in the package with their sha1 and size before and after, and
        a text diff of each changed file when a package is already installed.
    support: full
  platform:
    description: Any POSIX managed node with Python 3 (the Python that runs Ansible's modules there).
    support: full
    platforms: posix
notes:
  - The package holds the controller's C(ansible.module_utils), so after upgrading ansible-core on the controller the
    next run installs a new package (changed), as it would send new AnsiballZ payloads.
seealso:
  - module: inferops.node.boot_package
  - module: inferops.node.audit_host
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Install the node health check with the audit's info modules
  inferops.node.health_package:
    script: inferops_node_health.py
    modules: [platform_info, md_info, sysctl_info]
    dest: /usr/local/lib/inferops-node-health.pyz
    owner: root
    group: root
    mode: "0644"
'''

RETURN = r'''
modules:
  description: The Python modules in the package, dotted, sorted (the collection's and C(ansible.module_utils)).
  returned: always
  type: list
  elements: str
  sample: [ansible.module_utils.basic, ansible_collections.inferops.node.plugins.module_utils.audit.check]
dest:
  description: The installed file (the other keys are M(ansible.builtin.copy)'s).
  returned: success
  type: str
  sample: /usr/local/lib/inferops-node-health.pyz
'''
