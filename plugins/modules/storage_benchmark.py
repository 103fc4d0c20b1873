#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: storage_benchmark
short_description: Measure what decides a model server's cold start - sequential reads, page cache load, safetensors load
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - A measurement, not a change - the module always reports C(changed=false). The only things it writes are
    its own scratch files - a directory C(.inferops-bench-*) created in O(directory) and removed again
    before it returns (also when a measurement fails) - and C(3) into C(/proc/sys/vm/drop_caches) (after
    C(sync)) before every repetition, which empties the clean page cache of the whole host.
  - In O(directory) (the model mount) it generates a model of O(file_count) safetensors shards of
    O(file_size) each (random data, F16 tensors, with C(model.safetensors.index.json)). It refuses to start,
    naming the shortfall, when the file system has less free space than those files plus O(space_reserve).
  - C(fio) sequential reads (C(--rw=read --readonly), fio's JSON output) of those shards and, with
    O(device), of a block device - every combination of O(block_sizes), O(modes) and O(jobs), each
    O(repetitions) times with the caches dropped before each; the median, min and max MB/s per case.
    On the directory each fio job reads its own shards one after another (as loader workers do); on the
    device each job reads its own range of the first O(device_size) bytes. A device is only ever read -
    C(--readonly) makes fio refuse any write, so a fabric or array device is safe.
  - The time to load the generated model (and O(model_repository), when given) into the page cache from
    cold, with the loader of M(inferops.node.page_cache).
  - The LLM engines' loader pattern - every tensor of every shard through
    C(safetensors.safe_open(path, framework="numpy")) (memory-mapped, no GPU) - from a cold cache, and again
    after the page cache preload, so the figures show what preloading buys an engine such as vLLM. When the
    Python running the module cannot import C(safetensors) or C(numpy), that measurement reports
    C(status=skipped) with the missing package named.
options:
  directory:
    description:
      - Directory on the file system to measure (the model mount); the scratch files are created below it.
      - Required unless only O(device) is measured (then the page cache and safetensors measurements, which
        need files, are skipped).
    type: path
  device:
    description:
      - Block device to read sequentially as well (an md array, an NVMe namespace, a fabric namespace).
        Opened read-only; fio runs with C(--readonly).
    type: path
  device_size:
    description:
      - Bytes read from the start of O(device) per fio run (capped at the device's size), bytes or a binary
        unit (V(1G)).
    type: raw
    default: 1G
  block_sizes:
    description:
      - Block sizes of the fio reads, bytes or binary units. V(chunk) is the chunk size of the md array
        holding O(directory) (or of O(device)); it is left out, with a note, when there is no md array.
    type: list
    elements: str
    default: [1M, chunk]
  modes:
    description:
      - V(direct) - C(O_DIRECT) reads with C(libaio) at each job's queue depth; V(buffered) - reads through
        the page cache with C(psync) (one request in flight per job, so only C(numjobs) varies).
    type: list
    elements: str
    choices: [direct, buffered]
    default: [direct, buffered]
  jobs:
    description:
      - Parallel readers and queue depths, one fio case each.
      - On O(directory) C(numjobs) must not exceed O(file_count) (each job reads its own shards).
    type: list
    elements: dict
    default: [{numjobs: 1, iodepth: 32}, {numjobs: 4, iodepth: 8}]
    suboptions:
      numjobs:
        description: Parallel fio jobs (1-64).
        type: int
        required: true
      iodepth:
        description: Queue depth of each job for direct reads (1-256).
        type: int
        default: 32
  random_reads:
    description:
      - Random read cases (C(--rw=randread), C(O_DIRECT), C(libaio)) on each target, beside the sequential ones -
        the access of an embedding or vector index (seed 000's index array). Every job reads the whole file set
        (or device range) at random for O(random_read_seconds). Empty - none.
      - Their figures are C(fio/<target>/direct/randread/bs=<size>/jobs=<n>,qd=<depth>) (MB/s; the case keeps
        IOPS and the p99 completion latency).
    type: list
    elements: dict
    default: []
    version_added: 0.2.0
    suboptions:
      bs:
        description: Block size, bytes or a binary unit (4K-64M, a multiple of 4K).
        type: str
        default: 4K
      numjobs:
        description: Parallel fio jobs (1-64).
        type: int
        default: 8
      iodepth:
        description: Queue depth of each job (1-256).
        type: int
        default: 32
  random_read_seconds:
    description:
      - How long each random read run lasts (1-3600 seconds; C(--time_based)).
    type: int
    default: 10
    version_added: 0.2.0
  repetitions:
    description:
      - How often each measurement runs (1-20); caches are dropped before each repetition.
    type: int
    default: 3
  file_count:
    description:
      - Number of safetensors shards generated in O(directory) (1-64).
    type: int
    default: 4
  file_size:
    description:
      - Size of each shard, bytes or a binary unit; rounded down to a multiple of 1 MiB and of the
        block sizes. At least 2 MiB.
    type: raw
    default: 1G
  space_reserve:
    description:
      - Free space that must remain on O(directory)'s file system after the shards are written, bytes or
        a binary unit.
    type: raw
    default: 1G
  page_cache:
    description:
      - Measure the time to load the generated model into the page cache from cold.
      - The warm safetensors load (O(safetensors)) preloads the shards with the same loader whatever this says.
    type: bool
    default: true
  safetensors:
    description:
      - Measure the safetensors loader pattern, cold and after the page cache preload.
    type: bool
    default: true
  model_repository:
    description:
      - An existing model repository whose load into the page cache from cold is timed too (read only).
    type: path
  fio_runtime:
    description:
      - Seconds one fio run may take (C(--runtime)); a run that reaches it reports what it read until then.
    type: int
    default: 600
attributes:
  check_mode:
    description: Validates the options, checks the free space and returns the plan (the fio cases and their
      argument lists, the files it would generate); creates, runs and drops nothing.
    support: full
  diff_mode:
    description: Nothing is changed, so there is no diff.
    support: none
  platform:
    description: Linux (C(/proc/sys/vm/drop_caches), C(O_DIRECT), C(fio) with C(libaio)).
    support: full
    platforms: posix
notes:
  - Run with C(become) - dropping caches and reading a device need root.
  - MB/s figures are decimal (10^6 bytes per second), as fio reports them.
  - Dropping the caches makes everything else on the host read from storage again for a while; do not
    run this on a node that serves traffic.
requirements:
  - fio (with the libaio engine) on the host.
  - For the safetensors measurement - the Python modules C(safetensors) and C(numpy) in the interpreter
    that runs the module.
seealso:
  - module: inferops.node.page_cache
  - name: fio documentation
    description: Flexible I/O tester.
    link: https://fio.readthedocs.io/en/latest/fio_doc.html
'''

EXAMPLES = r'''
- name: Measure the model array before tuning
  inferops.node.storage_benchmark:
    directory: /data/models
    device: /dev/md/models
    file_count: 4
    file_size: 2G
  become: true
  register: bench

- name: Only direct 1 MiB reads of a fabric namespace (read-only)
  inferops.node.storage_benchmark:
    device: /dev/disk/by-id/nvme-uuid.3d0c2f1e-0000-4000-8000-000000000001
    block_sizes: [1M]
    modes: [direct]
    jobs:
      - {numjobs: 1, iodepth: 32}
      - {numjobs: 8, iodepth: 16}
  become: true
'''

RETURN = r'''
directory:
  description: O(directory), when given.
  returned: always
  type: str
  sample: /data/models
device:
  description: O(device), when given.
  returned: always
  type: str
  sample: /dev/md/models
kernel:
  description: Kernel release of the host (C(uname -r)).
  returned: always
  type: str
  sample: 6.1.0-57-amd64
started_at:
  description: When the measurements started, ISO 8601 UTC.
  returned: always
  type: str
  sample: "2026-12-02T07:40:01Z"
record_file:
  description:
    - The file name the storage_benchmark role keeps this run's record under in its results directory
      (RV(started_at) without C(-) and C(:)), which M(inferops.node.storage_benchmark_info) reads.
  returned: always
  type: str
  sample: 20261202T074001Z.json
seconds:
  description: Wall time of the whole module run.
  returned: always
  type: float
  sample: 212.4
chunk_size:
  description: Chunk size in bytes of the md array under the directory or device, or null.
  returned: always
  type: int
  sample: 524288
plan:
  description: What was (in check mode - would be) generated and run.
  returned: always
  type: dict
  contains:
    file_count:
      description: Shards generated.
      type: int
    file_size:
      description: Bytes per shard (after rounding).
      type: int
    bytes_needed:
      description: Bytes the shards take.
      type: int
    bytes_free:
      description: Free bytes on the file system of O(directory) before anything was written.
      type: int
    device_bytes:
      description: Bytes read from O(device) per run.
      type: int
    block_sizes:
      description: Block sizes in bytes.
      type: list
      elements: int
    cases:
      description: Every fio case - C(key), C(argv).
      type: list
      elements: dict
    notes:
      description: What was left out and why.
      type: list
      elements: str
fio:
  description: One entry per fio case (empty in check mode).
  returned: always
  type: list
  elements: dict
  contains:
    key:
      description: Name of the case, C(<target>/<mode>/bs=<size>/jobs=<n>,qd=<depth>) (C(sync) for buffered reads;
        C(<target>/direct/randread/bs=...) for a random read case).
      type: str
      sample: directory/direct/bs=1M/jobs=1,qd=32
    target:
      description: V(directory) or V(device).
      type: str
    mode:
      description: V(direct) or V(buffered).
      type: str
    pattern:
      description: V(randread) for a case of O(random_reads) (absent for the sequential cases).
      type: str
      version_added: 0.2.0
    bs:
      description: Block size in bytes.
      type: int
    numjobs:
      description: Parallel jobs.
      type: int
    iodepth:
      description: Queue depth per job (1 for buffered).
      type: int
    argv:
      description: fio's argument list.
      type: list
      elements: str
    runs:
      description: Each repetition - C(bytes), C(seconds), C(mbps), C(iops), C(lat_mean_ms), C(clat_p99_ms).
      type: list
      elements: dict
    mbps:
      description: C(median), C(min), C(max), C(n) of the repetitions' MB/s.
      type: dict
page_cache:
  description: Loading the generated model into the page cache from cold - C(status) (V(ran), V(skipped)),
    C(reason) when skipped, C(bytes), C(files), C(workers), C(seconds) and C(mbps) (median/min/max/n).
  returned: always
  type: dict
model_repository:
  description: The same for O(model_repository), when given; C(path) names it.
  returned: always
  type: dict
safetensors:
  description: The safetensors loader pattern - C(status) (V(ran), V(skipped)), C(reason) when skipped, C(shards),
    C(tensors), C(bytes), C(cold_seconds)/C(cold_mbps) (from a cold cache), C(warm_seconds)/C(warm_mbps)
    (after the page cache preload), each median/min/max/n, and C(speedup) (median cold over median warm seconds).
  returned: always
  type: dict
figures:
  description: The flat figures, all MB/s medians (higher is better) - what a baseline stores and the gate compares.
  returned: always
  type: dict
  sample: {"fio/directory/direct/bs=1M/jobs=1,qd=32": 812.4, "page_cache/mbps": 950.1, "safetensors/cold_mbps": 610.0}
command_log:
  description: Every command run (C(argv), C(rc), C(ran)).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark import BenchmarkError
from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark_run import run

ARGUMENT_SPEC = dict(
    directory=dict(type='path'),
    device=dict(type='path'),
    device_size=dict(type='raw', default='1G'),
    block_sizes=dict(type='list', elements='str', default=['1M', 'chunk']),
    modes=dict(type='list', elements='str', choices=['direct', 'buffered'], default=['direct', 'buffered']),
    jobs=dict(type='list', elements='dict', default=[{'numjobs': 1, 'iodepth': 32}, {'numjobs': 4, 'iodepth': 8}],
              options=dict(numjobs=dict(type='int', required=True), iodepth=dict(type='int', default=32))),
    random_reads=dict(type='list', elements='dict', default=[],
                      options=dict(bs=dict(type='str', default='4K'), numjobs=dict(type='int', default=8),
                                   iodepth=dict(type='int', default=32))),
    random_read_seconds=dict(type='int', default=10),
    repetitions=dict(type='int', default=3),
    file_count=dict(type='int', default=4),
    file_size=dict(type='raw', default='1G'),
    space_reserve=dict(type='raw', default='1G'),
    page_cache=dict(type='bool', default=True),
    safetensors=dict(type='bool', default=True),
    model_repository=dict(type='path'),
    fio_runtime=dict(type='int', default=600),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run(module.params, CommandRunner(module), module.check_mode)
    except BenchmarkError as exc:
        module.fail_json(msg=exc.msg, option=exc.option, changed=False)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
