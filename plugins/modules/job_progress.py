#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: job_progress
short_description: Follow an async job and print the progress line of its status file
version_added: 0.1.0
description:
  - Follows a job started with C(async) and C(poll=0) - the result of M(ansible.builtin.async_status) plus
    the JSON status file the job keeps up to date (for example M(inferops.node.page_cache)'s O(inferops.node.page_cache#module:status_file)).
  - Prints the status file's C(line) on the controller at every poll, also without C(-v).
  - With O(timeout), one task follows the job to its end, a line every O(wait) seconds - no C(until) loop, so
    no C(FAILED - RETRYING) lines while a job is working. Without it, one poll (for C(until)/C(retries)).
  - The result is the job's own once it has ended (a failed job fails the task).
  - An action plugin; the status file is read with M(ansible.builtin.slurp).
options:
  jid:
    description:
      - The job id (C(ansible_job_id) of the task started with C(async)).
    type: str
    required: true
  status_file:
    description:
      - Path of the job's JSON status file on the managed node. A missing file reads as no status yet.
    type: str
  label:
    description:
      - Word printed before the progress line.
    type: str
    default: progress
  wait:
    description:
      - Seconds this poll may wait for the job to finish, asking M(ansible.builtin.async_status) again every
        second; it returns as soon as the job has finished (or failed), else after O(wait) with the job running.
      - With O(wait) set to the loop's interval and C(delay=0), the loop ends about a second after the job,
        where C(delay) alone waits out the whole interval.
      - V(0) polls once.
    type: float
    default: 0
    version_added: 0.2.0
  timeout:
    description:
      - Follow the job until it ends, polling every O(wait) seconds (at least every second), for at most
        O(timeout) seconds; fails when the job still runs then. Set it a little above the job's C(async) limit.
      - V(0) polls once.
    type: float
    default: 0
    version_added: 0.2.0
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Any POSIX managed node.
    support: full
    platforms: posix
  action:
    description: Runs on the controller and polls the managed node.
    support: full
  async:
    description: Follows async jobs; is not run asynchronously itself.
    support: none
seealso:
  - module: ansible.builtin.async_status
  - module: inferops.node.page_cache
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Start loading the model repository into the page cache
  inferops.node.page_cache:
    paths: [/data/models]
    state: resident
    status_file: /run/inferops-page-cache.json
  async: 3600
  poll: 0
  register: preload

- name: Follow it to its end, printing the progress every 5 seconds (its async limit plus one interval)
  inferops.node.job_progress:
    jid: "{{ preload.ansible_job_id }}"
    status_file: /run/inferops-page-cache.json
    label: page cache
    wait: 5
    timeout: 3605
  register: preload_status
'''

RETURN = r'''
finished:
  description: Whether the job has ended. The job's own result keys come with it once it has.
  returned: always
  type: bool
started:
  description: Whether the job has started.
  returned: always
  type: bool
ansible_job_id:
  description: The job id.
  returned: always
  type: str
job_changed:
  description: Whether the finished job reported a change (the poll itself never does).
  returned: always
  type: bool
progress:
  description: The status file's JSON; empty before the job wrote it or without O(status_file).
  returned: always
  type: dict
  sample: {"state": "reading", "percent": 42.0, "line": "reading 42.0 % (1.20 GiB of 2.86 GiB, ...)"}
'''
