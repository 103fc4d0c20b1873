#!/usr/bin/env python
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: page_cache warm path vs vmtouch -t, fio direct reads and parallel buffered readers.

Not a test. Creates a model-like data set (a few multi-GiB shards plus small tokenizer /
config files, >= 4 GiB by default) under --dir, then in one run, on the same files, and
with the page cache of those files dropped before every measurement, times:

  page_cache  plugins/module_utils/storage/page_cache.py loaded directly: collect, plan (mincore),
              memory guard, threaded chunked warm, re-measure -- the module's whole path
  vmtouch     vmtouch -t <dir>
  fio         fio --rw=read --bs=1M --iodepth=32 --direct=1 --ioengine=libaio over the same
              files (one job per file range; big files are split into --fio-splits ranges;
              the best layout is the ceiling; --fio-bs 1M,4M adds other block sizes for
              reference)
  readers     parallel buffered readers, the buffered ceiling: N concurrent `dd bs=.. iflag=skip_bytes,
              count_bytes of=/dev/null` over ranges of the files (each file >= 256 MiB in
              --readers-splits ranges, smaller files whole), largest range first, a new dd started
              whenever one ends; N and bs per --readers spec (w = the module's worker count for
              these files, by its own rule); the best spec is the ceiling page_cache is held to
  ansible     (only with --with-ansible) the module run by `ansible localhost -m`, including
              Ansible's own start-up

Methods are run in rotating order for --repeat rounds; medians are reported.
Usage: tools/bench/page_cache_bench.py [--dir /var/tmp/inferops-bench] [--repeat 3]
       tools/bench/page_cache_bench.py --sweep --workers 2,4,8 --chunk-size 2M,8M,32M
(--sweep: page_cache over the grid plus the readers, no vmtouch/fio.)
Needs root (drop_caches, mincore of any file), fio and vmtouch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections import deque

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTILS = os.path.join(ROOT, 'plugins', 'module_utils')
MIB = 1024 ** 2
GIB = 1024 ** 3


def load_utils():
    """storage/page_cache.py and the module_utils it imports (common/sysfs, common/status_file) as one package,
    without Ansible."""
    package = types.ModuleType('inferops_module_utils')
    package.__path__ = [UTILS]
    sys.modules['inferops_module_utils'] = package
    return importlib.import_module('inferops_module_utils.storage.page_cache')


pc = load_utils()


# ----------------------------------------------------------------------------- data set

def layout(scale):
    """(relative path, size) of a model-like directory, about 4.8 GiB at scale 1."""
    files = [
        ('model-00001-of-00003.safetensors', int(2 * GIB * scale)),
        ('model-00002-of-00003.safetensors', int(2 * GIB * scale)),
        ('model-00003-of-00003.safetensors', int(768 * MIB * scale)),
        ('tokenizer.json', 7 * MIB + 12345),
        ('tokenizer.model', 4 * MIB + 777),
        ('model.safetensors.index.json', 29 * 1024 + 11),
        ('config.json', 1342),
        ('generation_config.json', 187),
        ('special_tokens_map.json', 551),
        ('tokenizer_config.json', 51 * 1024 + 3),
    ]
    for i in range(16):
        files.append(('onnx/part-%02d.bin' % i, 2 * MIB + i * 65536 + 17))
    return files


def make_dataset(directory, scale):
    """Create the files (random data, unique per block) unless the manifest matches."""
    files = layout(scale)
    manifest = os.path.join(directory, '.manifest.json')
    want = dict(files)
    try:
        with open(manifest) as handle:
            have = json.load(handle)
        if have == want and all(os.path.getsize(os.path.join(directory, p)) == s for p, s in files):
            return [os.path.join(directory, p) for p, _s in files]
    except (OSError, ValueError):
        pass
    print('creating %s of test files in %s ...' % (pc.human_bytes(sum(want.values())), directory), flush=True)
    os.makedirs(directory, exist_ok=True)
    block = bytearray(os.urandom(16 * MIB))
    counter = 0
    for rel, size in files:
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as handle:
            left = size
            while left:
                counter += 1
                block[0:8] = counter.to_bytes(8, 'little')  # no two blocks alike
                num = min(left, len(block))
                handle.write(memoryview(block)[:num])
                left -= num
            handle.flush()
            os.fsync(handle.fileno())
    with open(manifest, 'w') as handle:
        json.dump(want, handle)
    return [os.path.join(directory, p) for p, _s in files]


# ----------------------------------------------------------------------------- helpers

def drop(paths, mode):
    """Evict the data set; mode global also drops every clean cache (echo 3)."""
    if mode == 'global':
        subprocess.run(['sync'], check=True)
        with open('/proc/sys/vm/drop_caches', 'w') as handle:
            handle.write('3\n')
    for path in paths:
        pc.drop_file(path)
    time.sleep(0.5)  # let writeback / other tenants' I/O from the drop settle


def resident_fraction(paths):
    res = pc.Residency()
    total = sum(os.path.getsize(p) for p in paths)
    resident = sum(res.resident_path(p) for p in paths)
    return resident / total if total else 1.0


FADVISE = {'auto': 'auto', 'on': True, 'off': False}


def run_page_cache(directory, workers, chunk_size, fadvise='auto', reader='auto', span=None, retries=0):
    """The module's path; retries=2 is the module's (re-reads pages reclaimed during the warm); span 'chunk' is one open per chunk."""
    begin = time.monotonic()
    files = pc.collect_files([directory])
    res = pc.Residency()
    files, chunks = pc.plan(files, chunk_size, res)
    need = sum(f['bytes_to_read'] for f in files)
    pc.memory_guard(need, pc.parse_size(pc.DEFAULT_RESERVE, 'reserve'), pc.read_meminfo())
    if workers is None:
        workers, _rule = pc.default_workers([f['dev'] for f in files])
    pc.make_resident(files, chunks, workers, chunk_size, residency=res, retries=retries, fadvise=fadvise, reader=reader,
                     span=chunk_size if span == 'chunk' else span)
    seconds = time.monotonic() - begin
    return seconds, need


def run_vmtouch(directory):
    begin = time.monotonic()
    subprocess.run(['vmtouch', '-t', '-q', directory], check=True)
    return time.monotonic() - begin


def fio_jobfile(paths, splits, bs=MIB):
    lines = ['[global]', 'rw=read', 'bs=%d' % bs, 'iodepth=32', 'direct=1', 'ioengine=libaio',
             'group_reporting=1', 'invalidate=1', '']
    jobs = 0
    for index, path in enumerate(paths):
        size = os.path.getsize(path)
        size -= size % 4096  # O_DIRECT reads whole 4 KiB blocks; the unaligned tail is skipped
        if size <= 0:
            continue
        parts = splits if size >= 256 * MIB else 1
        step = -(-size // parts)
        step += (-step) % MIB
        for part in range(parts):
            offset = part * step
            if offset >= size:
                break
            length = min(step, size - offset)
            lines += ['[f%d_%d]' % (index, part), 'filename=%s' % path.replace(':', '\\:'),
                      'offset=%d' % offset, 'size=%d' % length]
            if length < bs:  # fio refuses bs > size; tiny files are read in one request
                lines.append('bs=%d' % length)
            lines.append('')
            jobs += 1
    return '\n'.join(lines), jobs


def run_fio(paths, splits, bs=MIB):
    text, jobs = fio_jobfile(paths, splits, bs)
    with tempfile.NamedTemporaryFile('w', suffix='.fio', delete=False) as handle:
        handle.write(text)
        jobfile = handle.name
    try:
        begin = time.monotonic()
        out = subprocess.run(['fio', '--output-format=json', jobfile], check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        wall = time.monotonic() - begin
    finally:
        os.unlink(jobfile)
    read = json.loads(out[out.index('{'):])['jobs'][0]['read']
    runtime = read['runtime'] / 1000.0  # fio's own clock: the I/O phase only
    return runtime, read['io_bytes'], wall, jobs


def reader_ranges(paths, splits):
    """(path, offset, length) ranges for the readers, largest first.

    Files >= 256 MiB are cut into ``splits`` ranges (MiB-aligned), smaller ones are read
    whole: the layout fio's splits use. Largest first, so the last readers to finish hold
    small ranges and the tail, when fewer than N readers run, is short.
    """
    ranges = []
    for path in paths:
        size = os.path.getsize(path)
        if not size:
            continue
        parts = splits if size >= 256 * MIB else 1
        step = -(-size // parts)
        step += (-step) % MIB
        for offset in range(0, size, step):
            ranges.append((path, offset, min(step, size - offset)))
    ranges.sort(key=lambda r: -r[2])
    return ranges


def run_readers(paths, procs, splits, bs):
    """N concurrent `dd` over reader_ranges(); returns wall seconds from the first start to the last end."""
    todo = deque(reader_ranges(paths, splits))
    errors = []

    def reader():
        while not errors:
            try:
                path, offset, length = todo.popleft()
            except IndexError:
                return
            proc = subprocess.run(['dd', 'if=%s' % path, 'of=/dev/null', 'bs=%d' % bs, 'skip=%d' % offset,
                                   'count=%d' % length, 'iflag=skip_bytes,count_bytes', 'status=none'],
                                  stderr=subprocess.PIPE, universal_newlines=True, check=False)
            if proc.returncode:
                errors.append('dd %s @%d: %s' % (path, offset, proc.stderr.strip()))

    threads = [threading.Thread(target=reader) for _i in range(procs)]
    begin = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - begin
    if errors:
        raise RuntimeError(errors[0])
    return seconds


def parse_readers(spec, default_w):
    """'w:16M,2w:16M,4:4M' -> [(procs, bs)]; N is a number or a multiple of the module's worker count."""
    out = []
    for item in spec.split(','):
        if not item:
            continue
        count, _sep, size = item.partition(':')
        count = count.strip()
        if count.endswith('w'):
            procs = int(count[:-1] or 1) * default_w
        else:
            procs = int(count)
        out.append((procs, pc.parse_size(size or '16M', 'readers')))
    return out


def run_ansible(directory, workers, chunk_size):
    args = 'paths=%s state=resident chunk_size=%d' % (directory, chunk_size)
    if workers:
        args += ' workers=%d' % workers
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'))
    binary = os.path.join(ROOT, '.venv', 'bin', 'ansible')
    begin = time.monotonic()
    subprocess.run([binary, 'localhost', '-c', 'local', '-i', 'localhost,', '-m', 'inferops.node.page_cache',
                    '-a', args, '-e', 'ansible_python_interpreter=%s' % sys.executable],
                   check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    return time.monotonic() - begin


def short(num):
    """8 MiB -> '8MiB' for labels."""
    return pc.human_bytes(num).replace('.00 ', '')


def gbps(num, seconds):
    return num / seconds / 1e9 if seconds > 0 else 0.0


# ----------------------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--dir', default='/var/tmp/inferops-bench')
    parser.add_argument('--scale', type=float, default=1.0, help='multiplies the shard sizes (1.0 = ~4.8 GiB)')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--workers', default='auto', help='page_cache workers, auto = the module default; '
                        'comma list (each is measured)')
    parser.add_argument('--chunk-size', default='8M', help='page_cache chunk size; comma list (each is measured)')
    parser.add_argument('--fadvise', default='auto', help='page_cache posix_fadvise(WILLNEED): auto (the module: only when '
                        'the device readahead window is smaller than a chunk), on, off; comma list with --sweep')
    parser.add_argument('--reader', default='auto', help='page_cache reader: auto (sendfile), sendfile, pread; comma list with --sweep')
    parser.add_argument('--span', default='auto', help='page_cache span (bytes one worker reads through one open '
                        'file): auto (the module: file size / workers), chunk (one chunk per open, as before '
                        'spans), or a size; comma list with --sweep')
    parser.add_argument('--fio-splits', default='1,2,4', help='ranges per big file for fio layouts tried')
    parser.add_argument('--fio-bs', default='1M', help='fio block sizes tried (comma list); the ceiling is the best '
                        'bs=1M layout, others are printed for reference')
    parser.add_argument('--readers', default='w:16M,2w:16M,w:4M',
                        help='parallel buffered readers N:bs, comma list (N a number or Xw = X times the module\'s '
                        'worker count); the best is the ceiling; empty to skip')
    parser.add_argument('--readers-splits', type=int, default=4, help='ranges per file >= 256 MiB for the readers')
    parser.add_argument('--drop', choices=('global', 'files'), default='global',
                        help='global: sync + echo 3 > drop_caches (and DONTNEED); files: DONTNEED on the data set only')
    parser.add_argument('--with-ansible', action='store_true', help='also time the module through `ansible -m`')
    parser.add_argument('--sweep', action='store_true', help='only page_cache over the workers x chunk-size grid, '
                        'and the readers')
    parser.add_argument('--json', help='write all samples to this file')
    parser.add_argument('--cleanup', action='store_true', help='remove --dir at the end')
    opts = parser.parse_args()

    if os.geteuid() != 0:
        sys.exit('page_cache_bench: needs root (drop_caches, mincore of the data set)')
    for tool in ('fio', 'vmtouch'):
        if not opts.sweep and shutil.which(tool) is None:
            sys.exit('page_cache_bench: %s not found (apt-get install %s)' % (tool, tool))

    paths = make_dataset(opts.dir, opts.scale)
    total = sum(os.path.getsize(p) for p in paths)
    worker_list = [None if w == 'auto' else int(w) for w in opts.workers.split(',') if w] or [None]
    chunk_list = [pc.parse_size(c, 'chunk_size') for c in opts.chunk_size.split(',')]
    default_w, rule = pc.default_workers([os.stat(p).st_dev for p in paths])
    print('data set: %d files, %s (%d bytes) in %s' % (len(paths), pc.human_bytes(total), total, opts.dir))
    print('module default workers: %d (%s)' % (default_w, rule))
    print('machine: %d CPUs, MemAvailable %s, kernel %s, load average %.2f %.2f %.2f' % (
        (os.cpu_count(), pc.human_bytes(pc.read_meminfo()['MemAvailable']), os.uname().release) + os.getloadavg()))

    methods = []
    grid = [(r, f, w, c, sp) for r in opts.reader.split(',') for f in opts.fadvise.split(',') for w in worker_list
            for c in chunk_list for sp in opts.span.split(',')]
    for reader, fadvise, workers, chunk, span in grid:
        label = 'page_cache w=%s chunk=%s%s%s%s' % (
            workers or default_w, short(chunk), '' if reader == 'auto' else ' ' + reader,
            '' if fadvise == 'auto' else ' fadvise=' + fadvise,
            '' if span == 'auto' else ' span=' + (span if span == 'chunk' else short(pc.parse_size(span, 'span'))))
        span = span if span in ('auto', 'chunk') else pc.parse_size(span, 'span')
        methods.append((label, 'page_cache', (workers, chunk, FADVISE[fadvise], reader,
                                              None if span == 'auto' else span)))
    if not opts.sweep:
        methods.append(('vmtouch -t', 'vmtouch', None))
        for bs in [pc.parse_size(b, 'fio-bs') for b in opts.fio_bs.split(',') if b]:
            for splits in [int(s) for s in opts.fio_splits.split(',') if s]:
                label = 'fio direct splits=%d' % splits
                if bs != MIB:
                    label = 'fio direct bs=%s splits=%d' % (short(bs), splits)
                methods.append((label, 'fio', (splits, bs)))
        if opts.with_ansible:
            methods.append(('ansible -m page_cache', 'ansible', (worker_list[0], chunk_list[0])))
    for procs, bs in parse_readers(opts.readers, default_w):
        methods.append(('readers dd N=%d bs=%s' % (procs, short(bs)), 'readers',
                        (procs, opts.readers_splits, bs)))
    width = max(len(m[0]) for m in methods) + 1

    samples = {label: [] for label, _k, _a in methods}
    for rnd in range(opts.repeat):
        order = methods[rnd % len(methods):] + methods[:rnd % len(methods)]
        for label, kind, arg in order:
            drop(paths, opts.drop)
            cold = resident_fraction(paths)
            if kind == 'page_cache':
                seconds, _need = run_page_cache(opts.dir, *arg)
                num = total
            elif kind == 'vmtouch':
                seconds = run_vmtouch(opts.dir)
                num = total
            elif kind == 'fio':
                seconds, num, _wall, _jobs = run_fio(paths, *arg)
            elif kind == 'readers':
                seconds = run_readers(paths, *arg)
                num = total
            else:
                seconds = run_ansible(opts.dir, arg[0], arg[1])
                num = total
            warm = resident_fraction(paths) if kind != 'fio' else None
            load = os.getloadavg()[0]
            samples[label].append({'seconds': seconds, 'bytes': num, 'gbps': gbps(num, seconds),
                                   'resident_before': cold, 'resident_after': warm, 'load1': load})
            print('  round %d  %-*s %7.2f s  %6.2f GB/s  resident %5.1f%% -> %-6s load %.2f' % (
                rnd + 1, width, label, seconds, gbps(num, seconds), cold * 100,
                '-' if warm is None else '%.1f%%' % (warm * 100), load), flush=True)

    print('\nmedians over %d round(s) (load average now %.2f %.2f %.2f):' % ((opts.repeat,) + os.getloadavg()))
    med = {}
    for label, _kind, _arg in methods:
        secs = statistics.median(s['seconds'] for s in samples[label])
        rate = statistics.median(s['gbps'] for s in samples[label])
        best = max(s['gbps'] for s in samples[label])
        med[label] = rate
        print('  %-*s %7.2f s  %6.2f GB/s (best %.2f)' % (width, label, secs, rate, best))
    if not opts.sweep:
        vmt = med['vmtouch -t']
        fio = max(v for k, v in med.items() if k.startswith('fio direct splits'))
        print('\nratios of medians (fio ceiling = best fio layout, %.2f GB/s):' % fio)
        for label, kind, _arg in methods:
            if kind in ('page_cache', 'ansible'):
                print('  %-*s page_cache/vmtouch = %.2fx (target >= 1.5x)   page_cache/fio = %.0f%% (target >= 90%%)'
                      % (width, label, med[label] / vmt, 100 * med[label] / fio))
        fio_any = max(v for k, v in med.items() if k.startswith('fio'))
        if fio_any > fio:
            print('  (fastest fio of any block size: %.2f GB/s; page_cache default reaches %.0f%% of it)'
                  % (fio_any, 100 * med[methods[0][0]] / fio_any))
    readers = {k: v for k, v in med.items() if k.startswith('readers ')}
    if readers:
        top = max(readers, key=readers.get)
        print('\nagainst the best parallel buffered readers (%s, %.2f GB/s median):' % (top, readers[top]))
        for label, kind, _arg in methods:
            if kind in ('page_cache', 'ansible'):
                print('  %-*s page_cache/readers = %.0f%% (target >= 100%%)'
                      % (width, label, 100 * med[label] / readers[top]))
    if opts.json:
        with open(opts.json, 'w') as handle:
            json.dump({'total_bytes': total, 'samples': samples, 'default_workers': default_w,
                       'rule': rule, 'load_end': os.getloadavg()}, handle, indent=1)
    if opts.cleanup:
        shutil.rmtree(opts.dir)


if __name__ == '__main__':
    main()
