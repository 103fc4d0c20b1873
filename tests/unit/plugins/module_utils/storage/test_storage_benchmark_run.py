# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/storage/storage_benchmark_run.py: the option checks and the plan of one run.

The measured runs are tested through the module (tests/unit/plugins/modules/test_storage_benchmark.py,
real fio); here the rules that decide before anything runs. The md chunk is read from a sysfs tree under
a test ``sysfs.ROOT`` at the device number of the real temporary directory.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import storage_benchmark_run as run_mod
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark import BenchmarkError

MIB = 1024 * 1024

DEFAULTS = {
    'directory': None, 'device': None, 'device_size': '1G', 'block_sizes': ['1M', 'chunk'],
    'modes': ['direct', 'buffered'], 'jobs': [{'numjobs': 1, 'iodepth': 32}, {'numjobs': 4, 'iodepth': 8}],
    'repetitions': 3, 'file_count': 4, 'file_size': '1G', 'space_reserve': '1G', 'page_cache': True,
    'safetensors': True, 'model_repository': None, 'fio_runtime': 600,
}


def params(**kwargs):
    return dict(DEFAULTS, **kwargs)


@pytest.fixture
def md_root(tmp_path, monkeypatch):
    """A sysfs tree under a test ROOT; ``chunk(directory, text)`` makes the device of ``directory`` an md array."""
    root = tmp_path / 'root'
    root.mkdir()
    monkeypatch.setattr(sysfs, 'ROOT', str(root))

    def chunk(directory, text):
        dev = os.stat(directory).st_dev
        md = root / ('sys/dev/block/%d:%d/md' % (os.major(dev), os.minor(dev)))
        md.mkdir(parents=True)
        (md / 'chunk_size').write_text(text)
    return chunk


class RefusingRunner(object):
    """Planning runs no command: any call fails the test."""

    log = []

    def run(self, args, **kwargs):
        raise AssertionError('no command may run while planning: %r' % (args,))


def test_lcm():
    assert run_mod.lcm(MIB, 512 * 1024) == MIB
    assert run_mod.lcm(MIB, 768 * 1024) == 3 * MIB
    assert run_mod.lcm(4096, 4096) == 4096


@pytest.mark.parametrize('text, chunk', [('524288\n', 524288), ('0\n', None), ('none\n', None)])
def test_md_chunk(tmp_path, md_root, text, chunk):
    md_root(str(tmp_path), text)
    assert run_mod.md_chunk(os.stat(str(tmp_path)).st_dev) == chunk


def test_md_chunk_without_md(tmp_path, md_root):
    assert run_mod.md_chunk(os.stat(str(tmp_path)).st_dev) is None


@pytest.mark.parametrize('kwargs, option, words', [
    ({}, 'directory', 'directory or device'),
    ({'directory': '/', 'fio_runtime': 0}, 'fio_runtime', 'at least 1 second'),
    ({'directory': '/', 'file_count': 65}, 'file_count', '1-64'),
    ({'directory': '/', 'jobs': []}, 'jobs', 'at least one'),
    ({'directory': '/', 'jobs': [{'numjobs': 1, 'iodepth': 257}]}, 'jobs', 'iodepth 1-256'),
    ({'directory': '/', 'modes': []}, 'modes', 'direct, buffered or both'),
    ({'directory': '/', 'block_sizes': ['128M']}, 'block_sizes', 'between 4K and 64M'),
    ({'directory': '/', 'file_size': 'lots'}, 'file_size', 'must be a size'),
    ({'device': '/nonexistent/dev'}, 'device', 'No such file'),
    ({'directory': '/', 'model_repository': '/nonexistent/x'}, 'model_repository', 'is not a directory'),
])
def test_validate_refuses(kwargs, option, words):
    with pytest.raises(BenchmarkError) as exc:
        run_mod.validate(params(**kwargs))
    assert exc.value.option == option and words in exc.value.msg, exc.value.msg


def test_validate_parses_the_sizes():
    settings = run_mod.validate(params(directory='/', block_sizes=['1M', 'chunk', '64K'], file_size='2G',
                                       device_size=4096, space_reserve='1.5G',
                                       random_reads=[{'bs': '8K', 'numjobs': 16, 'iodepth': 64}]))
    assert settings == {'block_sizes': [MIB, 'chunk', 64 * 1024], 'file_size': 2 * 1024 * MIB,
                        'device_size': 4096, 'space_reserve': 1536 * MIB,
                        'random_reads': [{'bs': 8192, 'numjobs': 16, 'iodepth': 64}]}


def test_plan_aligns_the_shards_to_every_block_size(tmp_path, md_root):
    """A 768 KiB chunk and 1 MiB reads: shards are whole multiples of both (3 MiB), rounded down."""
    md_root(str(tmp_path), '786432\n')
    args = params(directory=str(tmp_path), file_count=2, file_size='10M', space_reserve=0,
                  jobs=[{'numjobs': 2, 'iodepth': 4}])
    plan = run_mod.build_plan(args, run_mod.validate(args))
    assert plan['chunk_size'] == 768 * 1024 and plan['block_sizes'] == [MIB, 768 * 1024]
    assert plan['file_size'] == 9 * MIB and plan['bytes_needed'] == 18 * MIB and plan['notes'] == []
    assert [(c['bs'], c['mode'], c['numjobs'], c['iodepth']) for c in plan['cases']] == [
        (MIB, 'direct', 2, 4), (MIB, 'buffered', 2, 1), (768 * 1024, 'direct', 2, 4), (768 * 1024, 'buffered', 2, 1)]


def test_plan_without_any_block_size_left(tmp_path, md_root):
    args = params(directory=str(tmp_path), block_sizes=['chunk'], file_size='4M', space_reserve=0, jobs=[{'numjobs': 1, 'iodepth': 1}])
    with pytest.raises(BenchmarkError) as exc:
        run_mod.build_plan(args, run_mod.validate(args))
    assert exc.value.option == 'block_sizes' and 'no md array under %s' % tmp_path in exc.value.msg


def test_plan_refuses_a_shard_below_two_mib(tmp_path, md_root):
    args = params(directory=str(tmp_path), block_sizes=['1M'], file_size='1M', space_reserve=0,
                  jobs=[{'numjobs': 1, 'iodepth': 1}])
    with pytest.raises(BenchmarkError) as exc:
        run_mod.build_plan(args, run_mod.validate(args))
    assert exc.value.option == 'file_size' and 'below the smallest shard (2097152 bytes' in exc.value.msg


def test_check_mode_runs_no_command(tmp_path, md_root):
    args = params(directory=str(tmp_path), block_sizes=['1M'], modes=['direct'], file_count=2, file_size='4M',
                  space_reserve=0, jobs=[{'numjobs': 2, 'iodepth': 8}], model_repository=str(tmp_path))
    result = run_mod.run(args, RefusingRunner(), check_mode=True)
    assert result['changed'] is False and result['fio'] == [] and result['figures'] == {}
    assert [c['key'] for c in result['plan']['cases']] == ['directory/direct/bs=1M/jobs=2,qd=8']
    argv = result['plan']['cases'][0]['argv']
    assert argv[:3] == ['fio', '--output-format=json', '--readonly']
    # each of the two jobs reads its own placeholder shard
    assert [a for a in argv if a.startswith('--filename=')] == [
        '--filename=%s/.inferops-bench-XXXX/model-%05d-of-00002.safetensors' % (tmp_path, i) for i in (1, 2)]
    assert result['page_cache'] == result['model_repository'] == {'status': 'planned'}
    assert os.listdir(str(tmp_path)) == ['root']
