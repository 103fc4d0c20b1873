#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: audit_report
short_description: Write the node audit's report (JSON, HTML, JUnit XML, node_exporter textfiles) with the fleet checks and the diff
version_added: 0.1.0
description:
  - Run once per run (C(run_once)) after M(inferops.node.audit_host) ran on every host. Collects every host's
    results (a host without one - unreachable, or failed before the audit - gets a FAIL C(audit.reachable)),
    adds the fleet checks - firmware revision of each drive model against the fleet's majority (outliers named),
    drive temperature outliers, hosts whose results differ from their inventory group's - and writes one JSON
    document per run, C(<dest_dir>/audit-<UTC time>.json), atomically.
  - The document follows C(schemas/audit_report.schema.json) of this collection (C(schema_version) 1). When the
    controller has python-jsonschema, the report is checked against it before it is written.
  - Each host's entry carries its storage benchmark runs (C(benchmarks), from M(inferops.node.audit_host)) - the
    latest run and the one it is compared with, figure by figure with the ratio after / before; a host without
    runs says so (C(status) V(none)), which fails nothing.
  - Compares the results with the previous report (O(previous), else the newest C(audit-*.json) of O(dest_dir)) -
    what broke (PASS, SKIP or absent -> WARN or FAIL; WARN -> FAIL) and what got fixed, by host, check id and
    subject; the diff is printed and kept in the report (C(diff)).
  - Renders from the report, each written atomically when its option is set - O(html_path), a self-contained
    HTML page (no script, no network; a table of each host's benchmark runs side by side); O(junit_path), JUnit XML for CI (a test case per host, check and
    subject; FAIL is a failure, SKIP skipped); O(prom_dir), a node_exporter textfile C(<host>.prom) per host
    (C(inferops_audit_check{check,subject,severity,status}) and friends; see C(docs/audit.md)).
  - Prints a summary (counts, then every FAIL and WARN with its fix, then the diff) and fails after writing the
    reports when a check FAILed (unless O(fail_on_fail=false)).
  - An action plugin; writes on the controller only, also in check mode (the reports are the point of the run,
    the audit changes no managed host either way); RV(files) names what it wrote.
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
  html_path:
    description: Write the report as one self-contained HTML page here (replaced at each run). Omitted - none.
    type: path
  junit_path:
    description: Write the report as JUnit XML here (replaced at each run). Omitted - none.
    type: path
  prom_dir:
    description:
      - Write one node_exporter textfile-collector file per host here, C(<prom_dir>/<host>.prom) (created when
        missing). Copy each to its host's textfile directory (C(playbooks/audit.yml) does with
        C(inferops_audit_textfile_dir)). Omitted - none.
    type: path
  previous:
    description: The report to compare with. Omitted - the newest C(audit-*.json) of O(dest_dir) before this run.
    type: path
  compare:
    description: Compare with the previous report. A report of another C(schema_version) is not compared.
    type: bool
    default: true
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

- name: Write the report, the HTML page, JUnit XML for CI and a textfile per host; fail later
  inferops.node.audit_report:
    hosts: "{{ ansible_play_hosts_all }}"
    dest_dir: audit-reports
    html_path: audit-reports/audit.html
    junit_path: audit-reports/audit-junit.xml
    prom_dir: audit-reports/textfile
    fail_on_fail: false
  run_once: true
  register: audit
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
files:
  description: What was written - C(json) (the report), C(html) and C(junit) (null when not asked for), C(prom) (host -> textfile).
  returned: always
  type: dict
  sample: {json: audit-reports/audit-20261202T030000Z.json, html: audit-reports/audit.html, junit: null,
           prom: {node1: audit-reports/textfile/node1.prom}}
audit_diff:
  description:
    - The diff against the previous report (as C(diff) in the report) - C(previous), C(previous_generated),
      C(broke), C(fixed) (each C(host, id, subject, before, after, reason)), C(hosts_added), C(hosts_gone).
    - Null without a previous report of this schema version, or with O(compare=false).
  returned: always
  type: dict
diff_lines:
  description: The diff as printed (or the line saying why there is none).
  returned: always
  type: list
  elements: str
  sample: ['since audit-20261202T030858Z.json: 1 broke, 31 fixed', 'fixed node1 storage.md_present [/dev/md/models]: FAIL -> PASS (array models does not run)']
'''
