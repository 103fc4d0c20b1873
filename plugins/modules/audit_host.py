#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: audit_host
short_description: Evaluate the node audit's checks for one host from its info modules' results
version_added: 0.1.0
description:
  - Evaluates every check of the node audit's catalogue (C(plugins/module_utils/audit/*.py), listed in
    C(docs/audit.md)) on what the info modules returned on the host - it never reads the host itself.
  - Each result has an id, a title, a severity, the subject (a drive by serial, an array, a key), the expected
    value, the observed value, the evidence (file or command read), the fix (role or tag) and a status
    V(PASS), V(WARN), V(FAIL) or V(SKIP) with a reason.
  - The expected values are the roles' own variables for the host - the role's defaults, then the inventory,
    then the role's vars, templated with the host's variables (C(kernel_tuning), C(nvme_sched), C(md_raid_xfs),
    C(nvmeof_initiator)) - and the audit's thresholds (C(audit_*) variables, defaults in
    C(plugins/module_utils/audit/catalogue.py)).
  - The checks of a site's role judge the hosts of that site's group only (C(group_names)) - the
    C(nvme_sched) queues and the C(md_raid_xfs) fstrim timer the hosts of C(local_nvme), the fabric checks
    those of C(nvmeof_initiators); elsewhere they are V(SKIP) with the reason.
  - An action plugin; runs on the controller and contacts no host. Fails no host for a FAIL - the run-once
    M(inferops.node.audit_report) does, after writing the report.
options:
  reads:
    description:
      - The registered results of the info modules, by module name - V(platform_info), V(nvme_info),
        V(nvme_health_info), V(md_info), V(sysctl_info), V(irq_info), V(irq_pin), V(triton_info),
        V(compose_project_info), V(storage_benchmark_info). A missing, skipped or failed one makes the checks that need it V(SKIP) with the
        reason; a failed one is also in RV(failed_reads).
    type: dict
    required: true
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Any; runs on the controller.
    support: full
    platforms: posix
  action:
    description: Runs on the controller only.
    support: full
seealso:
  - module: inferops.node.audit_report
  - module: inferops.node.platform_info
  - module: inferops.node.nvme_health_info
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Evaluate the audit's checks
  inferops.node.audit_host:
    reads:
      platform_info: "{{ __audit_platform }}"
      nvme_health_info: "{{ __audit_nvme_health }}"
  register: __audit_host
'''

RETURN = r'''
results:
  description: One result per check and subject, in catalogue order.
  returned: always
  type: list
  elements: dict
  sample: [{id: nvme.temperature, title: Composite temperature below the thresholds, severity: major,
            subject: LABMODEL0 (nvme0 QEMU NVMe Ctrl), status: PASS, expected: < 70 C, observed: 50 C (323 K),
            evidence: nvme smart-log /dev/nvme0 -o json, fix: cooling / airflow, reason: null}]
expected:
  description: The values the checks compared with, by name, and the host's C(group_names).
  returned: always
  type: dict
drives:
  description: The NVMe controllers of V(nvme_health_info) (for the fleet checks), null when it did not run.
  returned: always
  type: list
  elements: dict
benchmarks:
  description:
    - The host's storage benchmark runs from V(storage_benchmark_info) (C(plugins/module_utils/audit/benchmark.py))
      - the latest run and the one it is compared with (the newest earlier run with another label), each
      C(file, label, started_at, profile, kernel, host), and C(figures), one C({figure, before, after, ratio})
      per figure (MB/s medians, ratio = after / before).
    - C(status) V(compared), V(single) (runs of one label only), V(none) (no benchmark run - not a failure) or
      V(unread) (the read did not run or failed; C(reason) says why).
  returned: always
  type: dict
  sample: {status: compared, reason: null, directory: /var/lib/inferops/benchmarks, files: 2, errors: [],
           latest: {file: /var/lib/inferops/benchmarks/20261203T101112Z.json, label: after-tuning,
                    started_at: "2026-12-03T10:11:12Z", profile: local_nvme, kernel: 6.1.0-57-amd64, host: node1},
           before: {file: /var/lib/inferops/benchmarks/20261203T101052Z.json, label: before-tuning,
                    started_at: "2026-12-03T10:10:52Z", profile: local_nvme, kernel: 6.1.0-57-amd64, host: node1},
           figures: [{figure: page_cache/mbps, before: 1465.5, after: 834.2, ratio: 0.57}]}
failed_reads:
  description:
    - The registered results of the reads that failed, by module name (C(msg) says why); empty when every read
      worked. Their checks are V(SKIP), so a gate that must not pass an unread host looks here
      (C(playbooks/tasks/audit_verify.yml), the rollout's verify step).
  returned: always
  type: dict
  sample: {sysctl_info: {failed: true, msg: "/proc/sys: Permission denied"}}
'''
