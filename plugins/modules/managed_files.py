#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: managed_files
short_description: A role's files, directories and removals, with one reading of the host
version_added: 0.2.0
description:
  - Renders every file on the controller (a role's C(templates/), literal content, a file from C(files/), or a boot
    package as M(inferops.node.boot_package) builds it), reads the host once with M(ansible.builtin.find) over the
    files' parent directories (type, mode, owner, group, sha1), and writes, creates or removes every entry that
    differs in one run of M(inferops.node.managed_files_apply).
  - A run with nothing to change costs one remote module run, a run that changes any number of entries two, where
    one M(ansible.builtin.template) task per file costs two module runs and two commands per file. In check mode the
    reading decides alone (one module run). With C(--diff) each entry that differs goes through
    M(ansible.builtin.copy) (or M(inferops.node.boot_package)) and M(ansible.builtin.file) instead, for their diffs.
  - The files are handled in the order given; list a directory before the files in it.
options:
  files:
    description: What the host must hold.
    type: list
    elements: dict
    required: true
    suboptions:
      dest:
        description: Absolute path on the managed node.
        type: str
        required: true
      state:
        description: C(file), C(directory) or C(absent) (removed when present).
        type: str
        choices: [file, directory, absent]
        default: file
      template:
        description: A template, looked up like M(ansible.builtin.template)'s O(ansible.builtin.template#module:src).
        type: str
      template_vars:
        description: Variables for this template only.
        type: dict
      content:
        description: The file's content.
        type: str
      src:
        description: A file, looked up like M(ansible.builtin.copy)'s O(ansible.builtin.copy#module:src).
        type: str
      package:
        description: A boot-time script, installed as M(inferops.node.boot_package) installs it.
        type: str
      validate:
        description: A command that checks the new file before it replaces the old one, as for M(ansible.builtin.copy).
        type: str
      mode:
        description: Octal mode, as C("0644").
        type: str
      owner:
        description: Owner; the task's O(owner) when not given.
        type: str
      group:
        description: Group; the task's O(group) when not given.
        type: str
  owner:
    description: Owner of every entry that names none.
    type: str
  group:
    description: Group of every entry that names none.
    type: str
attributes:
  check_mode:
    description:
      - Reads the host and reports what would change from that reading.
      - With C(--diff), through M(ansible.builtin.copy) and M(ansible.builtin.file) in check mode.
    support: full
  diff_mode:
    description: The diffs of M(ansible.builtin.copy), M(inferops.node.boot_package) and M(ansible.builtin.file) for what changes.
    support: full
  platform:
    description: Any POSIX managed node with Python 3.
    support: full
    platforms: posix
  action:
    description:
      - Renders on the controller, then runs M(ansible.builtin.find) and, for what differs,
        M(inferops.node.managed_files_apply) (with C(--diff), the modules above).
    support: full
seealso:
  - module: ansible.builtin.template
  - module: inferops.node.boot_package
  - module: inferops.node.managed_files_apply
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Write the drop-in and the THP file, or remove them
  inferops.node.managed_files:
    owner: root
    group: root
    files:
      - {dest: /etc/sysctl.d/90-inferops.conf, template: sysctl.conf.j2, mode: "0644"}
      - {dest: /etc/tmpfiles.d/inferops-thp.conf, state: absent}
  register: written
  notify: Apply the sysctl settings
'''

RETURN = r'''
files:
  description: Each entry, in order, with whether it changed.
  returned: always
  type: list
  elements: dict
  sample: [{dest: /etc/sysctl.d/90-inferops.conf, state: file, changed: false}]
changed_files:
  description: The paths that changed (or would, in check mode).
  returned: always
  type: list
  elements: str
'''
