# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where and how a zip application built on the controller is installed (boot_package, health_package: both hand
it to ansible.builtin.copy)."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  dest:
    description:
      - Where the zip application is installed on the managed node.
    type: str
    required: true
  mode:
    description:
      - The file's mode, as for M(ansible.builtin.copy).
    type: raw
    default: '0644'
  owner:
    description:
      - The file's owner, as for M(ansible.builtin.copy).
    type: str
  group:
    description:
      - The file's group, as for M(ansible.builtin.copy).
    type: str
attributes:
  check_mode:
    description: As M(ansible.builtin.copy) - reports whether the file would change and changes nothing.
    support: full
  action:
    description: Builds the zip on the controller, then runs M(ansible.builtin.copy).
    support: full
'''
