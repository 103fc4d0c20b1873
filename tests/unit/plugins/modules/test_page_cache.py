# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for the page_cache module.

They run against real files in a temporary directory on this machine's disk and the real
page cache: files are evicted with posix_fadvise(DONTNEED) per file, and residency is
checked with an oracle that does not share code with the module (cachestat(2) when the
kernel has it, else vmtouch, else Python's own mmap + mincore). The files live in the fixture
evictable_dir (tests/unit/plugins/conftest.py), never on tmpfs: where no disk directory is found the
tests fail instead of skipping.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import pathlib
import shutil
import subprocess

import pytest

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.storage import page_cache as pc_utils
from ansible_collections.inferops.node.plugins.modules import page_cache
from module_harness import patch_module_args  # tests/unit, on sys.path by conftest.py

MIB = 1024 * 1024


class AnsibleExitJson(Exception):
    def __init__(self, kwargs):
        super().__init__(kwargs)
        self.result = kwargs


class AnsibleFailJson(Exception):
    def __init__(self, kwargs):
        super().__init__(kwargs)
        self.result = kwargs


@pytest.fixture(autouse=True)
def patch_exit(monkeypatch):
    def exit_json(self, **kwargs):
        kwargs.setdefault('changed', False)
        kwargs['warnings'] = list(getattr(self, '_test_warnings', []))
        raise AnsibleExitJson(kwargs)

    def fail_json(self, msg, **kwargs):
        kwargs['failed'] = True
        kwargs['msg'] = msg
        raise AnsibleFailJson(kwargs)

    def warn(self, warning):
        if not hasattr(self, '_test_warnings'):
            self._test_warnings = []
        self._test_warnings.append(warning)

    monkeypatch.setattr(basic.AnsibleModule, 'exit_json', exit_json)
    monkeypatch.setattr(basic.AnsibleModule, 'fail_json', fail_json)
    monkeypatch.setattr(basic.AnsibleModule, 'warn', warn)


def run(args, check_mode=False, diff=False):
    """Run the module; returns (result, failed)."""
    args = dict(args)
    if check_mode:
        args['_ansible_check_mode'] = True
    if diff:
        args['_ansible_diff'] = True
    with patch_module_args(args):
        try:
            page_cache.main()
        except AnsibleExitJson as exc:
            return exc.result, False
        except AnsibleFailJson as exc:
            return exc.result, True
    raise AssertionError('module returned without exit_json/fail_json')


def ok(args, **kwargs):
    result, failed = run(args, **kwargs)
    assert not failed, result
    return result


def fail(args, **kwargs):
    result, failed = run(args, **kwargs)
    assert failed, result
    return result


# --------------------------------------------------------------------------- oracle

class _Range(ctypes.Structure):
    _fields_ = [('off', ctypes.c_uint64), ('len', ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [('nr_cache', ctypes.c_uint64), ('nr_dirty', ctypes.c_uint64), ('nr_writeback', ctypes.c_uint64),
                ('nr_evicted', ctypes.c_uint64), ('nr_recently_evicted', ctypes.c_uint64)]


_LIBC = ctypes.CDLL(None, use_errno=True)


def oracle_pages(path):
    """(resident pages, total pages) measured independently of the module."""
    size = os.path.getsize(path)
    total = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    if not size:
        return 0, 0
    fd = os.open(path, os.O_RDONLY)
    try:
        rng, out = _Range(0, 0), _Stat()
        if _LIBC.syscall(ctypes.c_long(451), ctypes.c_long(fd), ctypes.byref(rng), ctypes.byref(out),
                         ctypes.c_long(0)) == 0:
            return out.nr_cache, total
        if shutil.which('vmtouch'):
            text = subprocess.run(['vmtouch', '-v', path], stdout=subprocess.PIPE, universal_newlines=True,
                                  check=True).stdout
            for line in text.splitlines():
                if line.strip().startswith('Resident Pages:'):
                    return int(line.split()[2].split('/')[0]), total
        # Python's mmap + mincore via a writable private copy-on-write mapping
        mapped = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            addr = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
            vec = ctypes.create_string_buffer(total)
            assert _LIBC.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) == 0
            return sum(b & 1 for b in vec.raw), total
        finally:
            mapped.close()
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked_pages(fd, length):
    """mlock the first `length` bytes of an open file's page cache through a shared read-only
    mapping (a private writable one, as oracle_pages uses, would lock copies, not the cache)."""
    _LIBC.mmap.restype = ctypes.c_void_p
    _LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    addr = _LIBC.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    assert addr not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
    try:
        assert _LIBC.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(length)) == 0, os.strerror(ctypes.get_errno())
        yield
    finally:
        _LIBC.munmap(ctypes.c_void_p(addr), ctypes.c_size_t(length))


def oracle_percent(paths):
    res = tot = 0
    for path in paths:
        r, t = oracle_pages(path)
        res += r
        tot += t
    return 100.0 * res / tot if tot else 100.0


def drop(paths):
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def touch_all(paths):
    """Read every file into the page cache (the tests' setup, not the module): on a host under memory pressure
    (CI's, beside four guests) the kernel may reclaim a page before the last file is read, so read again, at most
    three times, until every page is resident."""
    for _attempt in range(3):
        for path in paths:
            with open(path, 'rb') as handle:
                while handle.read(MIB):
                    pass
        if oracle_percent(paths) == 100.0:
            return


# --------------------------------------------------------------------------- fixtures

LAYOUT = {
    'model-00001-of-00002.safetensors': 24 * MIB + 4096 * 3 + 123,  # unaligned tail
    'model-00002-of-00002.safetensors': 9 * MIB,
    'config.json': 1342,
    'tokenizer/tokenizer.json': 2 * MIB + 77,
    'tokenizer/vocab.txt': 300 * 1024,
    'empty.txt': 0,
}


@pytest.fixture
def model_dir(evictable_dir):
    # evictable_dir (tests/unit/plugins/conftest.py): a disk filesystem, never tmpfs; no skip.
    root = pathlib.Path(evictable_dir) / 'model'
    paths = []
    for rel, size in LAYOUT.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, 'wb') as handle:
            handle.write(os.urandom(size))
            handle.flush()
            os.fsync(handle.fileno())
        paths.append(str(path))
    drop(paths)
    assert oracle_percent(paths) == 0, 'model files still cached after POSIX_FADV_DONTNEED'
    return str(root), sorted(paths)


# --------------------------------------------------------------------------- behaviour

def test_resident_reads_everything_into_the_page_cache(model_dir):
    root, paths = model_dir
    result = ok({'paths': [root], 'workers': 3, 'chunk_size': '1M'})
    assert result['changed'] is True
    total = result['total']
    assert total['files'] == len(LAYOUT)
    assert total['bytes'] == sum(LAYOUT.values())
    assert total['percent_before'] == 0.0
    assert total['resident_after'] == total['bytes']
    assert total['percent_after'] == 100.0
    assert total['bytes'] == total['bytes_to_read']
    # Each byte is read once - unless the kernel reclaimed a chunk before the end (a CI host under load
    # did, 2 MiB of 37 MB): the retry pass reads it again and says so in `passes`.
    assert total['bytes_read'] == total['bytes'] if total['passes'] == 1 else total['bytes_read'] > total['bytes']
    assert total['gbps'] > 0 and total['seconds'] > 0
    assert oracle_percent(paths) == 100.0
    by_path = {f['path']: f for f in result['files']}
    big = by_path[os.path.join(root, 'model-00001-of-00002.safetensors')]
    assert big['action'] == 'read' and big['percent_after'] == 100.0
    assert big['bytes_read'] == big['size'] if big['passes'] == 1 else big['bytes_read'] > big['size']
    assert by_path[os.path.join(root, 'empty.txt')]['action'] == 'skip'
    assert result['workers'] == 3 and result['workers_rule'] == 'set by the workers option'
    assert result['chunk_size'] == MIB
    assert result['residency_method'] in ('mincore', 'cachestat', 'mincore+cachestat')
    assert not result['warnings']


def test_second_run_is_unchanged(model_dir):
    root, paths = model_dir
    ok({'paths': [root]})
    result = ok({'paths': [root]})
    assert result['changed'] is False
    assert result['total']['bytes_read'] == 0
    assert result['total']['percent_before'] == 100.0
    assert {f['action'] for f in result['files']} == {'skip'}
    assert oracle_percent(paths) == 100.0


def test_evicted_drops_files_and_is_idempotent(model_dir):
    root, paths = model_dir
    touch_all(paths)
    assert oracle_percent(paths) == 100.0
    result = ok({'paths': [root], 'state': 'evicted'})
    assert result['changed'] is True
    assert result['total']['percent_before'] == 100.0
    assert result['total']['percent_after'] == 0.0
    assert result['total']['bytes_evicted'] == result['total']['bytes']
    assert oracle_percent(paths) == 0.0
    again = ok({'paths': [root], 'state': 'evicted'})
    assert again['changed'] is False
    assert {f['action'] for f in again['files']} == {'skip'}


def test_check_mode_reads_nothing(model_dir, tmp_path):
    root, paths = model_dir
    status = tmp_path / 'status.json'
    result = ok({'paths': [root], 'status_file': str(status)}, check_mode=True)
    assert result['changed'] is True
    assert result['total']['bytes_to_read'] == sum(LAYOUT.values())
    assert result['total']['bytes_read'] == 0
    assert result['total']['percent_after'] == 100.0  # expected
    assert oracle_percent(paths) == 0.0
    assert not status.exists()


def test_check_mode_evicts_nothing(model_dir):
    root, paths = model_dir
    touch_all(paths)
    result = ok({'paths': [root], 'state': 'evicted'}, check_mode=True)
    assert result['changed'] is True
    assert result['total']['percent_after'] == 0.0  # expected
    assert oracle_percent(paths) == 100.0


def test_check_mode_unchanged_when_resident(model_dir):
    root, paths = model_dir
    touch_all(paths)
    result = ok({'paths': [root]}, check_mode=True)
    assert result['changed'] is False
    assert result['total']['bytes_to_read'] == 0


def test_partly_resident_file_reads_only_missing_chunks(model_dir, monkeypatch):
    root, paths = model_dir
    big = os.path.join(root, 'model-00001-of-00002.safetensors')
    real_warm = pc_utils.warm
    offsets = []

    def warm_recording(files, chunks, *args, **kwargs):
        offsets.extend(off for _index, off, _len in chunks)
        return real_warm(files, chunks, *args, **kwargs)

    monkeypatch.setattr(pc_utils, 'warm', warm_recording)
    with open(big, 'rb') as handle:
        # No readahead for this read: asynchronous readahead still landing pages while the
        # module measures would make resident_before race the oracle below.
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_RANDOM)
        handle.read(8 * MIB)
        # Locked while the module measures: on a machine under memory pressure (CI's lab
        # guests beside this test) reclaim took 3 of these pages between the read and the
        # measurement, and the oracle and the module then disagreed on what was resident.
        with locked_pages(handle.fileno(), 8 * MIB):
            before = oracle_pages(big)[0] * mmap.PAGESIZE
            assert before >= 8 * MIB
            result = ok({'paths': [big], 'chunk_size': '1M', 'workers': 2})
    entry = result['files'][0]
    assert entry['resident_before'] == before
    assert entry['bytes_to_read'] == entry['size'] - before
    # Every chunk read, in every pass, lies past the resident first 8 MiB. (Not bytes_read: under
    # memory pressure a page read in the first pass can be reclaimed and read again in a second.)
    assert offsets and min(offsets) >= 8 * MIB
    assert entry['percent_after'] == 100.0
    assert oracle_percent([big]) == 100.0


def test_pages_reclaimed_while_reading_are_read_again(model_dir, monkeypatch):
    root, paths = model_dir
    big = os.path.join(root, 'model-00001-of-00002.safetensors')
    real_warm = pc_utils.warm
    passes = []

    def warm_then_reclaim(files, chunks, *args, **kwargs):
        seconds = real_warm(files, chunks, *args, **kwargs)
        passes.append(sorted((files[i]['path'], off) for i, off, _len in chunks))
        if len(passes) == 1:  # reclaim 4 MiB of the big file before the module re-measures
            fd = os.open(big, os.O_RDONLY)
            os.posix_fadvise(fd, 2 * MIB, 4 * MIB, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        return seconds

    monkeypatch.setattr(pc_utils, 'warm', warm_then_reclaim)
    result = ok({'paths': [root], 'chunk_size': '1M'})
    assert len(passes) == 2
    assert passes[1] == [(big, off * MIB) for off in (2, 3, 4, 5)]
    entry = [f for f in result['files'] if f['path'] == big][0]
    assert entry['passes'] == 2 and entry['percent_after'] == 100.0
    assert entry['bytes_read'] == entry['size'] + 4 * MIB
    assert result['total']['passes'] == 2 and result['total']['percent_after'] == 100.0
    assert oracle_percent([big]) == 100.0


def test_memory_guard_fails_before_reading(model_dir, monkeypatch):
    root, paths = model_dir
    need = sum(LAYOUT.values())
    fake = {'MemTotal': 8 * 1024 * MIB, 'MemAvailable': need + 512 * 1024, 'MemFree': 1}
    monkeypatch.setattr(page_cache, 'read_meminfo', lambda: dict(fake))
    result = fail({'paths': [root], 'reserve': '1M'})
    assert result['option'] == 'reserve'
    assert 'reserve' in result['msg']
    assert str(need) in result['msg'] and str(fake['MemAvailable']) in result['msg'] and str(MIB) in result['msg']
    assert oracle_percent(paths) == 0.0
    # the same files fit with a smaller reserve
    assert ok({'paths': [root], 'reserve': '256K'})['total']['percent_after'] == 100.0


def test_memory_guard_with_real_meminfo_and_percent_reserve(model_dir, tmp_path):
    root, paths = model_dir
    status = tmp_path / 'status.json'
    result = fail({'paths': [root], 'reserve': '100%', 'status_file': str(status)})
    assert result['option'] == 'reserve' and 'MemAvailable' in result['msg']
    assert oracle_percent(paths) == 0.0
    data = json.loads(status.read_text())
    assert data['state'] == 'failed' and 'reserve' in data['error']


def test_memory_guard_counts_only_missing_bytes(model_dir, monkeypatch):
    root, paths = model_dir
    touch_all(paths)
    # 8 MiB available for 36 MiB of files, all of them just read: the guard passes because it counts only what is
    # not resident. Not 1 KiB: on a loaded CI host (four lab guests writing their disks) the kernel once dropped
    # 1 MiB of the files between the read and the module's mincore, and the guard rightly refused.
    available = 8 * MIB
    monkeypatch.setattr(page_cache, 'read_meminfo', lambda: {'MemTotal': 1 << 30, 'MemAvailable': available})
    result = ok({'paths': [root], 'reserve': 0})
    assert result['total']['bytes'] == sum(LAYOUT.values()) > available
    assert result['total']['bytes'] - result['total']['resident_before'] < available


def test_status_file_reports_completion(model_dir, tmp_path):
    root, paths = model_dir
    status = tmp_path / 'run' / 'warm.json'
    status.parent.mkdir()
    result = ok({'paths': [root], 'status_file': str(status), 'status_interval': 0.01, 'chunk_size': '256K',
                 'workers': 2})
    assert result['status_file'] == str(status)
    data = json.loads(status.read_text())
    assert data['state'] == 'done' and data['changed'] is True and data['mode'] == 'resident'
    assert data['bytes_done'] == data['bytes_total'] == sum(LAYOUT.values())
    assert data['files_done'] == data['files_total'] == len(LAYOUT) - 1  # the empty file needs no read
    assert data['eta_seconds'] == 0.0 and data['percent'] == 100.0 and data['workers'] == 2
    for key in ('gbps', 'updated_at', 'updated_epoch', 'started_at', 'elapsed_seconds', 'pid'):
        assert key in data
    assert os.listdir(str(status.parent)) == ['warm.json']  # no temporary file left behind


def test_status_file_says_failed_on_unexpected_errors(model_dir, tmp_path, monkeypatch):
    root, paths = model_dir
    status = tmp_path / 'status.json'

    def broken(*_args, **_kwargs):
        raise RuntimeError('boom')

    monkeypatch.setattr(page_cache, 'plan', broken)
    with pytest.raises(RuntimeError):
        run({'paths': [root], 'status_file': str(status)})
    data = json.loads(status.read_text())
    assert data['state'] == 'failed' and 'unexpected error' in data['error']


def test_status_file_for_eviction(model_dir, tmp_path):
    root, paths = model_dir
    touch_all(paths)
    status = tmp_path / 'evict.json'
    ok({'paths': [root], 'state': 'evicted', 'status_file': str(status)})
    data = json.loads(status.read_text())
    assert data['state'] == 'done' and data['mode'] == 'evicted'
    assert data['bytes_done'] == data['bytes_total'] == sum(LAYOUT.values())


def test_diff_mode_reports_before_and_after(model_dir):
    root, paths = model_dir
    result = ok({'paths': [root]}, diff=True)
    before, after = result['diff']['before'], result['diff']['after']
    assert 'total: 0.00% resident' in before
    assert 'total: 100.00% resident' in after
    assert '%s: 100.00%% resident' % os.path.join(root, 'config.json') in after


def test_filters_apply_to_directory_contents_only(model_dir):
    root, paths = model_dir
    config = os.path.join(root, 'config.json')
    result = ok({'paths': [root, config], 'include': ['*.safetensors', 'tokenizer/*'],
                 'exclude': ['*vocab*'], 'min_size': '1M'})
    found = sorted(f['path'] for f in result['files'])
    assert found == sorted([
        os.path.join(root, 'model-00001-of-00002.safetensors'),
        os.path.join(root, 'model-00002-of-00002.safetensors'),
        os.path.join(root, 'tokenizer', 'tokenizer.json'),
        config,  # named directly: always used
    ])
    assert oracle_percent([os.path.join(root, 'tokenizer', 'vocab.txt')]) == 0.0


def test_symlinks_and_duplicates_are_counted_once(model_dir):
    root, paths = model_dir
    big = os.path.join(root, 'model-00002-of-00002.safetensors')
    os.symlink(big, os.path.join(root, 'link.safetensors'))
    os.symlink(root, os.path.join(root, 'tokenizer', 'loop'))  # directory loop
    result = ok({'paths': [root, big]})
    assert result['total']['files'] == len(LAYOUT)
    assert result['total']['bytes'] == sum(LAYOUT.values())


def test_no_matching_files_warns(model_dir):
    root, paths = model_dir
    result = ok({'paths': [root], 'include': ['*.gguf']})
    assert result['changed'] is False and result['total']['files'] == 0
    assert any('no files matched' in w for w in result['warnings'])


def test_default_workers_follow_the_storage_rule(model_dir):
    root, paths = model_dir
    result = ok({'paths': [root]}, check_mode=True)
    expected, rule = pc_utils.default_workers([os.stat(p).st_dev for p in paths])
    assert result['workers'] == expected >= 1
    assert result['workers_rule'] == rule


@pytest.mark.parametrize('args, option, text', [
    ({'paths': ['/nonexistent/inferops/model']}, 'paths', '/nonexistent/inferops/model'),
    ({'paths': []}, 'paths', 'paths'),
    ({'workers': 0}, 'workers', 'workers must be between 1 and 256, got 0'),
    ({'workers': 1000}, 'workers', 'workers'),
    ({'chunk_size': 'lots'}, 'chunk_size', 'chunk_size must be a size'),
    ({'chunk_size': '4K'}, 'chunk_size', 'chunk_size must be between 64K and 1G'),
    ({'chunk_size': '2G'}, 'chunk_size', 'chunk_size must be between 64K and 1G'),
    ({'chunk_size': -1}, 'chunk_size', 'chunk_size must not be negative'),
    ({'reserve': 'half'}, 'reserve', 'reserve must be a size'),
    ({'reserve': '150%'}, 'reserve', 'reserve percentage'),
    ({'min_size': '1X'}, 'min_size', 'min_size must be a size'),
    ({'status_interval': 0}, 'status_interval', 'status_interval must be greater than 0'),
    ({'status_file': '/nonexistent/inferops/status.json'}, 'status_file', '/nonexistent/inferops'),
])
def test_bad_input_names_the_option(model_dir, args, option, text):
    root, paths = model_dir
    full = {'paths': [root]}
    full.update(args)
    result = fail(full)
    assert result['option'] == option
    assert text in result['msg']
    assert oracle_percent(paths) == 0.0


def test_status_file_that_is_a_directory_is_refused(model_dir, tmp_path):
    root, paths = model_dir
    result = fail({'paths': [root], 'status_file': str(tmp_path)})
    assert result['option'] == 'status_file'


def test_bad_state_is_rejected_by_argument_spec(model_dir):
    root, paths = model_dir
    result = fail({'paths': [root], 'state': 'hot'})
    assert 'state' in result['msg']


def test_paths_that_are_not_regular_files_are_refused(model_dir):
    result = fail({'paths': ['/dev/null']})
    assert result['option'] == 'paths' and '/dev/null' in result['msg']


def test_read_error_fails_naming_the_file(model_dir, monkeypatch):
    root, paths = model_dir

    def broken(*_args):
        raise OSError(5, 'Input/output error')

    monkeypatch.setattr(pc_utils.os, 'sendfile', broken)
    monkeypatch.setattr(pc_utils.os, 'preadv', broken)
    result = fail({'paths': [root]})
    assert result['option'] == 'paths'
    assert 'Input/output error' in result['msg'] and root in result['msg']
