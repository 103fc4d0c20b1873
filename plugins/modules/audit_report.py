#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: audit_report
short_description: Write the node audit's JSON report with the fleet checks, print its summary, fail on a FAIL
version_added: 0.3.0
description:
  - Run once per run (C(run_once)) after M(inferops.node.audit_host) ran on every host. Collects every host's
    results (a host without one - unreachable, or failed before the audit - gets a FAIL C(audit.reachable)),
    adds the fleet checks - firmware revision of each drive model against the fleet's majority (outliers named),
    drive temperature outliers, hosts whose results differ from their inventory group's - and writes one JSON
    document per run, C(<dest_dir>/audit-<UTC time>.json), atomically.
  - The document follows C(schemas/audit_report.schema.json) of this collection (C(schema_version) 1). When the
    controller has python-jsonschema, the report is checked against it before it is written.
  - Prints a summary (counts, then every FAIL and WARN with its fix) and fails after writing the report when a
    check FAILed (unless O(fail_on_fail=false)).
  - An action plugin; writes on the controller only, also in check mode (the report is the point of the run).
options:
  hosts:
    description: The audited hosts (C(ansible_play_hosts_all), so that a host that became unreachable is reported).
    type: list
    elements: str
    required: true
  result_var:
    description: The variable each host registered M(inferops.node.audit_host)'s result in.
    type: str
    default: __audit_host
  dest_dir:
    description: Directory on the controller for the report (created when missing).
    type: path
    required: true
  fail_on_fail:
    description: Fail the task (after writing the report) when any check is V(FAIL).
    type: bool
    default: true
  allowed:
    description:
      - For tests - check id -> the statuses it may have; every other id may be V(PASS) or V(SKIP). The results
        outside are returned in RV(unexpected) (the task does not fail for them; assert on it).
      - Omitted - RV(unexpected) is empty.
    type: dict
attributes:
  check_mode:
    description: Writes the report on the controller in check mode too; changes no managed host.
    support: full
  diff_mode:
    description: Returns no diff.
    support: none
  platform:
    description: Any; runs on the controller.
    support: full
    platforms: posix
  action:
    description: Runs on the controller only.
    support: full
seealso:
  - module: inferops.node.audit_host
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Write the report
  inferops.node.audit_report:
    hosts: "{{ ansible_play_hosts_all }}"
    dest_dir: "{{ playbook_dir }}/audit-reports"
  run_once: true
'''

RETURN = r'''
report_path:
  description: The report written.
  returned: always
  type: str
  sample: /srv/audit-reports/audit-20261202T030000Z.json
status:
  description: V(FAIL), V(WARN) or V(PASS) - the worst result of the run.
  returned: always
  type: str
summary:
  description: Hosts, failed hosts, and results by status.
  returned: always
  type: dict
  sample: {hosts: 1, hosts_failed: 0, FAIL: 0, WARN: 0, SKIP: 12, PASS: 40}
summary_lines:
  description: The printed summary.
  returned: always
  type: list
  elements: str
unexpected:
  description: 'With O(allowed), the results whose status it does not allow, C(<host>: <id> [<subject>] <status>: <reason>).'
  returned: always
  type: list
  elements: str
schema_checked:
  description: Whether the report was checked against the schema (python-jsonschema on the controller).
  returned: always
  type: bool
'''
