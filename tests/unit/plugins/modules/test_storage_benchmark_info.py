# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""storage_benchmark_info on a results directory as the storage_benchmark role leaves it: the two runs it
recorded on the development VM (fixtures/storage_benchmark/records, README there), copied to a temporary
directory, with the files a host may also hold (latest.json, a baseline.json copy) and broken ones."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import storage_benchmark as sb
from ansible_collections.inferops.node.plugins.modules import storage_benchmark_info
from ansible_collections.inferops.node.tests.unit.module_harness import fixture, fixture_path, run_module

BEFORE, AFTER = '20261203T101052Z.json', '20261203T101112Z.json'


def record(name):
    return json.loads(fixture('storage_benchmark', 'records', name))


@pytest.fixture
def results(tmp_path):
    """The recorded results directory, plus a baseline kept as the role's docs suggest (not a run record)."""
    path = tmp_path / 'benchmarks'
    shutil.copytree(fixture_path('storage_benchmark', 'records'), str(path))
    shutil.copy(str(path / BEFORE), str(path / 'baseline.json'))
    return path


def info(path, check_mode=False, **args):
    failed, result = run_module(storage_benchmark_info.main, dict(args, path=str(path)), check_mode=check_mode)
    assert not failed, result
    assert result['changed'] is False
    return result


def test_records_newest_first_without_the_module_result(results):
    result = info(results)
    assert result['exists'] is True and result['files'] == 2 and result['errors'] == []
    assert [r['file'] for r in result['records']] == [str(results / AFTER), str(results / BEFORE)]
    assert [r['label'] for r in result['records']] == ['after-tuning', 'before-tuning']
    after = record(AFTER)
    del after['benchmark']
    assert result['records'][0] == dict(after, file=str(results / AFTER))
    assert result['records'][0]['profile'] == 'local_nvme' and result['records'][0]['kernel'] == '6.18.44-fc-v1098'


def test_details_and_count(results):
    result = info(results, count=1, details=True)
    assert result['files'] == 2 and len(result['records']) == 1
    assert result['records'][0]['benchmark'] == record(AFTER)['benchmark']


def test_check_mode_reads_the_same(results):
    assert info(results, check_mode=True) == info(results)


def test_missing_directory_is_no_records(tmp_path):
    result = info(tmp_path / 'none')
    assert result == dict(result, exists=False, files=0, records=[], errors=[])


def test_broken_files_are_reported_per_file(results):
    """A run cut short while its record was written (the real newer record, truncated), and a JSON document
    that is no record: each named in errors, in the count of files read; the real runs still read."""
    text = (results / AFTER).read_text()
    (results / '20261203T120000Z.json').write_text(text[:len(text) // 2])
    (results / '20261203T110000Z.json').write_text(json.dumps({'label': 'x', 'started_at': '2026-12-03T11:00:00Z',
                                                               'figures': {'page_cache/mbps': 'fast'}}))
    result = info(results)
    assert result['files'] == 4 and [r['label'] for r in result['records']] == ['after-tuning', 'before-tuning']
    assert [e['file'] for e in result['errors']] == [str(results / '20261203T120000Z.json'),
                                                     str(results / '20261203T110000Z.json')]
    assert result['errors'][1]['msg'] == 'not a storage_benchmark run record: figures that are not numbers: page_cache/mbps'
    # Bounded: the broken files count, so the two newest files are both broken ones.
    assert info(results, count=2)['records'] == []


def test_refusals(results):
    failed, result = run_module(storage_benchmark_info.main, {'path': str(results), 'count': 0})
    assert failed and result['msg'] == 'count=0: must be 1 or more'
    failed, result = run_module(storage_benchmark_info.main, {'path': str(results / BEFORE)})
    assert failed and result['msg'].startswith('path=%s: ' % (results / BEFORE)) and 'Not a directory' in result['msg']


def test_record_file_names_are_the_modules():
    """The role names each record by the storage_benchmark module's record_file: the reader's pattern."""
    for name in (BEFORE, AFTER):
        assert sb.record_file_name(record(name)['started_at']) == name and sb.RECORD_NAME.match(name)
    assert not sb.RECORD_NAME.match(sb.LATEST_RECORD) and os.path.exists(fixture_path('storage_benchmark', 'records', 'latest.json'))
