#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: storage_benchmark
short_description: Measure what decides a model server's cold start - sequential reads, page cache load, safetensors load
version_added: 0.1.0
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
      - Measure the time to load the generated model into the page cache (and, after it, the safetensors
        load from the page cache).
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
      description: Name of the case, C(<target>/<mode>/bs=<size>/jobs=<n>,qd=<depth>) (C(sync) for buffered reads).
      type: str
      sample: directory/direct/bs=1M/jobs=1,qd=32
    target:
      description: V(directory) or V(device).
      type: str
    mode:
      description: V(direct) or V(buffered).
      type: str
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

import math
import os
import platform
import shutil
import stat
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils import sysfs
from ansible_collections.inferops.node.plugins.module_utils.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.page_cache import (
    PageCacheError, Residency, collect_files, default_workers, human_bytes, make_resident, memory_guard,
    parse_size, plan as page_cache_plan, read_meminfo,
)
from ansible_collections.inferops.node.plugins.module_utils.storage_benchmark import (
    MIB, BenchmarkError, case_key, figures, fio_argv, fio_cases, fio_layout, fio_read, load_safetensors,
    safetensors_loader, summary, write_safetensors_model,
)

ARGUMENT_SPEC = dict(
    directory=dict(type='path'),
    device=dict(type='path'),
    device_size=dict(type='raw', default='1G'),
    block_sizes=dict(type='list', elements='str', default=['1M', 'chunk']),
    modes=dict(type='list', elements='str', choices=['direct', 'buffered'], default=['direct', 'buffered']),
    jobs=dict(type='list', elements='dict', default=[{'numjobs': 1, 'iodepth': 32}, {'numjobs': 4, 'iodepth': 8}],
              options=dict(numjobs=dict(type='int', required=True), iodepth=dict(type='int', default=32))),
    repetitions=dict(type='int', default=3),
    file_count=dict(type='int', default=4),
    file_size=dict(type='raw', default='1G'),
    space_reserve=dict(type='raw', default='1G'),
    page_cache=dict(type='bool', default=True),
    safetensors=dict(type='bool', default=True),
    model_repository=dict(type='path'),
    fio_runtime=dict(type='int', default=600),
)

DROP_CACHES = '/proc/sys/vm/drop_caches'
WRITE_BLOCK = 16 * MIB


def lcm(a, b):
    return a * b // math.gcd(a, b)


def md_chunk(dev):
    """Chunk size in bytes of the md array with device number ``dev``, or None (not md, no chunk)."""
    return sysfs.read_int('/sys/dev/block/%d:%d/md/chunk_size' % (os.major(dev), os.minor(dev))) or None


def size_of(value, option):
    try:
        return parse_size(value, option)
    except PageCacheError as exc:
        raise BenchmarkError(exc.msg, option)


def validate(params):
    """Every option checked before anything is read or written; returns the parsed settings."""
    if not params['directory'] and not params['device']:
        raise BenchmarkError('directory or device (or both) must be given', 'directory')
    if params['fio_runtime'] < 1:
        raise BenchmarkError('fio_runtime must be at least 1 second, got %d' % params['fio_runtime'], 'fio_runtime')
    if not 1 <= params['repetitions'] <= 20:
        raise BenchmarkError('repetitions must be 1-20, got %d' % params['repetitions'], 'repetitions')
    if not 1 <= params['file_count'] <= 64:
        raise BenchmarkError('file_count must be 1-64, got %d' % params['file_count'], 'file_count')
    if not params['jobs']:
        raise BenchmarkError('jobs must list at least one dict of numjobs and iodepth', 'jobs')
    for index, job in enumerate(params['jobs']):
        if not 1 <= job['numjobs'] <= 64 or not 1 <= job['iodepth'] <= 256:
            raise BenchmarkError('jobs[%d] = %r: numjobs must be 1-64 and iodepth 1-256' % (index, job), 'jobs')
        if params['directory'] and job['numjobs'] > params['file_count']:
            raise BenchmarkError('jobs[%d].numjobs = %d is more than file_count = %d: on the directory each job '
                                 'reads its own shards (raise file_count or lower numjobs)'
                                 % (index, job['numjobs'], params['file_count']), 'jobs')
    if not params['modes']:
        raise BenchmarkError('modes must list direct, buffered or both', 'modes')
    sizes = []
    for value in params['block_sizes']:
        if value == 'chunk':
            sizes.append('chunk')
            continue
        num = size_of(value, 'block_sizes')
        if num < 4096 or num % 4096 or num > 64 * MIB:
            raise BenchmarkError('block_sizes: %r must be a multiple of 4K between 4K and 64M' % value, 'block_sizes')
        sizes.append(num)
    if not sizes:
        raise BenchmarkError('block_sizes must list at least one size', 'block_sizes')
    if params['directory'] and not os.path.isdir(params['directory']):
        raise BenchmarkError('directory %s does not exist (or is not a directory)' % params['directory'], 'directory')
    if params['device']:
        try:
            mode = os.stat(params['device']).st_mode
        except OSError as exc:
            raise BenchmarkError('device %s: %s' % (params['device'], exc.strerror), 'device')
        if not stat.S_ISBLK(mode):
            raise BenchmarkError('device %s is not a block device' % params['device'], 'device')
    if params['model_repository'] and not os.path.isdir(params['model_repository']):
        raise BenchmarkError('model_repository %s is not a directory' % params['model_repository'], 'model_repository')
    return {
        'block_sizes': sizes,
        'file_size': size_of(params['file_size'], 'file_size'),
        'device_size': size_of(params['device_size'], 'device_size'),
        'space_reserve': size_of(params['space_reserve'], 'space_reserve'),
    }


def device_bytes(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def build_plan(params, settings):
    """Block sizes (``chunk`` resolved), shard size, free space and the fio cases with their layouts."""
    notes = []
    directory, device = params['directory'], params['device']
    chunk = None
    if directory:
        chunk = md_chunk(os.stat(directory).st_dev)
    if chunk is None and device:
        chunk = md_chunk(os.stat(device).st_rdev)
    sizes = []
    for size in settings['block_sizes']:
        if size == 'chunk':
            if chunk is None:
                notes.append('block size "chunk" left out: no md array under %s' % (directory or device))
                continue
            size = chunk
        if size not in sizes:
            sizes.append(size)
    if not sizes:
        raise BenchmarkError('no block size left to measure (%s)' % '; '.join(notes), 'block_sizes')
    align = MIB
    for size in sizes:
        align = lcm(align, size)
    out = {'block_sizes': sizes, 'notes': notes, 'chunk_size': chunk, 'file_count': 0, 'file_size': 0,
           'bytes_needed': 0, 'bytes_free': None, 'device_bytes': 0}
    targets = []
    if directory:
        file_size = settings['file_size'] - settings['file_size'] % align
        if file_size < max(2 * MIB, align):
            raise BenchmarkError('file_size %r is below the smallest shard (%d bytes: 2 MiB and a multiple of '
                                 'every block size)' % (params['file_size'], max(2 * MIB, align)), 'file_size')
        needed = params['file_count'] * file_size
        vfs = os.statvfs(directory)
        free = vfs.f_bavail * vfs.f_frsize
        if needed + settings['space_reserve'] > free:
            raise BenchmarkError(
                'directory %s: the benchmark files need %s (%d x %s) and %s must stay free, but only %s is free - '
                'short by %s; lower file_size or file_count, or free space'
                % (directory, human_bytes(needed), params['file_count'], human_bytes(file_size),
                   human_bytes(settings['space_reserve']), human_bytes(free),
                   human_bytes(needed + settings['space_reserve'] - free)), 'file_size')
        out.update(file_count=params['file_count'], file_size=file_size, bytes_needed=needed, bytes_free=free)
        targets.append('directory')
    if device:
        size = device_bytes(device)
        want = min(settings['device_size'], size)
        want -= want % align
        if want <= 0:
            raise BenchmarkError('device %s (%d bytes) is smaller than one aligned read' % (device, size), 'device_size')
        out['device_bytes'] = want
        targets.append('device')
    out['cases'] = fio_cases(targets, sizes, params['modes'], params['jobs'])
    return out


def placeholder_files(directory, count):
    """The shard names of the plan (check mode shows the argument lists with them)."""
    return [os.path.join(directory, '.inferops-bench-XXXX', 'model-%05d-of-%05d.safetensors' % (i + 1, count))
            for i in range(count)]


class Bench(object):
    """One module run: drops caches through the runner and the sysfs helpers, times the loads."""

    def __init__(self, module, runner):
        self.module = module
        self.runner = runner
        self.paths = []

    def drop_caches(self):
        """sync, echo 3 > drop_caches, and DONTNEED on the files measured (drop_caches leaves pages that
        were dirty or mapped at that moment; the per-file advice catches the benchmark's own)."""
        # sync first: drop_caches only frees clean pages.
        rc, _out, err = self.runner.run(['sync'])
        if rc != 0:
            raise BenchmarkError('sync failed: %s' % err.strip())
        try:
            sysfs.write_attr(DROP_CACHES, '3')
        except sysfs.SysfsWriteError as exc:
            raise BenchmarkError('cannot drop the page cache (%s); run with become' % exc)
        for path in self.paths:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)

    def fio(self, argv):
        rc, out, err = self.runner.run(argv)
        try:
            figures_ = fio_read(out)
        except BenchmarkError as exc:
            raise BenchmarkError('fio (rc %d) %s: %s%s' % (rc, ' '.join(argv[1:8]), exc.msg,
                                                           ('; stderr: ' + err.strip()[:400]) if err.strip() else ''))
        if rc != 0:
            raise BenchmarkError('fio exited %d: %s' % (rc, err.strip()[:400]))
        return figures_

    def page_cache_load(self, path, repetitions):
        """Cold load of ``path`` into the page cache with page_cache's loader, ``repetitions`` times."""
        runs = []
        files = collect_files([path])
        total = sum(f['size'] for f in files)
        self.paths = sorted(set(self.paths) | set(f['path'] for f in files))
        workers, rule = default_workers([f['dev'] for f in files])
        for _rep in range(repetitions):
            self.drop_caches()
            meminfo = read_meminfo()
            residency = Residency()
            todo, chunks = page_cache_plan([dict(f) for f in files], 8 * MIB, residency)
            need = sum(f['bytes_to_read'] for f in todo)
            memory_guard(need, 256 * MIB, meminfo)
            seconds = make_resident(todo, chunks, workers, 8 * MIB, residency=residency)
            runs.append({'seconds': round(seconds, 3), 'mbps': round(need / seconds / 1e6, 1) if seconds else None,
                         'bytes_read': need,
                         'resident_percent': round(100.0 * sum(f['resident_after'] for f in todo) / total, 1)
                         if total else 100.0})
        return {'status': 'ran', 'path': path, 'files': len(files), 'bytes': total, 'workers': workers,
                'workers_rule': rule, 'runs': runs, 'seconds': summary([r['seconds'] for r in runs]),
                'mbps': summary([r['mbps'] for r in runs])}


def run(module):
    params = module.params
    settings = validate(params)
    runner = CommandRunner(module)
    plan = build_plan(params, settings)
    result = {
        'changed': False, 'directory': params['directory'], 'device': params['device'],
        'kernel': platform.release(), 'started_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'chunk_size': plan['chunk_size'], 'fio': [], 'page_cache': {}, 'model_repository': {}, 'safetensors': {},
    }
    begin = time.monotonic()
    skip = {'status': 'skipped'}
    safe_open, missing = safetensors_loader()
    if not params['directory']:
        result['page_cache'] = dict(skip, reason='no directory given: nothing to load')
        result['safetensors'] = dict(skip, reason='no directory given: no model generated')
    else:
        if not params['page_cache']:
            result['page_cache'] = dict(skip, reason='page_cache is false')
        if not params['safetensors']:
            result['safetensors'] = dict(skip, reason='safetensors is false')
        elif missing:
            result['safetensors'] = dict(skip, reason=missing)
    if not params['model_repository']:
        result['model_repository'] = dict(skip, reason='model_repository not given')

    files = placeholder_files(params['directory'], plan['file_count']) if params['directory'] else []
    planned = []
    for case in plan['cases']:
        layout = fio_layout(case, files, params['device'], plan['device_bytes'])
        planned.append(dict(case, key=case_key(case), argv=fio_argv(case, layout, params['fio_runtime'])))
    plan['cases'] = [{'key': c['key'], 'argv': c['argv']} for c in planned]

    if module.check_mode:
        for name in ('page_cache', 'safetensors', 'model_repository'):
            if not result[name]:
                result[name] = {'status': 'planned'}
        result.update(plan=plan, figures={}, seconds=round(time.monotonic() - begin, 3), command_log=runner.log)
        return result

    bench = Bench(module, runner)
    scratch = None
    try:
        if params['directory']:
            scratch = tempfile.mkdtemp(prefix='.inferops-bench-', dir=params['directory'])
            files = write_safetensors_model(scratch, plan['file_count'], plan['file_size'],
                                            bytearray(os.urandom(WRITE_BLOCK)))
            bench.paths = list(files)
            plan['cases'] = []
        for case in planned:
            layout = fio_layout(case, files, params['device'], plan['device_bytes'])
            case['argv'] = fio_argv(case, layout, params['fio_runtime'])
            case['runs'] = []
            for _rep in range(params['repetitions']):
                bench.drop_caches()
                case['runs'].append(bench.fio(case['argv']))
            case['mbps'] = summary([r['mbps'] for r in case['runs']])
            plan['cases'].append({'key': case['key'], 'argv': case['argv']})
            result['fio'].append(case)
        if params['directory']:
            reps = params['repetitions']
            if not result['safetensors']:
                cold, warm, preload = [], [], []
                size = count = 0
                for _rep in range(reps):
                    bench.drop_caches()
                    size, count, seconds = load_safetensors(safe_open, files)
                    cold.append(seconds)
                    part = bench.page_cache_load(scratch, 1)
                    preload.append(part['runs'][0])
                    warm.append(load_safetensors(safe_open, files)[2])
                result['safetensors'] = {
                    'status': 'ran', 'shards': len(files), 'tensors': count, 'bytes': size,
                    'cold_seconds': summary(cold), 'warm_seconds': summary(warm),
                    'cold_mbps': summary([size / s / 1e6 for s in cold if s]),
                    'warm_mbps': summary([size / s / 1e6 for s in warm if s]),
                    'preload_seconds': summary([p['seconds'] for p in preload]),
                    'speedup': round(statistics_ratio(cold, warm), 2),
                    'note': 'warm = loaded again right after the page cache preload of the same shards',
                }
            if not result['page_cache']:
                result['page_cache'] = bench.page_cache_load(scratch, reps)
        if params['model_repository']:
            result['model_repository'] = bench.page_cache_load(params['model_repository'], params['repetitions'])
    except PageCacheError as exc:
        raise BenchmarkError('page cache load: %s' % exc.msg)
    except OSError as exc:
        # writing the shards (ENOSPC despite the check: another writer), reading a file that vanished
        raise BenchmarkError('%s%s' % (exc.filename + ': ' if exc.filename else '', exc.strerror or exc))
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
            result['scratch_removed'] = not os.path.exists(scratch)
    result.update(plan=plan, seconds=round(time.monotonic() - begin, 3), command_log=runner.log)
    result['figures'] = figures(result)
    return result


def statistics_ratio(cold, warm):
    """Median cold seconds over median warm seconds (0 when a side is missing)."""
    cold_s, warm_s = summary(cold), summary(warm)
    if not cold_s or not warm_s or not warm_s['median']:
        return 0.0
    return cold_s['median'] / warm_s['median']


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run(module)
    except BenchmarkError as exc:
        module.fail_json(msg=exc.msg, option=exc.option, changed=False)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
