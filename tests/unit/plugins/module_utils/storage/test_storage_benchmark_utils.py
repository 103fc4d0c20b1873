# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/storage/storage_benchmark.py on fio output recorded for real
(tests/unit/fixtures/fio/README.md says which command on which machine)."""

from __future__ import annotations

import json
import os
import struct

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import storage_benchmark as sb
from ansible_collections.inferops.node.tests.unit.module_harness import fixture

MIB = 1024 * 1024


# ----------------------------------------------------------------------------- fio output

def test_direct_read_recorded_on_the_host():
    got = sb.fio_read(fixture('fio', 'host_direct_1m_j1_q32.out'))
    # fio's own figures: 128 MiB in 198 ms, bw_bytes 677867313
    assert got['bytes'] == 134217728
    assert got['seconds'] == 0.198
    assert got['mbps'] == 677.9
    assert got['iops'] == 646.5
    assert got['fio_version'] == 'fio-3.33'
    assert got['lat_mean_ms'] == pytest.approx(39.518, abs=0.001)
    assert got['clat_p99_ms'] is not None and got['clat_p99_ms'] > 0
    assert got['notes'] == []


def test_device_read_recorded_in_the_lab_guest():
    """4 jobs over /dev/md/models (the lab's RAID0, 512K chunk), the module's device layout and argv."""
    got = sb.fio_read(fixture('fio', 'lab_md_models_direct_512k_j4_q8.out'))
    assert got['bytes'] == 4 * 128 * MIB
    assert got['seconds'] == 0.465
    assert got['mbps'] == 1154.6
    assert got['iops'] == 2202.2
    assert got['clat_p99_ms'] == 51.118
    case = {'target': 'device', 'bs': 512 * 1024, 'mode': 'direct', 'numjobs': 4, 'iodepth': 8}
    argv = sb.fio_argv(case, sb.fio_layout(case, device='/dev/md/models', device_bytes=512 * MIB))
    doc = json.loads(fixture('fio', 'lab_md_models_direct_512k_j4_q8.out'))
    # group_reporting: one entry, carrying the last job's options - those the module's layout gives job3
    assert doc['jobs'][0]['job options'] == {'name': 'job3', 'filename': '/dev/md/models',
                                             'offset': str(384 * MIB), 'size': str(128 * MIB)}
    assert argv[argv.index('--name=job3'):] == ['--name=job3', '--filename=/dev/md/models',
                                                '--offset=%d' % (384 * MIB), '--size=%d' % (128 * MIB)]


def test_lines_before_the_json_are_skipped():
    """psync with an iodepth makes fio print a note on stdout before the JSON (recorded)."""
    text = fixture('fio', 'host_buffered_1m_j2.out')
    assert text.startswith('note: both iodepth >= 1 and synchronous I/O engine')
    got = sb.fio_read(text)
    assert got['bytes'] == 134217728
    assert got['mbps'] == 860.4
    assert len(got['notes']) == 2 and all(n.startswith('note:') for n in got['notes'])


def test_failed_job_is_an_error_naming_it():
    """fio could not open the device (recorded in a container without the capability): job error 1."""
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.fio_read(fixture('fio', 'host_device_512k_j2_q8.out'))
    assert 'job0: error 1' in exc.value.msg


def test_missing_file_reads_nothing():
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.fio_read(fixture('fio', 'host_missing.out'))
    assert 'error 22' in exc.value.msg


def test_fio_output_without_json():
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.fio_read('fio: failed to open job file\nfio: no jobs\n')
    assert 'no JSON' in exc.value.msg and 'failed to open job file' in exc.value.msg
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.fio_read('note: x\n{"jobs": [\n')
    assert 'line 2' in exc.value.msg


def test_jobs_without_group_reporting_are_added_up():
    doc = json.loads(fixture('fio', 'host_direct_1m_j1_q32.out'))
    doc['jobs'] = [doc['jobs'][0], json.loads(json.dumps(doc['jobs'][0]))]
    got = sb.fio_read(json.dumps(doc))
    assert got['bytes'] == 2 * 134217728
    assert got['mbps'] == 1355.7
    assert got['seconds'] == 0.198


# ----------------------------------------------------------------------------- plan

def test_cases_buffered_only_vary_numjobs():
    jobs = [{'numjobs': 1, 'iodepth': 32}, {'numjobs': 1, 'iodepth': 4}, {'numjobs': 4, 'iodepth': 8}]
    cases = sb.fio_cases(['directory', 'device'], [MIB, 512 * 1024], ['direct', 'buffered'], jobs)
    keys = [sb.case_key(c) for c in cases]
    assert len(keys) == len(set(keys)) == 2 * 2 * (3 + 2)
    assert 'directory/direct/bs=1M/jobs=1,qd=32' in keys
    assert 'device/buffered/bs=512K/jobs=4,sync' in keys
    assert 'directory/buffered/bs=1M/jobs=1,sync' in keys


def test_directory_jobs_read_their_own_shards():
    files = ['/m/a', '/m/b', '/m/c', '/m/d:x']
    case = {'target': 'directory', 'bs': MIB, 'mode': 'direct', 'numjobs': 2, 'iodepth': 8}
    argv = sb.fio_argv(case, sb.fio_layout(case, files), runtime=600)
    assert argv[:3] == ['fio', '--output-format=json', '--readonly']
    assert '--runtime=600' in argv
    assert '--direct=1' in argv and '--ioengine=libaio' in argv and '--iodepth=8' in argv
    assert argv[argv.index('--name=job0') + 1] == '--filename=/m/a:/m/c'
    assert argv[argv.index('--name=job1') + 1] == '--filename=/m/b:/m/d\\:x'
    assert argv.count('--file_service_type=sequential') == 2
    assert not any(a.startswith('--rw=') and a != '--rw=read' for a in argv)
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.fio_layout(dict(case, numjobs=5), files)
    assert exc.value.option == 'jobs'


def test_device_jobs_read_aligned_ranges_read_only():
    case = {'target': 'device', 'bs': 512 * 1024, 'mode': 'buffered', 'numjobs': 3, 'iodepth': 1}
    layout = sb.fio_layout(case, device='/dev/md/models', device_bytes=1024 * MIB)
    assert [j['offset'] for j in layout] == [0, 341 * MIB, 682 * MIB]
    assert all(j['size'] == 341 * MIB for j in layout)
    argv = sb.fio_argv(case, layout)
    assert '--readonly' in argv and '--rw=read' in argv
    assert '--direct=0' in argv and '--ioengine=psync' in argv
    assert not any(a.startswith('--iodepth') for a in argv)
    assert argv[-4:] == ['--name=job2', '--filename=/dev/md/models', '--offset=%d' % (682 * MIB),
                         '--size=%d' % (341 * MIB)]


# ----------------------------------------------------------------------------- statistics and gate

def test_summary():
    assert sb.summary([3.0, 1.0, 2.0, None]) == {'median': 2.0, 'min': 1.0, 'max': 3.0, 'n': 3}
    assert sb.summary([1.0, 2.0]) == {'median': 1.5, 'min': 1.0, 'max': 2.0, 'n': 2}
    assert sb.summary([]) is None


def test_figures_of_a_result():
    result = {
        'fio': [{'key': 'directory/direct/bs=1M/jobs=1,qd=32', 'mbps': {'median': 700.0}},
                {'key': 'device/direct/bs=1M/jobs=1,qd=32', 'mbps': None}],
        'page_cache': {'status': 'ran', 'mbps': {'median': 900.0}},
        'model_repository': {'status': 'skipped'},
        'safetensors': {'status': 'ran', 'cold_mbps': {'median': 400.0}, 'warm_mbps': {'median': 2000.0}},
    }
    assert sb.figures(result) == {'fio/directory/direct/bs=1M/jobs=1,qd=32': 700.0, 'page_cache/mbps': 900.0,
                                  'safetensors/cold_mbps': 400.0, 'safetensors/warm_mbps': 2000.0}
    assert sb.figures(dict(result, safetensors={'status': 'skipped', 'reason': 'x'}, page_cache={})) == {
        'fio/directory/direct/bs=1M/jobs=1,qd=32': 700.0}


def test_gate_tolerance():
    base = {'a': 100.0, 'b': 100.0, 'c': 100.0, 'gone': 5.0}
    now = {'a': 91.0, 'b': 89.9, 'c': 150.0, 'new': 1.0}
    got = sb.gate(now, base, 10)
    assert [(r['figure'], r['ok'], r['change_percent']) for r in got['compared']] == [
        ('a', True, -9.0), ('b', False, -10.1), ('c', True, 50.0)]
    assert got['missing'] == ['gone'] and got['new'] == ['new']
    errors = sb.gate_errors(now, base, 10, host='node1')
    assert errors == ['node1: b = 89.9 MB/s is 10.1 % below the baseline 100.0 MB/s '
                      '(tolerance 10.0 %, storage_benchmark_baseline)']
    assert sb.gate_errors(now, base, 20) == []
    assert sb.gate_errors({}, {}, 10) == []


def test_side_by_side_ratios():
    before = {'figures': {'a': 100.0, 'b': 50.0, 'gone': 1.0}, 'label': 'before-tuning'}
    after = {'figures': {'a': 125.0, 'b': 25.0, 'new': 2.0}, 'label': 'after-tuning'}
    assert sb.side_by_side(before, after) == [
        {'figure': 'a', 'before': 100.0, 'after': 125.0, 'ratio': 1.25},
        {'figure': 'b', 'before': 50.0, 'after': 25.0, 'ratio': 0.5},
        {'figure': 'gone', 'before': 1.0, 'after': None, 'ratio': None},
        {'figure': 'new', 'before': None, 'after': 2.0, 'ratio': None}]


def test_gate_on_run_records():
    """A stored run record counts by its figures, on either side (the role gates record against record)."""
    base = {'record_version': 1, 'label': 'baseline', 'figures': {'a': 100.0}}
    now = {'record_version': 1, 'label': 'after', 'figures': {'a': 80.0}, 'benchmark': {'fio': []}}
    assert sb.record_figures(now) == {'a': 80.0} and sb.record_figures({'a': 1.0}) == {'a': 1.0}
    assert sb.gate_errors(now, base, 10) == sb.gate_errors({'a': 80.0}, {'a': 100.0}, 10) == [
        'a = 80.0 MB/s is 20.0 % below the baseline 100.0 MB/s (tolerance 10.0 %, storage_benchmark_baseline)']
    assert sb.gate_errors(now, base['figures'], 20) == sb.gate_errors(now['figures'], base, 20) == []


def test_gate_refusals():
    assert 'no figure of the baseline' in sb.gate_errors({'x': 1.0}, {'y': 1.0}, 10)[0]
    assert 'must be a number' in sb.gate_errors({}, {}, 'ten')[0]
    assert 'must be dicts' in sb.gate_errors([], {}, 10)[0]


# ----------------------------------------------------------------------------- safetensors

def read_header(path):
    with open(path, 'rb') as handle:
        (length,) = struct.unpack('<Q', handle.read(8))
        return length, json.loads(handle.read(length).decode('utf-8'))


def test_generated_shards_have_the_exact_size_and_a_valid_header(tmp_path):
    block = bytearray(os.urandom(MIB))
    paths = sb.write_safetensors_model(str(tmp_path), 2, 3 * MIB, block)
    assert [os.path.basename(p) for p in paths] == ['model-00001-of-00002.safetensors',
                                                    'model-00002-of-00002.safetensors']
    for path in paths:
        assert os.path.getsize(path) == 3 * MIB
        length, header = read_header(path)
        assert length == sb.HEADER_BYTES and length % 8 == 0
        tensors = {k: v for k, v in header.items() if k != '__metadata__'}
        ends = sorted(v['data_offsets'] for v in tensors.values())
        assert ends[0][0] == 0 and ends[-1][1] == 3 * MIB - 8 - length
        assert all(v['dtype'] == 'F16' and v['shape'][0] * 2 == v['data_offsets'][1] - v['data_offsets'][0]
                   for v in tensors.values())
    with open(tmp_path / 'model.safetensors.index.json') as handle:
        index = json.load(handle)
    assert set(index['weight_map'].values()) == {os.path.basename(p) for p in paths}
    with open(paths[0], 'rb') as one, open(paths[1], 'rb') as two:
        one.seek(8 + sb.HEADER_BYTES)
        two.seek(8 + sb.HEADER_BYTES)
        assert one.read(4096) != two.read(4096)


def test_too_small_shard_is_refused(tmp_path):
    with pytest.raises(sb.BenchmarkError) as exc:
        sb.write_safetensors_model(str(tmp_path), 1, sb.HEADER_BYTES, bytearray(16))
    assert exc.value.option == 'file_size'


def test_loader_pattern_with_the_real_library(tmp_path):
    """The real safetensors library (tests/unit/requirements.txt): a missing one fails, never skips."""
    safe_open, reason = sb.safetensors_loader()
    assert safe_open is not None, reason
    paths = sb.write_safetensors_model(str(tmp_path), 2, 3 * MIB, bytearray(os.urandom(MIB)))
    size, count, seconds = sb.load_safetensors(safe_open, paths)
    assert size == 2 * (3 * MIB - 8 - sb.HEADER_BYTES)
    assert count == 2 and seconds >= 0
