# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for the storage_benchmark module.

The measured runs are real: fio (installed by tools/bootstrap.sh) reads real shards the module
generates in a directory on this machine's disk (the evictable_dir fixture: O_DIRECT needs a disk file
system, not tmpfs), and every command goes through the harness' check (argument list, C locale). Only
/proc/sys/vm/drop_caches is redirected (sysfs.ROOT) to a file: the tests must not empty the page cache of
the machine they run on.
"""

from __future__ import annotations

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.storage import storage_benchmark as sb
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import storage_benchmark
from ansible_collections.inferops.node.tests.unit.module_harness import check_command, run_module

MIB = 1024 * 1024
REAL_RUN_COMMAND = basic.AnsibleModule.run_command


@pytest.fixture
def host(tmp_path, monkeypatch):
    """Real commands, each checked; drop_caches is a file under a test ROOT that counts the drops."""
    root = tmp_path / 'root'
    (root / 'proc/sys/vm').mkdir(parents=True)
    (root / 'proc/sys/vm/drop_caches').write_text('0')
    monkeypatch.setattr(sysfs, 'ROOT', str(root))
    calls = []

    def run_command(module, args, **kwargs):
        check_command(module, args, kwargs)
        calls.append(list(args))
        return REAL_RUN_COMMAND(module, args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    return {'calls': calls, 'drop': root / 'proc/sys/vm/drop_caches'}


def test_check_mode_plans_and_touches_nothing(evictable_dir, host):
    before = sorted(os.listdir(evictable_dir))
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 2, 'file_size': '4M', 'space_reserve': 0,
        'jobs': [{'numjobs': 1, 'iodepth': 16}, {'numjobs': 2, 'iodepth': 4}]}, check_mode=True)
    assert not failed, result
    assert result['changed'] is False
    assert host['calls'] == [] and result['command_log'] == []
    # The name the role keeps the run's record under, which storage_benchmark_info reads by.
    assert result['record_file'] == sb.record_file_name(result['started_at']) and sb.RECORD_NAME.match(result['record_file'])
    assert host['drop'].read_text() == '0'
    assert sorted(os.listdir(evictable_dir)) == before
    plan = result['plan']
    assert plan['file_count'] == 2 and plan['file_size'] == 4 * MIB and plan['bytes_needed'] == 8 * MIB
    # no md array under a temporary directory: "chunk" is left out, with a note
    assert plan['block_sizes'] == [MIB]
    assert 'block size "chunk" left out' in plan['notes'][0]
    assert [c['key'] for c in plan['cases']] == [
        'directory/direct/bs=1M/jobs=1,qd=16', 'directory/direct/bs=1M/jobs=2,qd=4',
        'directory/buffered/bs=1M/jobs=1,sync', 'directory/buffered/bs=1M/jobs=2,sync']
    assert all('--readonly' in c['argv'] for c in plan['cases'])
    assert result['fio'] == [] and result['figures'] == {}
    assert result['page_cache'] == {'status': 'planned'}


def test_chunk_of_the_md_array_under_the_directory(evictable_dir, host):
    """block size "chunk" is the md chunk of the device holding the directory (sysfs, as recorded)."""
    dev = os.stat(evictable_dir).st_dev
    md = os.path.join(sysfs.ROOT, 'sys/dev/block/%d:%d/md' % (os.major(dev), os.minor(dev)))
    os.makedirs(md)
    with open(os.path.join(md, 'chunk_size'), 'w') as handle:
        handle.write('524288\n')
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 1, 'file_size': '5M', 'space_reserve': 0,
        'modes': ['direct'], 'jobs': [{'numjobs': 1}]}, check_mode=True)
    assert not failed, result
    assert result['chunk_size'] == 524288
    assert result['plan']['block_sizes'] == [MIB, 512 * 1024] and result['plan']['notes'] == []
    # shards are whole multiples of every block size (O_DIRECT reads whole blocks)
    assert result['plan']['file_size'] == 5 * MIB
    assert [c['key'] for c in result['plan']['cases']] == [
        'directory/direct/bs=1M/jobs=1,qd=32', 'directory/direct/bs=512K/jobs=1,qd=32']


def test_free_space_shortfall_is_named(evictable_dir, host):
    vfs = os.statvfs(evictable_dir)
    # 1 GiB over what is free now: other processes on a shared disk free a few MiB at any time
    # (a reserve of exactly the free space once passed when 4 MiB came free before the module looked).
    reserve = vfs.f_bavail * vfs.f_frsize + 1024 ** 3
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 1, 'file_size': '4M', 'space_reserve': reserve,
        'jobs': [{'numjobs': 1}]})
    assert failed
    assert result['option'] == 'file_size'
    assert 'short by' in result['msg'] and 'need 4.00 MiB' in result['msg'], result['msg']
    assert host['calls'] == []


@pytest.mark.parametrize('args, option, words', [
    ({}, 'directory', 'directory or device'),
    ({'directory': '/nonexistent/x'}, 'directory', 'does not exist'),
    ({'device': '/etc/hostname'}, 'device', 'not a block device'),
    ({'directory': '/', 'jobs': [{'numjobs': 8}], 'file_count': 4}, 'jobs', 'jobs[0].numjobs = 8'),
    ({'directory': '/', 'block_sizes': ['3000']}, 'block_sizes', 'multiple of 4K'),
    ({'directory': '/', 'repetitions': 0}, 'repetitions', '1-20'),
])
def test_refusals(args, option, words, host):
    failed, result = run_module(storage_benchmark.main, args)
    assert failed and result['option'] == option and words in result['msg'], result
    assert host['calls'] == []


def test_real_run_on_generated_shards(evictable_dir, host):
    """fio for real on two 4 MiB shards, 2 repetitions, both modes; scratch files removed afterwards."""
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 2, 'file_size': '4M', 'space_reserve': 0,
        'block_sizes': ['1M'], 'repetitions': 2,
        'jobs': [{'numjobs': 2, 'iodepth': 4}]})
    assert not failed, result
    assert result['changed'] is False
    assert result['scratch_removed'] is True
    assert [n for n in os.listdir(evictable_dir) if n.startswith('.inferops-bench-')] == []
    keys = [c['key'] for c in result['fio']]
    assert keys == ['directory/direct/bs=1M/jobs=2,qd=4', 'directory/buffered/bs=1M/jobs=2,sync']
    for case in result['fio']:
        assert len(case['runs']) == 2
        assert all(r['bytes'] == 8 * MIB for r in case['runs'])
        assert case['mbps']['n'] == 2 and case['mbps']['min'] <= case['mbps']['median'] <= case['mbps']['max']
        assert case['argv'][0] == 'fio' and '--readonly' in case['argv']
    # every repetition of every measurement drops the caches after a sync
    fio_runs = [c for c in host['calls'] if os.path.basename(c[0]) == 'fio']
    syncs = [c for c in host['calls'] if [os.path.basename(c[0])] == ['sync']]
    assert len(fio_runs) == 4 and len(syncs) >= 4
    assert host['drop'].read_text() == '3'
    assert result['page_cache']['status'] == 'ran'
    # the shards and model.safetensors.index.json
    assert result['page_cache']['files'] == 3 and result['page_cache']['bytes'] > 8 * MIB
    # the caches were really emptied for the module's own files (DONTNEED): every run read everything
    assert result['page_cache']['mbps']['n'] == 2
    assert all(r['bytes_read'] == result['page_cache']['bytes'] for r in result['page_cache']['runs'])
    safe_open, reason = sb.safetensors_loader()
    if safe_open is None:
        assert result['safetensors'] == {'status': 'skipped', 'reason': reason}
        assert not any(k.startswith('safetensors/') for k in result['figures'])
    else:
        assert result['safetensors']['status'] == 'ran' and result['safetensors']['shards'] == 2
    assert result['figures']['fio/directory/direct/bs=1M/jobs=2,qd=4'] == result['fio'][0]['mbps']['median']
    assert 'page_cache/mbps' in result['figures']
    assert result['model_repository'] == {'status': 'skipped', 'reason': 'model_repository not given'}


def test_page_cache_false_skips_only_the_timed_load(evictable_dir, host):
    """page_cache: false leaves out the page cache figure; the warm safetensors load still preloads the shards."""
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 1, 'file_size': '4M', 'space_reserve': 0,
        'block_sizes': ['1M'], 'modes': ['buffered'], 'repetitions': 1, 'page_cache': False,
        'jobs': [{'numjobs': 1}]})
    assert not failed, result
    assert result['page_cache'] == {'status': 'skipped', 'reason': 'page_cache is false'}
    assert 'page_cache/mbps' not in result['figures'] and 'fio/directory/buffered/bs=1M/jobs=1,sync' in result['figures']
    safe_open, reason = sb.safetensors_loader()
    if safe_open is None:
        assert result['safetensors'] == {'status': 'skipped', 'reason': reason}
    else:
        assert result['safetensors']['status'] == 'ran' and result['safetensors']['preload_seconds']['n'] == 1


def test_random_reads_of_an_index_beside_the_sequential_reads(evictable_dir, host):
    """Seed 000's index case for real: fio randread, 4 KiB, every job over both shards, for a fixed time."""
    failed, result = run_module(storage_benchmark.main, {
        'directory': evictable_dir, 'file_count': 2, 'file_size': '4M', 'space_reserve': 0,
        'block_sizes': ['1M'], 'modes': ['direct'], 'repetitions': 1, 'page_cache': False, 'safetensors': False,
        'jobs': [{'numjobs': 1, 'iodepth': 4}], 'random_reads': [{'bs': '4K', 'numjobs': 2, 'iodepth': 8}],
        'random_read_seconds': 1})
    assert not failed, result
    keys = [c['key'] for c in result['fio']]
    assert keys == ['directory/direct/bs=1M/jobs=1,qd=4', 'directory/direct/randread/bs=4K/jobs=2,qd=8']
    random = result['fio'][1]
    argv = random['argv']
    assert ['--rw=randread', '--bs=4096', '--runtime=1', '--time_based', '--direct=1', '--iodepth=8'] == [
        a for a in argv if a.split('=')[0] in ('--rw', '--bs', '--runtime', '--time_based', '--direct', '--iodepth')]
    # Both jobs read both shards, chosen at random.
    jobs = [a for a in argv if a.startswith('--filename=')]
    assert len(jobs) == 2 and jobs[0] == jobs[1] and jobs[0].count(':') == 1
    assert argv.count('--file_service_type=random') == 2
    run = random['runs'][0]
    assert run['iops'] > 0 and run['bytes'] % 4096 == 0 and 0.5 <= run['seconds'] <= 5
    assert result['figures']['fio/directory/direct/randread/bs=4K/jobs=2,qd=8'] == random['mbps']['median']


def test_random_reads_refused_before_anything_runs(host):
    failed, result = run_module(storage_benchmark.main, {'directory': '/', 'random_reads': [{'bs': '3000'}]})
    assert failed and result['option'] == 'random_reads' and 'multiple of 4K' in result['msg'], result
    assert host['calls'] == []
