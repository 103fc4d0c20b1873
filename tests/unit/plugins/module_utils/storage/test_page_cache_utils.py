# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/storage/page_cache.py.

Residency, warming and eviction run against real files in a temporary directory and the
real page cache (evicted per file with posix_fadvise(DONTNEED)); device classification
runs against small fake sysfs trees built in the temporary directory.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import shutil
import subprocess
import time

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import page_cache as pc
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs as sysfs_utils
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import StatusWriter
from ansible_collections.inferops.node.tests.unit.status_file_reader import read_status_while

MIB = 1024 * 1024
PAGE = mmap.PAGESIZE


def write_random(path, size):
    with open(path, 'wb') as handle:
        handle.write(os.urandom(size))
        handle.flush()
        os.fsync(handle.fileno())
    return str(path)


def drop(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_range(path, offset, length):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead beyond the range
        os.pread(fd, length, offset)
    finally:
        os.close(fd)


@pytest.fixture
def cold_file(evictable_dir):
    # evictable_dir (tests/unit/plugins/conftest.py): a disk filesystem, never tmpfs; no skip.
    path = write_random(os.path.join(evictable_dir, 'shard.bin'), 6 * MIB + 5 * PAGE + 100)
    drop(path)
    assert pc.Residency().resident_path(path) == 0, 'shard.bin still cached after POSIX_FADV_DONTNEED'
    return path


# --------------------------------------------------------------------------- sizes, meminfo

@pytest.mark.parametrize('value, expected', [
    (0, 0), (4096, 4096), ('4096', 4096), ('8M', 8 * MIB), ('8MiB', 8 * MIB), ('8MB', 8 * MIB),
    ('8m', 8 * MIB), ('512K', 512 * 1024), ('512 KiB', 512 * 1024), ('1.5G', 3 * 512 * MIB),
    ('1T', 1024 ** 4), ('100b', 100), (2.0, 2),
])
def test_parse_size(value, expected):
    assert pc.parse_size(value, 'chunk_size') == expected


def test_parse_size_percent_of_total():
    assert pc.parse_size('5%', 'reserve', total=1000) == 50
    assert pc.parse_size('12.5 %', 'reserve', total=800) == 100


@pytest.mark.parametrize('value, text', [
    ('10%', 'does not accept a percentage'), ('lots', 'must be a size'), ('-1M', 'must be a size'),
    (-5, 'must not be negative'), (True, 'must be a size'), ('8X', 'must be a size'),
])
def test_parse_size_errors_name_the_option(value, text):
    with pytest.raises(pc.PageCacheError) as err:
        pc.parse_size(value, 'chunk_size')
    assert err.value.option == 'chunk_size'
    assert err.value.msg.startswith('chunk_size') and text in err.value.msg


def test_parse_size_percent_over_100():
    with pytest.raises(pc.PageCacheError, match='between 0 and 100'):
        pc.parse_size('101%', 'reserve', total=10)


def test_read_meminfo(tmp_path):
    path = tmp_path / 'meminfo'
    path.write_text('MemTotal:       24684084 kB\nMemFree:        21707636 kB\n'
                    'MemAvailable:   24179772 kB\nHugePages_Total:       0\nbogus line\n')
    info = pc.read_meminfo(str(path))
    assert info['MemTotal'] == 24684084 * 1024
    assert info['MemAvailable'] == 24179772 * 1024
    assert info['HugePages_Total'] == 0
    assert set(pc.read_meminfo()) >= {'MemTotal', 'MemAvailable'}


def test_memory_guard():
    meminfo = {'MemAvailable': 10 * MIB}
    assert pc.memory_guard(9 * MIB, MIB, meminfo) == 10 * MIB
    with pytest.raises(pc.PageCacheError) as err:
        pc.memory_guard(9 * MIB + 1, MIB, meminfo)
    assert err.value.option == 'reserve'
    msg = err.value.msg
    for number in (9 * MIB + 1, 10 * MIB, MIB, 9 * MIB):
        assert str(number) in msg
    assert 'reserve option' in msg


def test_memory_guard_without_memavailable():
    assert pc.memory_guard(5, 0, {'MemFree': 3, 'Cached': 2}) == 5


def test_human_bytes():
    assert pc.human_bytes(512) == '512 B'
    assert pc.human_bytes(1536) == '1.50 KiB'
    assert pc.human_bytes(3 * 1024 ** 3) == '3.00 GiB'


def test_percent():
    assert pc.percent(0, 0) == 100.0
    assert pc.percent(1, 3) == 33.33
    assert pc.percent(5, 5) == 100.0


# --------------------------------------------------------------------------- residency

# This VM's host reclaims clean page-cache pages on its own (a page read a moment ago can be gone,
# seen in CI: one 4 KiB page short of a whole-file read). Tests of the measurement re-read until the
# pages are there (the count must then be exact); tests of warm() allow RECLAIM_SLACK missing bytes,
# far below what a skipped chunk would leave out.
RECLAIM_SLACK = 8 * PAGE


def measured_after(res, path, expected, read, attempts=3):
    """res.resident_path(path) once ``read()`` made ``expected`` bytes resident (re-read if reclaimed)."""
    got = None
    for dummy in range(attempts):
        read()
        got = res.resident_path(path)
        if got == expected:
            break
    return got


def read_whole(path):
    with open(path, 'rb') as handle:
        handle.read()


def warmed(path):
    """The file's resident bytes after warm(): at least its size less RECLAIM_SLACK, never more than its size."""
    resident, size = pc.Residency().resident_path(path), os.path.getsize(path)
    return size if size - RECLAIM_SLACK <= resident <= size else resident


def check_residency_follows_reads(res, path):
    """A cold file: nothing resident, then the first 2 MiB, then all of it."""
    assert res.resident_path(path) == 0
    assert measured_after(res, path, 2 * MIB, lambda: read_range(path, 0, 2 * MIB)) == 2 * MIB
    # unaligned tail page counted up to EOF only
    assert measured_after(res, path, os.path.getsize(path), lambda: read_whole(path)) == os.path.getsize(path)


def test_residency_follows_the_page_cache(cold_file):
    res = pc.Residency()
    check_residency_follows_reads(res, cold_file)
    drop(cold_file)
    assert res.resident_path(cold_file) == 0
    assert res.method == 'mincore'


@pytest.mark.skipif(shutil.which('vmtouch') is None, reason='vmtouch not installed')
def test_residency_agrees_with_vmtouch(cold_file):
    read_range(cold_file, MIB, 3 * MIB)
    text = subprocess.run(['vmtouch', cold_file], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout
    pages = int([line for line in text.splitlines() if 'Resident Pages' in line][0].split()[2].split('/')[0])
    assert pc.Residency().resident_path(cold_file) == pages * PAGE


def test_residency_small_windows(cold_file):
    read_range(cold_file, 0, MIB)
    res = pc.Residency()
    fd = os.open(cold_file, os.O_RDONLY)
    try:
        windows = list(res.windows(fd, os.path.getsize(cold_file), window=MIB))
    finally:
        os.close(fd)
    assert len(windows) == 7
    assert windows[0][2] == b'\x01' * (MIB // PAGE)
    assert windows[1][2] == b'\x00' * (MIB // PAGE)


def test_cachestat_fallback(cold_file, monkeypatch):
    res = pc.Residency()
    fd = os.open(cold_file, os.O_RDONLY)
    try:
        if res.cachestat(fd, 0, 0) is None:
            pytest.skip('kernel without cachestat(2)')
    finally:
        os.close(fd)
    monkeypatch.setattr(res, '_mincore_window', lambda *args: None)
    check_residency_follows_reads(res, cold_file)
    assert res.method == 'cachestat'
    # planning with cachestat only: chunks that are resident are skipped
    drop(cold_file)
    read_range(cold_file, 0, 2 * MIB)
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB, res)
    assert [c[1] for c in chunks] == [2 * MIB, 3 * MIB, 4 * MIB, 5 * MIB, 6 * MIB]


def test_no_residency_method_reads_everything(cold_file, monkeypatch):
    res = pc.Residency()
    monkeypatch.setattr(res, '_mincore_window', lambda *args: None)
    monkeypatch.setattr(res, 'cachestat', lambda *args: None)
    with open(cold_file, 'rb') as handle:
        handle.read()
    files, chunks = pc.plan(pc.collect_files([cold_file]), 4 * MIB, res)
    assert files[0]['resident_before'] == 0 and len(chunks) == 2
    assert res.method == 'none'


def test_resident_in_tail_page():
    size = 3 * PAGE + 10
    assert pc._resident_in(b'\x01\x01\x01\x01', 0, size, size, PAGE) == size
    assert pc._resident_in(b'\x01\x00\x00\x00', 0, size, size, PAGE) == PAGE
    assert pc._resident_in(b'\x00\x00\x00\x01', 0, size, size, PAGE) == 10
    assert pc._resident_in(4, 0, size, size, PAGE) == size
    assert pc._resident_in(2, 0, size, size, PAGE) == 2 * PAGE


# --------------------------------------------------------------------------- files and planning

def test_collect_files(tmp_path):
    root = tmp_path / 'm'
    (root / 'sub').mkdir(parents=True)
    (root / 'b.safetensors').write_bytes(b'x' * 100)
    (root / 'a.json').write_bytes(b'{}')
    (root / 'sub' / 'c.bin').write_bytes(b'y' * 10)
    os.symlink(str(root / 'b.safetensors'), str(root / 'sub' / 'link'))
    os.symlink(str(root / 'missing'), str(root / 'dangling'))
    os.symlink(str(root), str(root / 'sub' / 'loop'))
    files = pc.collect_files([str(root)])
    assert [os.path.relpath(f['path'], str(root)) for f in files] == ['a.json', 'b.safetensors', 'sub/c.bin']
    assert [f['size'] for f in files] == [2, 100, 10]
    # sub/link is the only way to b.safetensors that matches, so the file is taken through it
    assert [os.path.basename(f['path']) for f in pc.collect_files([str(root)], include=['sub/*'])] == ['c.bin', 'link']
    assert [os.path.basename(f['path']) for f in pc.collect_files([str(root)], include=['*.bin'])] == ['c.bin']
    assert len(pc.collect_files([str(root)], exclude=['*.json'], min_size=50)) == 1
    assert len(pc.collect_files([str(root / 'a.json')], min_size=50)) == 1  # named: always used


def test_collect_files_errors(tmp_path):
    with pytest.raises(pc.PageCacheError) as err:
        pc.collect_files([str(tmp_path / 'nope')])
    assert err.value.option == 'paths' and 'nope' in err.value.msg
    fifo = tmp_path / 'fifo'
    os.mkfifo(str(fifo))
    with pytest.raises(pc.PageCacheError, match='neither a regular file nor a directory'):
        pc.collect_files([str(fifo)])


def test_plan_lists_only_chunks_with_missing_pages(cold_file):
    read_range(cold_file, MIB, 2 * MIB)  # chunks 1 and 2 of 1 MiB resident
    read_range(cold_file, 4 * MIB, MIB - PAGE)  # chunk 4 misses its last page
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    size = os.path.getsize(cold_file)
    assert [c[1] for c in chunks] == [0, 3 * MIB, 4 * MIB, 5 * MIB, 6 * MIB]
    assert chunks[-1] == (0, 6 * MIB, size - 6 * MIB)
    assert files[0]['chunks'] == 5
    assert files[0]['resident_before'] == 3 * MIB - PAGE
    assert files[0]['bytes_to_read'] == size - 3 * MIB + PAGE


def test_plan_rounds_chunk_size_to_pages_and_windows(cold_file, monkeypatch):
    monkeypatch.setattr(pc, 'MAP_WINDOW', 2 * MIB)
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB + 100)
    assert all(c[1] % MIB == 0 for c in chunks)
    assert sum(c[2] for c in chunks) == os.path.getsize(cold_file)


# --------------------------------------------------------------------------- warming and eviction

@pytest.mark.parametrize('reader, fadvise', [('auto', 'auto'), ('sendfile', True), ('sendfile', False), ('pread', True),
                                             ('pread', False)])
def test_warm_makes_file_resident(cold_file, reader, fadvise):
    files, chunks = pc.plan(pc.collect_files([cold_file]), 512 * 1024)
    progress = pc.Progress(files[0]['bytes_to_read'], 1)
    seconds = pc.warm(files, chunks, 4, 512 * 1024, progress, fadvise=fadvise, reader=reader)
    size = os.path.getsize(cold_file)
    assert seconds > 0
    assert files[0]['bytes_read'] == size and files[0]['gbps'] > 0 and files[0]['seconds'] > 0
    assert progress.bytes_done == size and progress.files_done == 1
    assert warmed(cold_file) == size


def test_spans_rule():
    files = [{'size': 10 * MIB}, {'size': 3 * MIB}]
    chunks = [(0, off, MIB) for off in range(0, 10 * MIB, MIB) if off != 6 * MIB] + [(1, 0, MIB), (1, MIB, MIB),
                                                                                     (1, 2 * MIB, MIB)]
    # 2 workers: a file's runs are cut every size / 2 rounded up to chunks (5 MiB; 2 MiB for 3 MiB); the
    # hole at 6 MiB (a resident chunk) ends a run; runs never cross files; largest first, stable otherwise
    assert pc.spans(files, chunks, 2, MIB) == [
        (0, [(0, MIB), (MIB, MIB), (2 * MIB, MIB), (3 * MIB, MIB), (4 * MIB, MIB)]),
        (0, [(7 * MIB, MIB), (8 * MIB, MIB), (9 * MIB, MIB)]),
        (1, [(0, MIB), (MIB, MIB)]),
        (0, [(5 * MIB, MIB)]),
        (1, [(2 * MIB, MIB)]),
    ]
    # an explicit span; a span below a chunk still takes one chunk
    assert [len(p) for _i, p in pc.spans(files, chunks, 2, MIB, span=2 * MIB)] == [2, 2, 2, 2, 2, 1, 1]
    assert len(pc.spans(files, chunks, 2, MIB, span=1)) == len(chunks)
    assert pc.spans(files, [], 4, MIB) == []


def test_warm_reads_a_span_through_one_open_file(cold_file, monkeypatch):
    opened = []
    real = pc._open_ro

    def spy(path):
        opened.append(path)
        return real(path)

    files, chunks = pc.plan(pc.collect_files([cold_file]), 512 * 1024)
    monkeypatch.setattr(pc, '_open_ro', spy)
    pc.warm(files, chunks, 3, 512 * 1024)  # 13 chunks, spans of 6.02 MiB / 3 rounded up to 5 chunks
    size = os.path.getsize(cold_file)
    assert len(chunks) == 13 and opened == [cold_file] * 3
    assert files[0]['bytes_read'] == size
    assert warmed(cold_file) == size


def test_pread_reads_big_chunks_through_a_smaller_buffer(cold_file, monkeypatch):
    monkeypatch.setattr(pc, 'PREAD_BUFFER', 256 * 1024)
    sizes = []
    real = os.preadv

    def spy(fd, buffers, offset):
        sizes.append(len(buffers[0]))
        return real(fd, buffers, offset)

    monkeypatch.setattr(pc.os, 'preadv', spy)
    files, chunks = pc.plan(pc.collect_files([cold_file]), 2 * MIB)
    pc.warm(files, chunks, 2, 2 * MIB, reader='pread')
    assert max(sizes) == 256 * 1024
    assert files[0]['bytes_read'] == os.path.getsize(cold_file)
    assert warmed(cold_file) == os.path.getsize(cold_file)


def test_warm_fadvise_auto_only_below_the_readahead_window(cold_file, monkeypatch):
    calls = []
    real = os.posix_fadvise

    def spy(fd, offset, length, advice):
        if advice == os.POSIX_FADV_WILLNEED:
            calls.append((offset, length))
        return real(fd, offset, length, advice)

    monkeypatch.setattr(pc.os, 'posix_fadvise', spy)
    monkeypatch.setattr(pc, 'readahead_window', lambda dev: 256 * 1024)
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    pc.warm(files, chunks, 2, MIB)
    size = os.path.getsize(cold_file)
    assert sorted(calls) == [(off, min(256 * 1024, size - off)) for off in range(0, size, 256 * 1024)]
    assert warmed(cold_file) == size

    drop(cold_file)
    del calls[:]
    monkeypatch.setattr(pc, 'readahead_window', lambda dev: MIB)  # window covers the chunk
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    pc.warm(files, chunks, 2, MIB)
    assert calls == []
    pc.warm(files, chunks, 2, MIB, fadvise=True)
    assert len(calls) == len(chunks)
    with pytest.raises(pc.PageCacheError):
        pc.warm(files, chunks, 2, MIB, fadvise='sometimes')


def test_warm_falls_back_to_pread_when_sendfile_is_unsupported(cold_file, monkeypatch):
    calls = []

    def no_sendfile(*args):
        calls.append(args)
        raise OSError(errno.EINVAL, 'Invalid argument')

    monkeypatch.setattr(pc.os, 'sendfile', no_sendfile)
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    pc.warm(files, chunks, 2, MIB)
    assert calls
    assert warmed(cold_file) == os.path.getsize(cold_file)


def test_warm_reports_read_errors(cold_file, monkeypatch):
    def eio(*args):
        raise OSError(errno.EIO, 'Input/output error')

    monkeypatch.setattr(pc.os, 'sendfile', eio)
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    with pytest.raises(pc.PageCacheError) as err:
        pc.warm(files, chunks, 2, MIB)
    assert err.value.option == 'paths' and cold_file in err.value.msg and 'Input/output error' in err.value.msg


def test_warm_rejects_unknown_reader(cold_file):
    with pytest.raises(pc.PageCacheError):
        pc.warm([], [], 1, MIB, reader='mmap')


def test_evict_and_measure_after(cold_file):
    with open(cold_file, 'rb') as handle:
        handle.read()
    files, chunks = pc.plan(pc.collect_files([cold_file]), MIB)
    assert chunks == []
    progress = pc.Progress(files[0]['resident_before'], 1)
    pc.evict(files, progress)
    pc.measure_after(files)
    assert files[0]['resident_after'] == 0
    assert progress.bytes_done == os.path.getsize(cold_file) and progress.files_done == 1


def test_drop_file(cold_file):
    with open(cold_file, 'rb') as handle:
        handle.read()
    assert pc.Residency().resident_path(cold_file) == os.path.getsize(cold_file)
    pc.drop_file(cold_file)
    assert pc.Residency().resident_path(cold_file) == 0


# --------------------------------------------------------------------------- status file

def test_status_writer_is_periodic_and_atomic(tmp_path):
    path = str(tmp_path / 'status.json')
    progress = pc.Progress(1000, 2)
    writer = StatusWriter(path, progress, interval=0.02, extra={'mode': 'resident'})
    writer.start()
    first = json.loads(open(path).read())
    assert first['state'] == 'scanning' and first['bytes_done'] == 0 and first['eta_seconds'] is None
    assert first['line'].startswith('scanning 0.0 % (0 B of 1000 B, 0/2 files, 0.0 GB/s, eta ?, ')
    progress.set_state('reading')
    with progress.lock:
        progress.bytes_done = 250
    deadline = time.time() + 5
    while time.time() < deadline:
        data = json.loads(open(path).read())
        if data['bytes_done'] == 250:
            break
        time.sleep(0.01)
    assert data['state'] == 'reading' and data['percent'] == 25.0
    assert data['eta_seconds'] is not None and data['eta_seconds'] > 0 and data['gbps'] >= 0
    assert data['updated_epoch'] >= first['updated_epoch']
    assert data['line'].startswith('reading 25.0 % (250 B of 1000 B, 0/2 files, ')
    writer.stop(state='done', changed=True)
    final = json.loads(open(path).read())
    assert final['state'] == 'done' and final['changed'] is True and final['mode'] == 'resident'
    assert os.listdir(str(tmp_path)) == ['status.json']
    assert writer.error is None


def test_status_writer_survives_unwritable_path(tmp_path):
    writer = StatusWriter(str(tmp_path / 'gone' / 's.json'), pc.Progress(1, 1), interval=10)
    writer.start()
    writer.stop(state='done')
    assert 'gone' in writer.error


def test_status_file_readers_never_see_partial_json(tmp_path):
    path = str(tmp_path / 'status.json')
    progress = pc.Progress(10 ** 12, 10)
    writer = StatusWriter(path, progress, interval=0.001, extra={'pad': 'x' * 20000})
    writer.start()
    dummy, seen = read_status_while(path, lambda: time.sleep(0.3), pause=0)
    writer.stop(state='done')
    assert seen


# --------------------------------------------------------------------------- worker defaults

def fake_sys_root(tmp_path, monkeypatch):
    """module_utils.sysfs reads under tmp_path; the fake /sys is tmp_path/sys."""
    monkeypatch.setattr(sysfs_utils, 'ROOT', str(tmp_path))
    return tmp_path / 'sys'


def fake_disk(sysfs, majmin, devpath, rotational='0', ra_kb='128', max_kb='1280', slaves=(), partition=None):
    """Create /sys/devices/<devpath> with queue files and /sys/dev/block/<majmin> -> it."""
    disk = sysfs / 'devices' / devpath
    (disk / 'queue').mkdir(parents=True)
    (disk / 'queue' / 'rotational').write_text(rotational + '\n')
    (disk / 'queue' / 'read_ahead_kb').write_text(ra_kb + '\n')
    (disk / 'queue' / 'max_sectors_kb').write_text(max_kb + '\n')
    if slaves:
        (disk / 'slaves').mkdir()
        for slave in slaves:
            os.symlink(str(sysfs / 'devices' / slave), str(disk / 'slaves' / os.path.basename(slave)))
    target = disk
    if partition:
        target = disk / partition
        target.mkdir()
        (target / 'partition').write_text('1\n')
    (sysfs / 'dev' / 'block').mkdir(parents=True, exist_ok=True)
    os.symlink(str(target), str(sysfs / 'dev' / 'block' / majmin))
    return os.makedev(*[int(x) for x in majmin.split(':')])


def test_default_workers_rule(tmp_path, monkeypatch):
    sysfs = fake_sys_root(tmp_path, monkeypatch)
    nvme = fake_disk(sysfs, '259:1', 'pci0/nvme/nvme0/nvme0n1', partition='nvme0n1p1')
    hdd = fake_disk(sysfs, '8:0', 'pci0/ata1/host0/block/sda', rotational='1')
    virt = fake_disk(sysfs, '254:0', 'pci0/virtio1/block/vda', rotational='1')
    fake_disk(sysfs, '259:2', 'pci0/nvme/nvme1/nvme1n1')
    fake_disk(sysfs, '259:3', 'pci0/nvme/nvme2/nvme2n1')
    fake_disk(sysfs, '8:16', 'pci0/ata2/host1/block/sdb', rotational='1')
    fake_disk(sysfs, '8:32', 'pci0/ata3/host2/block/sdc', rotational='1')
    md = fake_disk(sysfs, '9:0', 'virtual/block/md0', slaves=['pci0/nvme/nvme1/nvme1n1', 'pci0/nvme/nvme2/nvme2n1'])
    mdh = fake_disk(sysfs, '9:1', 'virtual/block/md1', slaves=['pci0/ata2/host1/block/sdb',
                                                               'pci0/ata3/host2/block/sdc'])
    anon = os.makedev(0, 45)
    assert pc.classify_device(nvme) == ('nvme', 1)
    assert pc.classify_device(hdd) == ('hdd', 1)
    assert pc.classify_device(virt) == ('virtual', 1)
    assert pc.classify_device(md) == ('nvme', 2)
    assert pc.classify_device(anon) == ('none', 0)
    assert pc.default_workers([nvme], nproc=2)[0] == 4
    assert pc.default_workers([nvme], nproc=16)[0] == 16
    assert pc.default_workers([nvme], nproc=128)[0] == 32
    assert pc.default_workers([md], nproc=2)[0] == 8
    assert pc.default_workers([hdd], nproc=16)[0] == 2
    assert pc.default_workers([mdh], nproc=16)[0] == 4
    assert pc.default_workers([anon], nproc=2)[0] == 8
    count, rule = pc.default_workers([hdd, nvme], nproc=8)
    assert count == 8 and '8:0' in rule and '259:1' in rule
    assert pc.default_workers([], nproc=2)[0] == 4


def test_readahead_window(tmp_path, monkeypatch):
    sysfs = fake_sys_root(tmp_path, monkeypatch)
    part = fake_disk(sysfs, '259:1', 'pci0/nvme/nvme0/nvme0n1', ra_kb='128', max_kb='512', partition='p1')
    big = fake_disk(sysfs, '254:0', 'pci0/virtio1/block/vda', ra_kb='8192', max_kb='4096')
    tiny = fake_disk(sysfs, '8:0', 'pci0/ata/sda', ra_kb='0', max_kb='64')
    assert pc.readahead_window(part) == 512 * 1024
    assert pc.readahead_window(big) == 8 * MIB
    assert pc.readahead_window(tiny) == 128 * 1024
    assert pc.readahead_window(os.makedev(0, 40)) == 2 * MIB
