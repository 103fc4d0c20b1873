# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rules of the storage benchmark (module ``storage_benchmark``, filter ``storage_benchmark_gate``).

* ``fio_document`` / ``fio_read`` - fio's ``--output-format=json`` (lines fio prints before the JSON,
  such as ``note: ...`` warnings, are skipped) to the read figures of one run.
* ``fio_cases`` / ``fio_argv`` - the measurement plan and fio's argument list for one case. Every run is a
  sequential read with ``--readonly`` (fio refuses any write): a device is never written.
* ``summary`` - median / min / max of the repetitions.
* ``figures`` / ``gate`` - the flat figures of a result (all "higher is better", MB/s) and their
  comparison with a baseline, worded per figure.
* The run records the role keeps (``<results dir>/<UTC timestamp>.json``, ``latest.json``): ``record_file_name``
  names one, ``read_records`` reads the newest of a directory and ``read_record`` one file, such as the gate's
  baseline (module ``storage_benchmark_info``),
  ``compared_pair`` picks the record the latest is compared with, ``side_by_side`` compares two (the node
  audit's ``benchmarks`` section, ``tools/bench/storage_benchmark_compare.py``).
* ``write_safetensors_model`` / ``load_safetensors`` - a generated multi-shard safetensors model (the
  format written here, header padded so each shard has the exact size asked) and the LLM engines'
  loader pattern, ``safetensors.safe_open(path, framework="numpy")`` (memory-mapped, no GPU).

No Ansible imports: the controller's filter uses ``gate`` too.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time

__all__ = [
    'BenchmarkError', 'MIB', 'fio_document', 'fio_read', 'fio_cases', 'fio_argv', 'fio_layout',
    'summary', 'figures', 'gate', 'gate_errors', 'record_figures', 'safetensors_loader', 'write_safetensors_model',
    'load_safetensors', 'case_key', 'side_by_side', 'LATEST_RECORD', 'record_file_name', 'record_errors',
    'read_record', 'read_records', 'compared_pair',
]

MIB = 1024 * 1024
# A run record's file name: started_at without '-' and ':' (record_file_name), so names sort by time.
RECORD_NAME = re.compile(r'^[0-9]{8}T[0-9]{6}Z\.json$')
# The role's copy of the newest record; the reader skips it (and baseline.json, any other name).
LATEST_RECORD = 'latest.json'
# Header room in each generated shard (JSON padded with spaces, as safetensors itself pads).
HEADER_BYTES = 64 * 1024
TENSOR_BYTES = 32 * MIB


class BenchmarkError(Exception):
    def __init__(self, msg, option=None):
        super(BenchmarkError, self).__init__(msg)
        self.msg = msg
        self.option = option


# ----------------------------------------------------------------------------- fio output

def fio_document(text):
    """The JSON document of fio's output; lines before it (fio's notes and warnings) are skipped."""
    lines = (text or '').splitlines(True)
    for index, line in enumerate(lines):
        if line.startswith('{'):
            try:
                return json.loads(''.join(lines[index:])), [ln.rstrip('\n') for ln in lines[:index]]
            except ValueError as exc:
                raise BenchmarkError('fio output is not JSON from line %d on: %s' % (index + 1, exc))
    raise BenchmarkError('fio printed no JSON document: %s' % ' '.join(ln.strip() for ln in lines[:5])[:300])


def fio_read(text):
    """Read figures of one fio run: bytes, seconds, MB/s (10^6 bytes/s), IOPS, mean and p99 latency."""
    doc, preamble = fio_document(text)
    jobs = doc.get('jobs') or []
    if not jobs:
        raise BenchmarkError('fio output lists no jobs')
    errors = ['%s: error %s' % (j.get('jobname'), j.get('error')) for j in jobs if j.get('error')]
    if errors:
        raise BenchmarkError('fio job(s) failed: %s' % ', '.join(errors))
    reads = [j.get('read') or {} for j in jobs]
    io_bytes = sum(int(r.get('io_bytes', 0)) for r in reads)
    runtime_ms = max(int(r.get('runtime', 0)) for r in reads)
    if io_bytes <= 0 or runtime_ms <= 0:
        raise BenchmarkError('fio read nothing (io_bytes %d, runtime %d ms)' % (io_bytes, runtime_ms))
    bw_bytes = sum(int(r.get('bw_bytes', 0)) for r in reads)
    lat = [r.get('lat_ns', {}).get('mean') for r in reads if r.get('lat_ns', {}).get('mean') is not None]
    p99 = [r.get('clat_ns', {}).get('percentile', {}).get('99.000000') for r in reads]
    p99 = [v for v in p99 if v is not None]
    return {
        'bytes': io_bytes,
        'seconds': round(runtime_ms / 1000.0, 3),
        'mbps': round(bw_bytes / 1e6, 1) if bw_bytes else round(io_bytes / (runtime_ms / 1000.0) / 1e6, 1),
        'iops': round(sum(float(r.get('iops', 0)) for r in reads), 1),
        'lat_mean_ms': round(statistics.mean(lat) / 1e6, 3) if lat else None,
        'clat_p99_ms': round(max(p99) / 1e6, 3) if p99 else None,
        'fio_version': doc.get('fio version'),
        'notes': preamble,
    }


# ----------------------------------------------------------------------------- plan

def case_key(case):
    """Stable name of a case, used in the figures and the gate: ``directory/direct/bs=1M/jobs=1,qd=32``; a random
    read case ``directory/direct/randread/bs=4K/jobs=8,qd=32``."""
    depth = 'qd=%d' % case['iodepth'] if case['mode'] == 'direct' else 'sync'
    pattern = 'randread/' if case.get('pattern') == 'randread' else ''
    return '%s/%s/%sbs=%s/jobs=%d,%s' % (case['target'], case['mode'], pattern, size_label(case['bs']),
                                         case['numjobs'], depth)


def size_label(num):
    for unit, factor in (('G', 1024 ** 3), ('M', MIB), ('K', 1024)):
        if num % factor == 0:
            return '%d%s' % (num // factor, unit)
    return str(num)


def fio_cases(targets, block_sizes, modes, jobs, random_reads=(), random_seconds=10):
    """Every (target, block size, mode, jobs) combination; buffered reads use psync, so the
    queue depth only varies for direct reads (a buffered case per distinct numjobs). Then, per target, each of
    ``random_reads`` (``{bs, numjobs, iodepth}``, bs in bytes): direct random reads for ``random_seconds``, the
    access of an embedding or vector index (seed 000's index array: 4 KiB, deep queues, many jobs)."""
    cases = []
    for target in targets:
        for bs in block_sizes:
            for mode in modes:
                seen = set()
                for job in jobs:
                    iodepth = job['iodepth'] if mode == 'direct' else 1
                    if (job['numjobs'], iodepth) in seen:
                        continue
                    seen.add((job['numjobs'], iodepth))
                    cases.append({'target': target, 'bs': bs, 'mode': mode,
                                  'numjobs': job['numjobs'], 'iodepth': iodepth})
        for job in random_reads:
            cases.append({'target': target, 'bs': job['bs'], 'mode': 'direct', 'pattern': 'randread',
                          'numjobs': job['numjobs'], 'iodepth': job['iodepth'], 'seconds': random_seconds})
    return cases


def fio_layout(case, files=None, device=None, device_bytes=0):
    """What each fio job reads: on a directory, job j reads files j, j+N, ... one after another (each
    loader worker its own shards); on a device, job j reads the j-th of N equal, aligned ranges."""
    num = case['numjobs']
    if case.get('pattern') == 'randread':
        # Random reads: every job over the whole set (an index is read anywhere by every worker).
        if case['target'] == 'directory':
            return [{'filename': ':'.join(f.replace(':', '\\:') for f in files)} for dummy in range(num)]
        whole = device_bytes - device_bytes % max(case['bs'], MIB)
        return [{'filename': device.replace(':', '\\:'), 'offset': 0, 'size': whole} for dummy in range(num)]
    if case['target'] == 'directory':
        if num > len(files):
            raise BenchmarkError('numjobs %d is more than the %d generated files: each job reads its own files '
                                 '(raise file_count or lower numjobs)' % (num, len(files)), 'jobs')
        return [{'filename': ':'.join(f.replace(':', '\\:') for f in files[j::num])} for j in range(num)]
    part = device_bytes // num
    part -= part % max(case['bs'], MIB)
    if part <= 0:
        raise BenchmarkError('device_size %d is too small for %d jobs of bs %d' % (device_bytes, num, case['bs']),
                             'device_size')
    return [{'filename': device.replace(':', '\\:'), 'offset': j * part, 'size': part} for j in range(num)]


def fio_argv(case, layout, runtime=None):
    """fio's argument list for one case (global options first, then one --name section per job).
    ``runtime`` (seconds) caps a run on a device that stalls: fio then reports what it read so far."""
    random = case.get('pattern') == 'randread'
    argv = ['fio', '--output-format=json', '--readonly', '--rw=%s' % ('randread' if random else 'read'),
            '--bs=%d' % case['bs'], '--invalidate=1', '--group_reporting=1']
    if random:
        # A fixed time, not a volume: random 4 KiB reads of a whole file set would take hours; a new random
        # sequence each run, no map of blocks read (what a live index does).
        argv += ['--runtime=%d' % case['seconds'], '--time_based', '--randrepeat=0', '--norandommap']
    elif runtime:
        argv.append('--runtime=%d' % runtime)
    if case['mode'] == 'direct':
        argv += ['--direct=1', '--ioengine=libaio', '--iodepth=%d' % case['iodepth']]
    else:
        argv += ['--direct=0', '--ioengine=psync']
    for index, job in enumerate(layout):
        argv += ['--name=job%d' % index, '--filename=%s' % job['filename']]
        if 'offset' in job:
            argv += ['--offset=%d' % job['offset'], '--size=%d' % job['size']]
        else:
            argv.append('--file_service_type=%s' % ('random' if random else 'sequential'))
    return argv


# ----------------------------------------------------------------------------- statistics

def summary(values):
    """Median, min, max and count of a list of numbers (None when empty)."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {'median': round(statistics.median(values), 3), 'min': round(min(values), 3),
            'max': round(max(values), 3), 'n': len(values)}


def figures(result):
    """The flat figures of a module result, every one MB/s (higher is better): the fio medians,
    the page cache load and the safetensors loads."""
    out = {}
    for case in result.get('fio') or []:
        if case.get('mbps'):
            out['fio/' + case['key']] = case['mbps']['median']
    for name in ('page_cache', 'model_repository'):
        part = result.get(name) or {}
        if part.get('status') == 'ran' and part.get('mbps'):
            out['%s/mbps' % name] = part['mbps']['median']
    st = result.get('safetensors') or {}
    if st.get('status') == 'ran':
        for key in ('cold_mbps', 'warm_mbps'):
            if st.get(key):
                out['safetensors/' + key] = st[key]['median']
    return out


def gate(current, baseline, tolerance_percent):
    """Compare two figure dicts; each compared figure is ``{figure, baseline, value, change_percent, ok}``.
    A figure fails when it is below the baseline by more than ``tolerance_percent``. Figures only on
    one side are listed in ``missing`` / ``new`` and not judged."""
    rows = []
    for name in sorted(set(current) & set(baseline)):
        base, value = float(baseline[name]), float(current[name])
        change = round(100.0 * (value - base) / base, 1) if base > 0 else 0.0
        rows.append({'figure': name, 'baseline': base, 'value': value, 'change_percent': change,
                     'ok': base <= 0 or value >= base * (1 - tolerance_percent / 100.0)})
    return {'compared': rows, 'tolerance_percent': tolerance_percent,
            'missing': sorted(set(baseline) - set(current)), 'new': sorted(set(current) - set(baseline))}


def record_figures(value):
    """A figures dict, or the figures of a stored run record (``{'figures': {...}, ...}``)."""
    if isinstance(value, dict) and isinstance(value.get('figures'), dict):
        return value['figures']
    return value


def gate_errors(current, baseline, tolerance_percent, host='', variable='storage_benchmark_baseline'):
    """The gate's failures worded for an operator (empty when every compared figure is within tolerance).
    ``current`` and ``baseline`` are figure dicts or run records (``record_figures``)."""
    current, baseline = record_figures(current), record_figures(baseline)
    try:
        tolerance = float(tolerance_percent)
    except (TypeError, ValueError):
        return ['storage_benchmark_tolerance_percent = %r: must be a number of percent' % (tolerance_percent,)]
    if not isinstance(current, dict) or not isinstance(baseline, dict):
        return ['%s: the baseline and the result must be dicts of figures' % variable]
    result = gate(current, baseline, tolerance)
    where = '%s: ' % host if host else ''
    errors = ['%s%s = %.1f MB/s is %.1f %% below the baseline %.1f MB/s (tolerance %s %%, %s)'
              % (where, row['figure'], row['value'], -row['change_percent'], row['baseline'], tolerance, variable)
              for row in result['compared'] if not row['ok']]
    if not result['compared'] and baseline:
        errors.append('%sno figure of the baseline (%s) was measured in this run: %s'
                      % (where, variable, ', '.join(sorted(baseline)[:5])))
    return errors


def record_file_name(started_at):
    """The file a run started at ``started_at`` (``2026-12-03T10:10:52Z``) is kept in: ``20261203T101052Z.json``."""
    return '%s.json' % started_at.replace('-', '').replace(':', '')


def record_errors(record):
    """What makes a document unusable as a run record (empty when it is one): a JSON object with the
    role's ``started_at``, ``label`` and a ``figures`` dict of numbers."""
    if not isinstance(record, dict):
        return ['not a JSON object']
    errors = []
    if not isinstance(record.get('started_at'), str):
        errors.append('no started_at')
    if not isinstance(record.get('label'), str):
        errors.append('no label')
    found = record.get('figures')
    if not isinstance(found, dict):
        errors.append('no figures')
    else:
        bad = sorted(k for k, v in found.items() if isinstance(v, bool) or not isinstance(v, (int, float)))
        if bad:
            errors.append('figures that are not numbers: %s' % ', '.join(bad[:5]))
    return errors


def read_record(path, details=False):
    """``(record, None)`` of a run record file (with ``file``; ``benchmark``, the module's whole result, with
    ``details`` only), or ``(None, why not)`` - unreadable, not JSON, or a record's field missing."""
    try:
        with open(path) as handle:
            record = json.load(handle)
    except (OSError, ValueError) as exc:
        return None, str(exc)
    problems = record_errors(record)
    if problems:
        return None, 'not a storage_benchmark run record: %s' % '; '.join(problems)
    if not details:
        record.pop('benchmark', None)
    record['file'] = path
    return record, None


def read_records(directory, count, details=False):
    """The newest ``count`` run records of ``directory`` (by file name, newest first; ``read_record``):
    ``{directory, exists, files, records, errors}``. ``files`` counts the record files there; a file that is not
    a record is in ``errors`` as ``{file, msg}`` and takes its place in the count, so that a read stays bounded.
    A missing directory has no records; another OSError is raised."""
    try:
        names = sorted((n for n in os.listdir(directory) if RECORD_NAME.match(n)), reverse=True)
    except FileNotFoundError:
        return {'directory': directory, 'exists': False, 'files': 0, 'records': [], 'errors': []}
    records, errors = [], []
    for name in names[:count]:
        record, error = read_record(os.path.join(directory, name), details)
        if error:
            errors.append({'file': os.path.join(directory, name), 'msg': error})
        else:
            records.append(record)
    return {'directory': directory, 'exists': True, 'files': len(names), 'records': records, 'errors': errors}


def compared_pair(records):
    """``(latest, before)`` of records listed newest first: the latest run and the newest earlier one with
    another label (``before-tuning`` for an ``after-tuning`` run) - ``before`` is None when every record has
    the latest's label; ``(None, None)`` without records."""
    if not records:
        return None, None
    latest = records[0]
    for record in records[1:]:
        if record.get('label') != latest.get('label'):
            return latest, record
    return latest, None


def side_by_side(before, after):
    """Two run records (or figure dicts) compared figure by figure: ``{figure, before, after, ratio}``
    (ratio = after / before, None where a side lacks the figure), in the order of the figures' names."""
    one = record_figures(before) if isinstance(before, dict) else {}
    two = record_figures(after) if isinstance(after, dict) else {}
    rows = []
    for name in sorted(set(one) | set(two)):
        first, second = one.get(name), two.get(name)
        ratio = round(float(second) / float(first), 2) if first and second is not None else None
        rows.append({'figure': name, 'before': first, 'after': second, 'ratio': ratio})
    return rows


# ----------------------------------------------------------------------------- safetensors

def safetensors_loader():
    """``(safe_open, None)`` or ``(None, reason)``: the loader pattern needs both safetensors and numpy."""
    missing = []
    try:
        import numpy  # noqa: F401 pylint: disable=unused-import
    except ImportError:
        missing.append('numpy (Debian: python3-numpy)')
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
        missing.append('safetensors (not packaged in Debian 12: pip install safetensors)')
    if missing:
        return None, 'the Python running the module cannot import %s' % ' and '.join(missing)
    return safe_open, None


def write_safetensors_model(directory, shards, shard_size, block):
    """Write ``shards`` safetensors files of exactly ``shard_size`` bytes each (F16 tensors of up to 32 MiB,
    data from ``block`` with a counter so no two 16 MiB pieces are alike) plus
    ``model.safetensors.index.json``; return the shard paths."""
    paths, weight_map = [], {}
    data_len = shard_size - 8 - HEADER_BYTES
    if data_len < 2 or data_len % 2:
        raise BenchmarkError('file_size %d is too small for a safetensors shard' % shard_size, 'file_size')
    counter = 0
    for shard in range(shards):
        name = 'model-%05d-of-%05d.safetensors' % (shard + 1, shards)
        header, offset, index = {'__metadata__': {'format': 'pt', 'generator': 'inferops.node.storage_benchmark'}}, 0, 0
        while offset < data_len:
            length = min(TENSOR_BYTES, data_len - offset)
            key = 'model.layers.%d.shard%d.weight' % (index, shard)
            header[key] = {'dtype': 'F16', 'shape': [length // 2], 'data_offsets': [offset, offset + length]}
            weight_map[key] = name
            offset += length
            index += 1
        text = json.dumps(header, separators=(',', ':')).encode('utf-8')
        if len(text) > HEADER_BYTES:
            raise BenchmarkError('file_size %d gives a safetensors header over %d bytes' % (shard_size, HEADER_BYTES),
                                 'file_size')
        text += b' ' * (HEADER_BYTES - len(text))
        path = os.path.join(directory, name)
        with open(path, 'wb') as handle:
            handle.write(len(text).to_bytes(8, 'little'))
            handle.write(text)
            left = data_len
            while left:
                counter += 1
                block[0:8] = counter.to_bytes(8, 'little')
                num = min(left, len(block))
                handle.write(memoryview(block)[:num])
                left -= num
            handle.flush()
            os.fsync(handle.fileno())
        paths.append(path)
    with open(os.path.join(directory, 'model.safetensors.index.json'), 'w') as handle:
        json.dump({'metadata': {'total_size': shards * data_len}, 'weight_map': weight_map}, handle)
    return paths


def load_safetensors(safe_open, paths):
    """Load every tensor of every shard as an engine does (``safe_open(..., framework="numpy")``, then
    ``get_tensor``, which copies the tensor's bytes out of the mapping, so every byte is read); return
    ``(tensor bytes, tensors, seconds)``. Each tensor is dropped before the next."""
    begin = time.monotonic()
    total, count = 0, 0
    for path in paths:
        with safe_open(path, framework='numpy') as handle:
            for key in handle.keys():
                tensor = handle.get_tensor(key)
                total += tensor.nbytes
                count += 1
                del tensor
    return total, count, time.monotonic() - begin
