#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: page_cache
short_description: Make model files resident in, or evict them from, the Linux page cache
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Brings files (model weights, tokenizers, engine plans) into the page cache before a model server
    starts, so its first load reads memory instead of disk; or drops them from the page cache again.
  - Directories in O(paths) are walked recursively (symlinks followed, each file counted once).
  - Residency is measured per page with C(mmap) + C(mincore) (falling back to C(cachestat), Linux 5.0+
    rules apply, see notes) before and after, and reported per file and in total.
  - With O(state=resident) every file is cut into O(chunk_size) pieces; pieces whose pages are all
    resident are skipped; adjacent pieces of a file are grouped into spans of up to the file's size divided by
    O(workers), and O(workers) threads take the spans from one shared queue (largest first), each reading its
    span in order through one open file - so a large file is read by all workers at once, each a sequential
    stream whose kernel readahead keeps growing, and the storage sees many large requests in flight. Each
    worker reads its pieces with C(sendfile) into C(/dev/null) (the kernel fills the page cache without copying
    the data to user space), or with C(preadv) into a reused per-worker buffer where C(sendfile) is not
    supported. When the device's readahead window (the larger of C(read_ahead_kb) and C(max_sectors_kb))
    is smaller than a piece, the worker first queues the whole piece with C(posix_fadvise) and
    C(POSIX_FADV_WILLNEED).
  - After reading, residency is measured again; pieces reclaimed meanwhile (memory pressure, proactive reclaim) are
    read again, at most twice, and files still not fully resident are named in a warning.
  - With O(state=evicted) files that have resident pages get C(posix_fadvise) with C(POSIX_FADV_DONTNEED). There is no
    C(fsync) first, so dirty pages and pages mapped by running processes stay resident (reported with
    a warning).
  - Idempotent - fully resident (or, for O(state=evicted), fully evicted) files are skipped and the task
    reports C(changed=false) when nothing had to be read (evicted).
  - Before anything is read the module fails when the bytes still to be read exceed
    C(MemAvailable) (from C(/proc/meminfo)) minus O(reserve).
  - Made for C(async) tasks - with O(status_file) progress is written as JSON every O(status_interval)
    seconds (atomically, temporary file + rename) so a playbook can poll it while the task runs.
extends_documentation_fragment:
  - inferops.node.status_file
options:
  paths:
    description:
      - Files and directories to warm or evict. Directories are walked recursively.
      - Every path must exist.
    type: list
    elements: path
    required: true
  state:
    description:
      - V(resident) reads the files into the page cache; V(evicted) drops them from it.
    type: str
    choices: [resident, evicted]
    default: resident
  workers:
    description:
      - Number of parallel reader threads (at least 1, at most 256).
      - When not set the module picks it from the storage holding the files (per file system, the
        largest value wins, capped at 32) - NVMe, SSD and virtual (virtio, Xen) disks get the largest
        of 4, the number of usable CPUs and 4 per member disk; rotational disks get 2 per member disk
        (more parallel streams only add seeks); file systems without a block device (NFS, FUSE) get 8.
        Member disks are the leaves of md/dm stacks.
        The choice and the reason are returned in RV(workers) and RV(workers_rule).
    type: int
  chunk_size:
    description:
      - Size of the pieces files are cut into for reading (and of the per-worker buffer when C(sendfile) is
        not supported), as bytes or
        with a binary unit (V(8M), V(8MiB), V(512K)). Rounded down to a multiple of the page size;
        must be between 64 KiB and 1 GiB.
    type: raw
    default: 8M
  reserve:
    description:
      - Memory that must stay available after warming, as bytes, with a binary unit (V(1G)) or as a
        percentage of C(MemTotal) (V(5%)).
      - O(state=resident) fails before reading when the bytes not yet resident exceed
        C(MemAvailable) minus this reserve.
    type: raw
    default: 1G
  include:
    description:
      - Shell patterns (C(fnmatch)); a file found under a directory is used only when its name, or its
        path relative to the listed directory, matches one of them. Empty means every file.
      - Files named directly in O(paths) are always used.
    type: list
    elements: str
    default: []
  exclude:
    description:
      - Shell patterns; files found under a directory whose name or relative path matches one of them
        are left out. Files named directly in O(paths) are always used.
    type: list
    elements: str
    default: []
  min_size:
    description:
      - Files found under a directory that are smaller than this are left out, as bytes or with a binary
        unit (V(1M)). Files named directly in O(paths) are always used.
    type: raw
    default: 0
  status_file:
    description:
      - Path of a JSON progress file, rewritten atomically while the module runs (not in check mode).
      - Keys - C(state) (V(scanning), V(reading), V(evicting), V(done) or V(failed)), C(bytes_done),
        C(bytes_total), C(files_done), C(files_total), C(percent), C(gbps), C(eta_seconds) (null until
        a rate is known), C(elapsed_seconds), C(started_at), C(updated_at) (ISO 8601 UTC),
        C(updated_epoch), C(pid), C(mode), C(workers), and C(error) when V(failed).
      - Its directory must exist.
    type: path
attributes:
  check_mode:
    description: Measures residency and reports what would be read or evicted; reads, evicts and writes nothing.
    support: full
  diff_mode:
    description: Returns the per-file and total residency before and after (the expected after, in check mode).
    support: full
  platform:
    description: Linux only (C(mincore), C(cachestat), C(posix_fadvise), C(/proc/meminfo)).
    support: full
    platforms: posix
notes:
  - Since Linux 5.0, C(mincore) (and C(cachestat)) only report page-cache residency of files the caller
    owns or may write; run the task with C(become) so every file can be measured.
  - GB/s figures are decimal (10^9 bytes per second).
  - Reading into the page cache does not pin pages; under memory pressure the kernel may evict them again.
seealso:
  - name: posix_fadvise(2)
    description: Linux manual page.
    link: https://man7.org/linux/man-pages/man2/posix_fadvise.2.html
  - name: mincore(2)
    description: Linux manual page.
    link: https://man7.org/linux/man-pages/man2/mincore.2.html
'''

EXAMPLES = r'''
- name: Warm the model directory, keep 4 GiB free, in the background
  inferops.node.page_cache:
    paths:
      - /srv/models/llama-3-8b
    include:
      - "*.safetensors"
      - "*.json"
    reserve: 4G
    status_file: /run/inferops/page_cache.json
  async: 3600
  poll: 0
  register: warm_job

- name: Follow progress (the status file is JSON)
  ansible.builtin.slurp:
    src: /run/inferops/page_cache.json
  register: warm_status
  until: (warm_status.content | b64decode | from_json).state in ['done', 'failed']
  retries: 720
  delay: 5

- name: Wait for the result
  ansible.builtin.async_status:
    jid: "{{ warm_job.ansible_job_id }}"
  register: warm_result
  until: warm_result.finished
  retries: 60
  delay: 5

- name: Warm two shards with 8 readers and 16 MiB pieces
  inferops.node.page_cache:
    paths:
      - /srv/models/m/model-00001-of-00002.safetensors
      - /srv/models/m/model-00002-of-00002.safetensors
    workers: 8
    chunk_size: 16M

- name: Drop an old model from the page cache
  inferops.node.page_cache:
    paths: /srv/models/old-model
    state: evicted
'''

RETURN = r'''
state:
  description: The requested state.
  returned: always
  type: str
  sample: resident
workers:
  description: Number of reader threads used (or that would be used).
  returned: always
  type: int
  sample: 4
workers_rule:
  description: Why RV(workers) has its value (the option, or the default rule per file system).
  returned: always
  type: str
  sample: "259:0 nvme: max(4, nproc=16, 4 x 1 disk(s)) = 16"
chunk_size:
  description: Effective piece size in bytes (after rounding to the page size).
  returned: always
  type: int
  sample: 8388608
reserve:
  description: Effective memory reserve in bytes.
  returned: always
  type: int
  sample: 1073741824
mem_available:
  description: C(MemAvailable) in bytes when the module started.
  returned: always
  type: int
  sample: 25010475008
residency_method:
  description: How residency was measured - V(mincore), V(cachestat), V(mincore+cachestat), or V(none) when neither works.
  returned: always
  type: str
  sample: mincore
status_file:
  description: The progress file, when O(status_file) was given.
  returned: when O(status_file) is set
  type: str
  sample: /run/inferops/page_cache.json
total:
  description: Totals over all files.
  returned: always
  type: dict
  contains:
    files:
      description: Number of files.
      type: int
      sample: 12
    files_changed:
      description: Files read (or, for O(state=evicted), evicted), or that would be in check mode.
      type: int
      sample: 3
    bytes:
      description: Sum of the file sizes.
      type: int
      sample: 16069624832
    resident_before:
      description: Resident bytes before.
      type: int
      sample: 0
    percent_before:
      description: Resident percentage before (an empty set counts as 100).
      type: float
      sample: 0.0
    resident_after:
      description: Resident bytes after (expected value in check mode).
      type: int
      sample: 16069624832
    percent_after:
      description: Resident percentage after (expected value in check mode).
      type: float
      sample: 100.0
    bytes_to_read:
      description: Bytes that were not resident before (V(0) for O(state=evicted)).
      type: int
      sample: 16069624832
    bytes_read:
      description: Bytes read (V(0) in check mode).
      type: int
      sample: 16069624832
    bytes_evicted:
      description: Resident bytes dropped (O(state=evicted); V(0) otherwise and in check mode).
      type: int
      sample: 0
    seconds:
      description: Wall time of the read or evict phase.
      type: float
      sample: 5.31
    scan_seconds:
      description: Wall time spent finding the files and measuring residency before.
      type: float
      sample: 0.04
    gbps:
      description: RV(total.bytes_read) / RV(total.seconds) in decimal GB/s.
      type: float
      sample: 3.026
    passes:
      description: Most read passes any file needed (V(0) when nothing was read, more than V(1) when pages were reclaimed while reading and read again).
      type: int
      sample: 1
files:
  description: One entry per file, in the order they were found.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: Path of the file as found (under a listed directory, or as listed).
      type: str
      sample: /srv/models/m/model-00001-of-00002.safetensors
    size:
      description: File size in bytes.
      type: int
      sample: 4999819336
    action:
      description: V(read), V(evict), or V(skip) when the file was already in the requested state (what would be done, in check mode).
      type: str
      sample: read
    resident_before:
      description: Resident bytes before.
      type: int
      sample: 0
    percent_before:
      description: Resident percentage before (an empty file counts as 100).
      type: float
      sample: 0.0
    resident_after:
      description: Resident bytes after (expected value in check mode).
      type: int
      sample: 4999819336
    percent_after:
      description: Resident percentage after (expected value in check mode).
      type: float
      sample: 100.0
    bytes_to_read:
      description: Bytes not resident before (V(0) for O(state=evicted)).
      type: int
      sample: 4999819336
    bytes_read:
      description: Bytes read, whole pieces (V(0) in check mode).
      type: int
      sample: 4999819336
    bytes_evicted:
      description: Resident bytes dropped (O(state=evicted)).
      type: int
      sample: 0
    seconds:
      description: From the start of the first piece of this file to the end of its last one.
      type: float
      sample: 1.62
    gbps:
      description: RV(files[].bytes_read) / RV(files[].seconds) in decimal GB/s.
      type: float
      sample: 3.086
    passes:
      description: Read passes over this file (V(0) when nothing was read; up to 3 when pages were reclaimed while reading and read again).
      type: int
      sample: 1
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import (
    GIB,
    PAGE_SIZE,
    PageCacheError,
    Progress,
    Residency,
    collect_files,
    default_workers,
    evict,
    gbps,
    make_resident,
    measure_after,
    memory_guard,
    parse_size,
    percent,
    plan,
    read_meminfo,
)
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import (
    ARGUMENT_SPEC as STATUS_ARGUMENT_SPEC,
    StatusWriter,
    option_problems,
)

MAX_WORKERS_OPTION = 256
RETRIES = 2  # extra passes over pages reclaimed while a long warm-up was still running
MIN_CHUNK = 64 * 1024

ARGUMENT_SPEC = dict(
    paths=dict(type='list', elements='path', required=True),
    state=dict(type='str', choices=['resident', 'evicted'], default='resident'),
    workers=dict(type='int'),
    chunk_size=dict(type='raw', default='8M'),
    reserve=dict(type='raw', default='1G'),
    include=dict(type='list', elements='str', default=[]),
    exclude=dict(type='list', elements='str', default=[]),
    min_size=dict(type='raw', default=0),
    **STATUS_ARGUMENT_SPEC
)


def validate(params, meminfo):
    """Check every option before touching anything; returns the parsed sizes."""
    if not params['paths']:
        raise PageCacheError('paths must name at least one file or directory', 'paths')
    workers = params['workers']
    if workers is not None and not 1 <= workers <= MAX_WORKERS_OPTION:
        raise PageCacheError('workers must be between 1 and %d, got %d' % (MAX_WORKERS_OPTION, workers), 'workers')
    chunk = parse_size(params['chunk_size'], 'chunk_size')
    if not MIN_CHUNK <= chunk <= GIB:
        raise PageCacheError('chunk_size must be between 64K and 1G, got %r (%d bytes)'
                             % (params['chunk_size'], chunk), 'chunk_size')
    chunk -= chunk % PAGE_SIZE
    reserve = parse_size(params['reserve'], 'reserve', total=meminfo.get('MemTotal', 0))
    min_size = parse_size(params['min_size'], 'min_size')
    for option, problem in option_problems(params):
        raise PageCacheError(problem, option)
    return chunk, reserve, min_size


def file_result(info, state, check_mode):
    size = info['size']
    before = info['resident_before']
    if check_mode:
        after = size if state == 'resident' else 0
    else:
        after = info['resident_after']
    if state == 'resident':
        action = 'read' if info['chunks'] else 'skip'
        bytes_to_read = info['bytes_to_read']
        evicted = 0
    else:
        action = 'evict' if before else 'skip'
        bytes_to_read = 0
        evicted = 0 if check_mode else max(before - after, 0)
    bytes_read = 0 if check_mode else info.get('bytes_read', 0)
    return {
        'path': info['path'],
        'size': size,
        'action': action,
        'resident_before': before,
        'percent_before': percent(before, size),
        'resident_after': after,
        'percent_after': percent(after, size),
        'bytes_to_read': bytes_to_read,
        'bytes_read': bytes_read,
        'bytes_evicted': evicted,
        'seconds': 0.0 if check_mode else info.get('seconds', 0.0),
        'gbps': 0.0 if check_mode else info.get('gbps', 0.0),
        'passes': 0 if check_mode or state != 'resident' else info.get('passes', 0),
    }


def totals(results, seconds, scan_seconds):
    size = sum(r['size'] for r in results)
    before = sum(r['resident_before'] for r in results)
    after = sum(r['resident_after'] for r in results)
    read = sum(r['bytes_read'] for r in results)
    return {
        'files': len(results),
        'files_changed': sum(1 for r in results if r['action'] != 'skip'),
        'bytes': size,
        'resident_before': before,
        'percent_before': percent(before, size),
        'resident_after': after,
        'percent_after': percent(after, size),
        'bytes_to_read': sum(r['bytes_to_read'] for r in results),
        'bytes_read': read,
        'bytes_evicted': sum(r['bytes_evicted'] for r in results),
        'seconds': round(seconds, 3),
        'scan_seconds': round(scan_seconds, 3),
        'gbps': gbps(read, seconds),
        'passes': max([r['passes'] for r in results] or [0]),
    }


def diff_text(results, total, key):
    lines = ['%s: %.2f%% resident (%d of %d bytes)' % (r['path'], r['percent_' + key], r['resident_' + key], r['size'])
             for r in results]
    lines.append('total: %.2f%% resident (%d of %d bytes in %d files)'
                 % (total['percent_' + key], total['resident_' + key], total['bytes'], total['files']))
    return '\n'.join(lines) + '\n'


def run(module):
    params = module.params
    state = params['state']
    meminfo = read_meminfo()
    chunk, reserve, min_size = validate(params, meminfo)
    mem_available = meminfo.get('MemAvailable', meminfo.get('MemFree', 0))
    progress = Progress(0, 0)
    status = None
    if params['status_file'] and not module.check_mode:
        status = StatusWriter(params['status_file'], progress, params['status_interval'],
                              extra={'mode': state})
        status.start()
    finished = False
    error = 'unexpected error, see the task result'
    try:
        scan_start = time.monotonic()
        files = collect_files(params['paths'], params['include'], params['exclude'], min_size)
        if params['workers']:
            workers, rule = params['workers'], 'set by the workers option'
        else:
            workers, rule = default_workers([f['dev'] for f in files])
        if status:
            status.extra['workers'] = workers
        residency = Residency()
        files, chunks = plan(files, chunk, residency)
        scan_seconds = time.monotonic() - scan_start
        with progress.lock:
            if state == 'resident':
                progress.bytes_total = sum(f['bytes_to_read'] for f in files)
                progress.files_total = sum(1 for f in files if f['chunks'])
            else:
                progress.bytes_total = sum(f['resident_before'] for f in files)
                progress.files_total = sum(1 for f in files if f['resident_before'])
        if state == 'resident':
            memory_guard(sum(f['bytes_to_read'] for f in files), reserve, meminfo)
        seconds = 0.0
        if not module.check_mode:
            if state == 'resident':
                seconds = make_resident(files, chunks, workers, chunk, progress, residency, retries=RETRIES)
            else:
                seconds = evict(files, progress)
                measure_after(files, residency)
        finished = True
    except PageCacheError as exc:
        error = exc.msg
        raise
    finally:
        if status and not finished:
            status.stop(state='failed', error=error)

    results = [file_result(f, state, module.check_mode) for f in files]
    total = totals(results, seconds, scan_seconds)
    if state == 'resident':
        changed = total['bytes_to_read'] > 0 if module.check_mode else total['bytes_read'] > 0
    else:
        changed = total['resident_before'] > 0 if module.check_mode else total['bytes_evicted'] > 0
    if status:
        status.stop(state='done', changed=changed)
        if status.error:
            module.warn('could not write status_file %s' % status.error)

    if state == 'resident':
        short = [r['path'] for r in results if r['percent_after'] < 100.0]
        if short and not module.check_mode:
            module.warn('%d file(s) are not fully resident after reading (memory pressure evicted pages?): %s'
                        % (len(short), ', '.join(short[:5]) + (' ...' if len(short) > 5 else '')))
    else:
        kept = [r['path'] for r in results if r['resident_after'] > 0]
        if kept and not module.check_mode:
            module.warn('%d file(s) still have resident pages after DONTNEED (dirty, or mapped by a process): %s'
                        % (len(kept), ', '.join(kept[:5]) + (' ...' if len(kept) > 5 else '')))
    if not files:
        module.warn('paths: no files matched %s' % ', '.join(params['paths']))

    result = dict(
        changed=changed,
        state=state,
        workers=workers,
        workers_rule=rule,
        chunk_size=chunk,
        reserve=reserve,
        mem_available=mem_available,
        residency_method=residency.method,
        total=total,
        files=results,
    )
    if params['status_file']:
        result['status_file'] = params['status_file']
    if module._diff:
        result['diff'] = {'before': diff_text(results, total, 'before'), 'after': diff_text(results, total, 'after')}
    return result


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run(module)
    except PageCacheError as exc:
        module.fail_json(msg=exc.msg, option=exc.option)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
