# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of the ``storage_benchmark`` module (a thin wrapper: documentation, options, ``run``).

* ``validate(params)`` - every option checked before anything is read or written; the parsed sizes.
* ``build_plan(params, settings)`` - block sizes (``chunk`` resolved with ``md_chunk``), shard size, the free
  space check and the fio cases.
* ``Bench(runner)`` - drops the caches (``sync``, ``drop_caches``, DONTNEED on the files measured), runs fio,
  times page cache loads with page_cache's loader.
* ``run(params, runner, check_mode)`` - the module's result: the plan only in check mode, else the scratch
  model generated, every measurement, the scratch removed (also when a measurement fails).

The rules of the measurement (fio argument lists and output, statistics, figures, the safetensors model) are
``storage_benchmark.py``'s. Commands go through the module's ``command.CommandRunner`` (``runner``); every
error is a ``storage_benchmark.BenchmarkError`` naming the option.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import stat
import tempfile
import time

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import (
    DEFAULT_CHUNK_SIZE, PageCacheError, Residency, collect_files, default_workers, drop_file, human_bytes, make_resident,
    memory_guard, parse_size, plan as page_cache_plan, read_meminfo,
)
from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark import (
    MIB, BenchmarkError, case_key, figures, fio_argv, fio_cases, fio_layout, fio_read, load_safetensors,
    record_file_name, safetensors_loader, summary, write_safetensors_model,
)

__all__ = ['Bench', 'build_plan', 'lcm', 'md_chunk', 'run', 'validate']

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
    if not 1 <= params.get('random_read_seconds', 10) <= 3600:
        raise BenchmarkError('random_read_seconds must be 1-3600, got %d' % params['random_read_seconds'],
                             'random_read_seconds')
    random_reads = []
    for index, job in enumerate(params.get('random_reads') or []):
        num = size_of(job['bs'], 'random_reads')
        if num < 4096 or num % 4096 or num > 64 * MIB or not 1 <= job['numjobs'] <= 64 or not 1 <= job['iodepth'] <= 256:
            raise BenchmarkError('random_reads[%d] = %r: bs must be a multiple of 4K between 4K and 64M, numjobs 1-64 '
                                 'and iodepth 1-256' % (index, job), 'random_reads')
        random_reads.append({'bs': num, 'numjobs': job['numjobs'], 'iodepth': job['iodepth']})
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
        'random_reads': random_reads,
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
    out['cases'] = fio_cases(targets, sizes, params['modes'], params['jobs'], settings['random_reads'],
                             params.get('random_read_seconds', 10))
    return out


def placeholder_files(directory, count):
    """The shard names of the plan (check mode shows the argument lists with them)."""
    return [os.path.join(directory, '.inferops-bench-XXXX', 'model-%05d-of-%05d.safetensors' % (i + 1, count))
            for i in range(count)]


class Bench(object):
    """One module run: drops caches through the runner and the sysfs helpers, times the loads."""

    def __init__(self, runner):
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
            drop_file(path)

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
            todo, chunks = page_cache_plan([dict(f) for f in files], DEFAULT_CHUNK_SIZE, residency)
            need = sum(f['bytes_to_read'] for f in todo)
            memory_guard(need, 256 * MIB, meminfo)
            seconds = make_resident(todo, chunks, workers, DEFAULT_CHUNK_SIZE, residency=residency)
            runs.append({'seconds': round(seconds, 3), 'mbps': round(need / seconds / 1e6, 1) if seconds else None,
                         'bytes_read': need,
                         'resident_percent': round(100.0 * sum(f['resident_after'] for f in todo) / total, 1)
                         if total else 100.0})
        return {'status': 'ran', 'path': path, 'files': len(files), 'bytes': total, 'workers': workers,
                'workers_rule': rule, 'runs': runs, 'seconds': summary([r['seconds'] for r in runs]),
                'mbps': summary([r['mbps'] for r in runs])}


def run(params, runner, check_mode=False):
    """The module's result (see its RETURN); raises ``BenchmarkError``."""
    settings = validate(params)
    plan = build_plan(params, settings)
    started_at = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    result = {
        'changed': False, 'directory': params['directory'], 'device': params['device'],
        'kernel': platform.release(), 'started_at': started_at, 'record_file': record_file_name(started_at),
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

    if check_mode:
        for name in ('page_cache', 'safetensors', 'model_repository'):
            if not result[name]:
                result[name] = {'status': 'planned'}
        result.update(plan=plan, figures={}, seconds=round(time.monotonic() - begin, 3), command_log=runner.log)
        return result

    bench = Bench(runner)
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
