#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: storage_benchmark_info
short_description: Report the storage benchmark run records kept on a host
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads the run records the role C(inferops.node.storage_benchmark) keeps in its results directory - one
    C(<UTC timestamp>.json) per run (the name M(inferops.node.storage_benchmark) returns as C(record_file)),
    each with the host, the inventory's profile, the kernel, the label and the figures - newest first, at most
    O(count).
  - C(latest.json) (the role's copy of the newest run), C(baseline.json) and any other file name are not
    records of a run and are not read.
  - A file that cannot be read, is not JSON or lacks a record's fields is reported in RV(errors), not as a
    failure. A missing directory is no records (RV(exists) false), not a failure.
  - Never changes anything and runs no command. The node audit (C(playbooks/tasks/audit_host.yml), through the
    role's entry point C(tasks/info.yml)) reads it to compare the latest run with the one before it.
options:
  path:
    description: The results directory (the role's C(storage_benchmark_results_dir)).
    type: path
    default: /var/lib/inferops/benchmarks
  count:
    description:
      - Read at most this many record files, the newest (file names sort by time). A file that is not a record
        counts too, so a read stays bounded.
    type: int
    default: 10
  baseline:
    description:
      - Also read this run record (the role's C(storage_benchmark_baseline), what its gate compares a run with),
        into RV(baseline). One that cannot be read is RV(baseline_error), not a failure.
      - Omitted - none.
    type: path
  details:
    description:
      - Keep each record's C(benchmark) (the module's whole result - plan, every fio case with its repetitions,
        the command log; about 17 KB per run). Omitted - the records without it.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Any POSIX host.
    support: full
    platforms: posix
notes:
  - The reading and the record's format checks are C(plugins/module_utils/storage/storage_benchmark.py)
    (C(read_records), C(record_errors)), which also pick the record the latest run is compared with
    (C(compared_pair)) for the node audit and C(tools/bench/storage_benchmark_compare.py).
seealso:
  - module: inferops.node.storage_benchmark
  - module: inferops.node.audit_host
'''

EXAMPLES = r'''
- name: Read the newest benchmark runs of the host
  inferops.node.storage_benchmark_info:
  register: benchmarks

- name: Show the latest run's figures
  ansible.builtin.debug:
    msg: "{{ benchmarks.records[0].label }}: {{ benchmarks.records[0].figures }}"
  when: benchmarks.records | length > 0

- name: The newest runs and the baseline the role's gate compares with
  inferops.node.storage_benchmark_info:
    baseline: /var/lib/inferops/benchmarks/baseline.json
  register: benchmarks

- name: The last two runs with everything the module measured, from another directory
  inferops.node.storage_benchmark_info:
    path: /srv/benchmarks
    count: 2
    details: true
  register: last_two
'''

RETURN = r'''
directory:
  description: O(path).
  returned: always
  type: str
  sample: /var/lib/inferops/benchmarks
exists:
  description: Whether O(path) exists.
  returned: always
  type: bool
files:
  description: How many record files O(path) holds (O(count) or fewer were read).
  returned: always
  type: int
  sample: 2
records:
  description: The run records read, newest first, each as the role wrote it plus C(file).
  returned: always
  type: list
  elements: dict
  contains:
    file:
      description: The record's file.
      type: str
      sample: /var/lib/inferops/benchmarks/20261203T101112Z.json
    host:
      description: The inventory host name of the run.
      type: str
    profile:
      description: The inventory's kernel tuning profile (C(storage_benchmark_profile), else C(kernel_tuning_profile)).
      type: str
      sample: local_nvme
    label:
      description: The run's label (C(storage_benchmark_label)).
      type: str
      sample: after-tuning
    kernel:
      description: Kernel release of the run.
      type: str
    started_at:
      description: When the run started, ISO 8601 UTC.
      type: str
      sample: "2026-12-03T10:11:12Z"
    figures:
      description: The run's figures, MB/s medians (higher is better), by name.
      type: dict
      sample: {"fio/directory/direct/bs=1M/jobs=1,qd=32": 633.1, "page_cache/mbps": 834.2}
    benchmark:
      description: The module's whole result, with O(details) only.
      type: dict
      returned: with O(details)
baseline:
  description: The record of O(baseline) (as an element of RV(records)); null without O(baseline) or when it cannot be read.
  returned: always
  type: dict
baseline_error:
  description: Why O(baseline) could not be read as a run record; null when it was, or without O(baseline).
  returned: always
  type: str
  sample: "[Errno 2] No such file or directory: '/var/lib/inferops/benchmarks/baseline.json'"
errors:
  description: The files of the newest O(count) that are not records, each C(file) and C(msg) (why).
  returned: always
  type: list
  elements: dict
  sample: [{"file": "/var/lib/inferops/benchmarks/20261203T101500Z.json",
            "msg": "Expecting ',' delimiter: line 8 column 1 (char 188)"}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark import read_record, read_records


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/var/lib/inferops/benchmarks'),
            count=dict(type='int', default=10),
            baseline=dict(type='path'),
            details=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    if module.params['count'] < 1:
        module.fail_json(msg='count=%d: must be 1 or more' % module.params['count'])
    try:
        result = read_records(module.params['path'], module.params['count'], module.params['details'])
    except OSError as exc:
        module.fail_json(msg='path=%s: %s' % (module.params['path'], exc))
    result['baseline'], result['baseline_error'] = None, None
    if module.params['baseline']:
        result['baseline'], result['baseline_error'] = read_record(module.params['baseline'], module.params['details'])
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
