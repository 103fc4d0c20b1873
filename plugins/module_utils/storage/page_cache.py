# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Page-cache residency measurement, warming and eviction for the page_cache module.

Standard library and sysfs.py only, so tools/bench/page_cache_bench.py can load it without Ansible.

- Residency is measured with mmap(2) + mincore(2) through ctypes, in windows of at most
  ``MAP_WINDOW`` bytes, falling back to cachestat(2) (syscall 451, Linux >= 6.5) when a file
  cannot be mapped. Both need root, or ownership of / write access to the file, to see other
  processes' cache (kernel restriction since 5.0); the module is meant to run with become.
- Warming splits every file into ``chunk_size`` pieces that are skipped when already fully
  resident; adjacent pieces are grouped into spans of up to size / workers, and a pool of
  threads takes the spans from one queue, reading each through one open file (sendfile(2) to
  /dev/null, so no copy to user space, or os.preadv into a per-thread reused buffer;
  posix_fadvise WILLNEED first where the device readahead window is smaller than a piece), so
  one large file is read by all workers at once, each a sequential stream whose readahead
  keeps growing, and the device sees ``workers`` streams in flight instead of one.
- Eviction is posix_fadvise(DONTNEED) per file (no fsync: dirty or mapped pages stay).
"""

from __future__ import annotations

import ctypes
import errno
import fnmatch
import mmap
import os
import re
import stat
import threading
import time
from collections import deque

# Relative imports: tools/bench/page_cache_bench.py loads this file and its siblings without Ansible.
from ..common import sysfs
from ..common.status_file import eta_seconds

GIB = 1024 ** 3
MIB = 1024 ** 2
PAGE_SIZE = mmap.PAGESIZE
MAP_WINDOW = GIB  # bytes mapped per mincore() call; keeps the page vector <= 256 KiB
SYS_CACHESTAT = 451  # same number on every Linux architecture (new-style syscall table)

DEFAULT_CHUNK_SIZE = 8 * MIB
PREAD_BUFFER = 8 * MIB  # per-worker buffer of the preadv fallback; larger chunks are read in pieces
DEFAULT_RESERVE = '1G'
MAX_WORKERS = 32

_UNITS = {'': 1, 'b': 1, 'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3, 't': 1024 ** 4, 'p': 1024 ** 5}
_SIZE_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtpb]?)(?:i?b)?\s*$', re.IGNORECASE)
_PCT_RE = re.compile(r'^\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$')
_LOWBIT = bytes(i & 1 for i in range(256))


class PageCacheError(Exception):
    """An error that names the module option it concerns (``option`` may be None)."""

    def __init__(self, msg, option=None):
        super().__init__(msg)
        self.msg = msg
        self.option = option


# --------------------------------------------------------------------------- sizes / memory

def parse_size(value, option, total=None):
    """Bytes from an int or a string like ``8M``, ``8MiB``, ``1.5G``, ``4096``.

    Units are binary (K = 1024). When ``total`` is given, ``N%`` is accepted and means
    N percent of ``total``. Raises PageCacheError naming ``option``.
    """
    if isinstance(value, bool):
        raise PageCacheError('%s must be a size such as 8M or 1G, got %r' % (option, value), option)
    if isinstance(value, int):
        if value < 0:
            raise PageCacheError('%s must not be negative, got %d' % (option, value), option)
        return value
    if isinstance(value, float):
        if value < 0:
            raise PageCacheError('%s must not be negative, got %s' % (option, value), option)
        return int(value)
    text = str(value)
    match = _PCT_RE.match(text)
    if match:
        if total is None:
            raise PageCacheError('%s does not accept a percentage, got %r' % (option, text), option)
        pct = float(match.group(1))
        if pct > 100:
            raise PageCacheError('%s percentage must be between 0 and 100, got %r' % (option, text), option)
        return int(total * pct / 100.0)
    match = _SIZE_RE.match(text)
    if not match:
        hint = ', or a percentage of MemTotal such as 5%' if total is not None else ''
        raise PageCacheError('%s must be a size such as 8M, 512KiB or 1G%s; got %r' % (option, hint, text), option)
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def human_bytes(num):
    """Short binary-unit rendering used in messages (``1.50 GiB``)."""
    num = float(num)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if abs(num) < 1024 or unit == 'TiB':
            return ('%d %s' % (num, unit)) if unit == 'B' else ('%.2f %s' % (num, unit))
        num /= 1024.0
    return '%.2f TiB' % num  # pragma: no cover


def read_meminfo(path='/proc/meminfo'):
    """/proc/meminfo as a dict of bytes (``MemAvailable``, ``MemTotal``, ...)."""
    info = {}
    with open(path) as handle:
        for line in handle:
            key, _sep, rest = line.partition(':')
            fields = rest.split()
            if not fields:
                continue
            try:
                num = int(fields[0])
            except ValueError:
                continue
            info[key.strip()] = num * 1024 if len(fields) > 1 and fields[1] == 'kB' else num
    return info


def memory_guard(bytes_needed, reserve, meminfo):
    """Raise PageCacheError (option ``reserve``) when bytes_needed > MemAvailable - reserve."""
    available = meminfo.get('MemAvailable')
    if available is None:  # kernels before 3.14
        available = meminfo.get('MemFree', 0) + meminfo.get('Cached', 0)
    budget = available - reserve
    if bytes_needed > budget:
        raise PageCacheError(
            'Not enough memory to make the files resident: %d bytes (%s) are not yet cached, but '
            'MemAvailable %d bytes (%s) minus reserve %d bytes (%s) leaves only %d bytes (%s). '
            'Free memory, warm fewer files, or lower the reserve option.'
            % (bytes_needed, human_bytes(bytes_needed), available, human_bytes(available),
               reserve, human_bytes(reserve), max(budget, 0), human_bytes(max(budget, 0))),
            'reserve')
    return available


# --------------------------------------------------------------------------- file discovery

def _matches(patterns, name, relpath):
    return any(fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(relpath, pat) for pat in patterns)


def collect_files(paths, include=None, exclude=None, min_size=0):
    """Regular files under ``paths`` as dicts {path, size, dev, ino}, in a stable order.

    Directories are walked recursively, following symlinks (model caches such as the
    Hugging Face hub link snapshot files to blobs) with loop protection. ``include``,
    ``exclude`` (fnmatch patterns, matched against the file name and against the path
    relative to the listed directory) and ``min_size`` filter files found in directories;
    files named directly in ``paths`` are always taken. A file reached twice (hard link,
    symlink, overlapping paths) is listed once.
    """
    include = list(include or [])
    exclude = list(exclude or [])
    files = []
    seen = set()

    def add(path, st):
        key = (st.st_dev, st.st_ino)
        if key in seen:
            return
        seen.add(key)
        files.append({'path': path, 'size': st.st_size, 'dev': st.st_dev, 'ino': st.st_ino})

    for top in paths:
        try:
            st = os.stat(top)
        except OSError as exc:
            raise PageCacheError('paths: %s: %s' % (top, exc.strerror or exc), 'paths')
        if stat.S_ISREG(st.st_mode):
            add(top, st)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise PageCacheError('paths: %s is neither a regular file nor a directory' % top, 'paths')
        visited = set()
        for dirpath, dirnames, filenames in os.walk(top, followlinks=True, onerror=_raise_walk_error):
            dst = os.stat(dirpath)
            if (dst.st_dev, dst.st_ino) in visited:
                dirnames[:] = []
                continue
            visited.add((dst.st_dev, dst.st_ino))
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, top)
                if include and not _matches(include, name, rel):
                    continue
                if exclude and _matches(exclude, name, rel):
                    continue
                try:
                    fst = os.stat(full)
                except OSError:
                    continue  # dangling symlink or file removed while walking
                if not stat.S_ISREG(fst.st_mode) or fst.st_size < min_size:
                    continue
                add(full, fst)
    return files


def _raise_walk_error(exc):
    raise PageCacheError('paths: cannot read directory %s: %s' % (exc.filename, exc.strerror or exc), 'paths')


# --------------------------------------------------------------------------- worker defaults

def _block_link(dev):
    """The sysfs link of a st_dev's block device (``/sys/dev/block/<major>:<minor>``)."""
    return '/sys/dev/block/%d:%d' % (os.major(dev), os.minor(dev))


def _leaf_disks(sysdir, depth=0):
    """Whole-disk sysfs dirs under a block device, following md/dm slaves."""
    if sysfs.exists(sysdir + '/partition'):
        sysdir = os.path.dirname(sysdir)
    slaves = sysfs.listdir(sysdir + '/slaves')
    if not slaves or depth > 8:
        return [sysdir]
    leaves = []
    for slave in slaves:
        leaves.extend(_leaf_disks(sysfs.realpath('%s/slaves/%s' % (sysdir, slave)), depth + 1))
    return leaves


def classify_device(dev):
    """Storage class of a st_dev: nvme, ssd, virtual, hdd or none, plus the leaf disk count.

    ``none`` means no block device (NFS, FUSE, tmpfs, overlay or btrfs anonymous devices).
    Virtio and Xen disks count as ``virtual`` even though they report rotational=1.
    """
    link = _block_link(dev)
    if not sysfs.exists(link):
        return 'none', 0
    leaves = _leaf_disks(sysfs.realpath(link))
    kinds = set()
    for leaf in leaves:
        name = os.path.basename(leaf)
        if name.startswith('nvme'):
            kinds.add('nvme')
        elif '/virtio' in leaf or '/vbd-' in leaf or name.startswith(('vd', 'xvd')):
            kinds.add('virtual')
        elif (sysfs.read_attr(leaf + '/queue/rotational') or '0').strip() == '1':
            kinds.add('hdd')
        else:
            kinds.add('ssd')
    for kind in ('hdd', 'virtual', 'ssd', 'nvme'):  # the slowest member decides
        if kind in kinds:
            return kind, len(leaves)
    return 'ssd', len(leaves)  # pragma: no cover


def readahead_window(dev):
    """Most bytes one posix_fadvise(WILLNEED) call queues on this st_dev.

    The kernel caps a WILLNEED request at max(read_ahead_kb, max_sectors_kb) of the
    backing device (force_page_cache_ra); warm() advises a chunk in steps of this size so
    the whole chunk is queued. 2 MiB (the kernel's own batch) without a block device.
    """
    link = _block_link(dev)
    if not sysfs.exists(link):
        return 2 * MIB
    disk = sysfs.realpath(link)
    if sysfs.exists(disk + '/partition'):
        disk = os.path.dirname(disk)
    best = max(sysfs.read_int('%s/queue/%s' % (disk, name), 0) for name in ('read_ahead_kb', 'max_sectors_kb'))
    return max(128 * 1024, best * 1024) if best else 2 * MIB


def default_workers(devs, nproc=None):
    """Worker count suited to the storage holding the files; returns (workers, rule).

    Rule (per file system, the largest wins, capped at MAX_WORKERS):
      nvme / ssd / virtual disks:  max(4, nproc, 4 x member disks)
      rotational disks:            2 x member disks (more parallel streams only add seeks)
      no block device (network):   8 (latency-bound, more requests in flight help)
    """
    if nproc is None:
        try:
            nproc = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # pragma: no cover
            nproc = os.cpu_count() or 1
    best = 0
    parts = []
    for dev in sorted(set(devs)):
        kind, disks = classify_device(dev)
        if kind == 'hdd':
            count = 2 * disks
            why = '2 x %d rotational disk(s)' % disks
        elif kind == 'none':
            count = 8
            why = 'no block device (network/virtual file system): 8'
        else:
            count = max(4, nproc, 4 * disks)
            why = '%s: max(4, nproc=%d, 4 x %d disk(s))' % (kind, nproc, disks)
        count = max(1, min(MAX_WORKERS, count))
        parts.append('%d:%d %s = %d' % (os.major(dev), os.minor(dev), why, count))
        best = max(best, count)
    if not parts:
        best = max(4, nproc)
        parts.append('no files: max(4, nproc=%d)' % nproc)
    return min(best, MAX_WORKERS), '; '.join(parts)


# --------------------------------------------------------------------------- residency

class _CachestatRange(ctypes.Structure):
    _fields_ = [('off', ctypes.c_uint64), ('len', ctypes.c_uint64)]


class _Cachestat(ctypes.Structure):
    _fields_ = [('nr_cache', ctypes.c_uint64), ('nr_dirty', ctypes.c_uint64),
                ('nr_writeback', ctypes.c_uint64), ('nr_evicted', ctypes.c_uint64),
                ('nr_recently_evicted', ctypes.c_uint64)]


class Residency:
    """Per-page residency of open files: mincore first, cachestat as fallback."""

    PROT_READ = 1
    MAP_SHARED = 1
    MAP_FAILED = ctypes.c_void_p(-1).value

    def __init__(self):
        self.page_size = PAGE_SIZE
        self.methods_used = set()
        self._libc = None
        self._cachestat_ok = None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            mmap_fn = getattr(libc, 'mmap64', None) or libc.mmap
            mmap_fn.restype = ctypes.c_void_p
            mmap_fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                ctypes.c_int, ctypes.c_int64 if hasattr(libc, 'mmap64') else ctypes.c_long]
            libc.munmap.restype = ctypes.c_int
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            libc.mincore.restype = ctypes.c_int
            libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
            libc.syscall.restype = ctypes.c_long
            self._mmap = mmap_fn
            self._libc = libc
        except (OSError, AttributeError):  # pragma: no cover - not glibc/musl Linux
            self._libc = None

    @property
    def method(self):
        """How residency was measured so far (mincore, cachestat, mincore+cachestat, none)."""
        if not self.methods_used:
            return 'mincore' if self._libc is not None else 'none'
        return '+'.join(m for m in ('mincore', 'cachestat', 'none') if m in self.methods_used)

    def _mincore_window(self, fd, offset, length):
        """0/1 byte per page of [offset, offset+length) or None when the file cannot be mapped."""
        addr = self._mmap(None, length, self.PROT_READ, self.MAP_SHARED, fd, offset)
        if addr is None or addr == self.MAP_FAILED:
            return None
        try:
            npages = (length + self.page_size - 1) // self.page_size
            vec = ctypes.create_string_buffer(npages)
            if self._libc.mincore(addr, length, vec) != 0:
                return None
            return vec.raw.translate(_LOWBIT)
        finally:
            self._libc.munmap(addr, length)

    def cachestat(self, fd, offset, length):
        """Resident pages in [offset, offset+length) via cachestat(2), or None if unsupported."""
        if self._libc is None or self._cachestat_ok is False:
            return None
        rng = _CachestatRange(offset, length)
        out = _Cachestat()
        ret = self._libc.syscall(ctypes.c_long(SYS_CACHESTAT), ctypes.c_long(fd), ctypes.byref(rng),
                                 ctypes.byref(out), ctypes.c_long(0))
        if ret != 0:
            if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM):
                self._cachestat_ok = False
            return None
        self._cachestat_ok = True
        return out.nr_cache

    def windows(self, fd, size, window=MAP_WINDOW):
        """Yield (offset, length, pagemap) per window; pagemap is bytes of 0/1 per page or an int.

        An int means only the resident page count of the window is known (cachestat), a
        None count means nothing could be measured and the window is treated as not resident.
        """
        window = max(self.page_size, window - window % self.page_size)
        offset = 0
        while offset < size:
            length = min(window, size - offset)
            pagemap = None
            if self._libc is not None:
                pagemap = self._mincore_window(fd, offset, length)
            if pagemap is not None:
                self.methods_used.add('mincore')
            else:
                count = self.cachestat(fd, offset, length)
                if count is not None:
                    self.methods_used.add('cachestat')
                    pagemap = count
                else:
                    self.methods_used.add('none')
                    pagemap = 0
            yield offset, length, pagemap
            offset += length

    def resident_bytes(self, fd, size):
        """Bytes of the file that are in the page cache."""
        total = 0
        for offset, length, pagemap in self.windows(fd, size):
            total += _resident_in(pagemap, offset, length, size, self.page_size)
        return total

    def resident_path(self, path, size=None):
        """resident_bytes() by path (opens and closes the file)."""
        fd = _open_ro(path)
        try:
            if size is None:
                size = os.fstat(fd).st_size
            return self.resident_bytes(fd, size)
        finally:
            os.close(fd)


def _resident_in(pagemap, offset, length, size, page_size):
    """Resident bytes of a window, not counting the part of the last page past EOF."""
    if isinstance(pagemap, int):
        pages = pagemap
        full = (length + page_size - 1) // page_size
        tail_resident = pages >= full  # cachestat gives no position; assume tail when all pages are in
    else:
        pages = pagemap.count(1)
        tail_resident = bool(pagemap) and pagemap[-1] == 1
    resident = pages * page_size
    end = offset + length
    if end == size and size % page_size and tail_resident:
        resident -= page_size - size % page_size
    return min(resident, length)


def _open_ro(path):
    flags = os.O_RDONLY | getattr(os, 'O_CLOEXEC', 0)
    noatime = getattr(os, 'O_NOATIME', 0)
    if noatime:
        try:
            return os.open(path, flags | noatime)
        except OSError as exc:
            if exc.errno != errno.EPERM:  # O_NOATIME needs ownership or CAP_FOWNER
                raise
    return os.open(path, flags)


def percent(part, whole):
    """Percentage rounded to 2 places; an empty file counts as 100 % resident."""
    if whole <= 0:
        return 100.0
    return round(100.0 * part / whole, 2)


# --------------------------------------------------------------------------- planning

def plan(files, chunk_size, residency=None):
    """Measure residency and list the chunks that still need reading.

    Adds to every file dict: resident_before, bytes_to_read (not-resident bytes) and chunks
    (count of chunks to read). Returns (files, chunks) where chunks is a list of
    (file_index, offset, length) in file order; a chunk is listed when any of its pages is
    not resident.
    """
    residency = residency or Residency()
    page = residency.page_size
    chunk_size = max(page, chunk_size - chunk_size % page)
    window = max(chunk_size, (MAP_WINDOW // chunk_size) * chunk_size)
    chunks = []
    for index, info in enumerate(files):
        size = info['size']
        resident = 0
        count = 0
        if size:
            try:
                fd = _open_ro(info['path'])
            except OSError as exc:
                raise PageCacheError('paths: cannot open %s: %s' % (info['path'], exc.strerror or exc), 'paths')
            try:
                for offset, length, pagemap in residency.windows(fd, size, window):
                    resident += _resident_in(pagemap, offset, length, size, page)
                    for start in range(offset, offset + length, chunk_size):
                        clen = min(chunk_size, offset + length - start)
                        if isinstance(pagemap, int):
                            needed = pagemap < (length + page - 1) // page
                            if needed and pagemap:  # partly cached: ask cachestat per chunk
                                cached = residency.cachestat(fd, start, clen)
                                needed = cached is None or cached < (clen + page - 1) // page
                        else:
                            first = (start - offset) // page
                            last = (start - offset + clen + page - 1) // page
                            needed = 0 in pagemap[first:last]
                        if needed:
                            chunks.append((index, start, clen))
                            count += 1
            finally:
                os.close(fd)
        info['resident_before'] = resident
        info['bytes_to_read'] = size - resident
        info['chunks'] = count
    return files, chunks


# --------------------------------------------------------------------------- warming

class Progress:
    """Thread-safe counters shared by the workers and the status writer."""

    def __init__(self, bytes_total, files_total):
        self.lock = threading.Lock()
        self.bytes_total = bytes_total
        self.files_total = files_total
        self.bytes_done = 0
        self.files_done = 0
        self.started_mono = time.monotonic()
        self.io_started_mono = None  # set by set_state() when reading or evicting begins
        self.io_ended_mono = None  # set by set_state() at done / failed: the rate stops there
        self.state = 'scanning'

    def set_state(self, state):
        with self.lock:
            self.state = state
            if state in ('reading', 'evicting') and self.io_started_mono is None:
                self.io_started_mono = time.monotonic()
            elif state in ('done', 'failed') and self.io_ended_mono is None:
                self.io_ended_mono = time.monotonic()

    def snapshot(self):
        with self.lock:
            done, total = self.bytes_done, self.bytes_total
            files_done, files_total, state = self.files_done, self.files_total, self.state
            io_started, io_ended = self.io_started_mono, self.io_ended_mono
        now_mono = time.monotonic()
        elapsed = now_mono - self.started_mono
        if io_started is not None:
            rate = done / max((io_ended or now_mono) - io_started, 1e-9)
        else:
            rate = 0.0
        eta = eta_seconds(total - done, rate)
        status = {
            'state': state,
            'bytes_done': done,
            'bytes_total': total,
            'files_done': files_done,
            'files_total': files_total,
            'percent': percent(done, total),
            'gbps': round(rate / 1e9, 3),
            'eta_seconds': eta,
            'elapsed_seconds': round(elapsed, 2),
        }
        status['line'] = progress_line(status)
        return status


def progress_line(status):
    """One line an operator reads while the job runs (the ``job_progress`` action prints it):
    ``reading 42.0 % (1.20 GiB of 2.86 GiB, 10/24 files, 1.512 GB/s, eta 3.1 s, 4.2 s elapsed)``."""
    eta = status['eta_seconds']
    return '%s %s %% (%s of %s, %s/%s files, %s GB/s, eta %s, %s s elapsed)' % (
        status['state'], status['percent'], human_bytes(status['bytes_done']), human_bytes(status['bytes_total']),
        status['files_done'], status['files_total'], status['gbps'], '?' if eta is None else '%s s' % eta,
        status['elapsed_seconds'])


_SENDFILE_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ESPIPE, errno.EXDEV)


def _read_sendfile(fd, offset, length, sink, _buf):
    """Read [offset, offset+length) into the page cache via sendfile(2) to /dev/null (no user copy)."""
    got = 0
    while got < length:
        num = os.sendfile(sink, fd, offset + got, length - got)
        if num <= 0:
            break  # EOF: file shrank while warming
        got += num
    return got


def _read_pread(fd, offset, length, _sink, buf):
    """Read [offset, offset+length) with preadv into the worker's reused buffer (piece by piece)."""
    got = 0
    size = len(buf)
    while got < length:
        num = os.preadv(fd, [buf[:min(size, length - got)]], offset + got)
        if num <= 0:
            break
        got += num
    return got


def spans(files, chunks, workers, chunk_size, span=None):
    """Group chunks into the runs one worker reads through one open file: [(index, [(offset, length), ...])].

    Adjacent chunks of a file form a run; a run is cut after at most ``span`` bytes (at least
    one chunk). ``span`` None: the file's size / ``workers`` rounded up to whole chunks, so a
    large file is read by all workers at once, each in one sequential stream. Keeping the file
    open over a run keeps its readahead state, so the kernel's readahead window ramps up once
    per span instead of once per chunk (docs/benchmarks.md). Largest span first, so the last
    spans to start are the small ones.
    """
    out = []
    last = None
    for index, offset, length in chunks:
        limit = span or -(-files[index]['size'] // (max(1, workers) * chunk_size)) * chunk_size
        if last is not None and last[0] == index and last[2] == offset and last[3] + length <= limit:
            last[1].append((offset, length))
            last[2] = offset + length
            last[3] += length
            continue
        last = [index, [(offset, length)], offset + length, length]
        out.append(last)
    out.sort(key=lambda run: -run[3])
    return [(index, pieces) for index, pieces, _end, _total in out]


def warm(files, chunks, workers, chunk_size, progress=None, fadvise='auto', reader='auto', count_files=True,
         span=None):
    """Read ``chunks`` (from plan()) with ``workers`` threads; returns wall seconds.

    The chunks are grouped by spans() (``span`` passed on); every worker takes the next span
    from a shared queue and reads its chunks in order through one open file. ``reader``:
    ``sendfile`` sends the chunk to /dev/null, so the kernel fills the page cache without
    copying the data to user space; ``pread`` uses os.preadv into a per-worker buffer of
    min(chunk_size, PREAD_BUFFER) bytes; ``auto`` is sendfile, switching a worker to pread when sendfile is
    not supported for a file.
    ``fadvise``: ``auto`` first issues posix_fadvise(WILLNEED) for the chunk, in steps of
    readahead_window(), when that window is smaller than the chunk (the kernel's own
    readahead would otherwise keep only one window of the chunk in flight); True always,
    False never. Measured on a device whose window already covers the chunk, the extra
    call only slowed reading down (docs/benchmarks.md).
    Sets per file: bytes_read, seconds (first chunk start to last chunk end) and gbps.
    ``count_files=False`` leaves progress.files_done alone (retry passes).
    Raises PageCacheError on the first read error (remaining chunks are abandoned).
    """
    if reader not in ('auto', 'sendfile', 'pread'):
        raise PageCacheError('reader must be auto, sendfile or pread, got %r' % (reader,))
    progress = progress or Progress(sum(f['bytes_to_read'] for f in files), len(files))
    for info in files:
        info['bytes_read'] = 0
        info['_start'] = None
        info['_end'] = None
        info['_left'] = info.get('chunks', 0)
    queue = deque(spans(files, chunks, workers, chunk_size, span))
    lock = progress.lock
    errors = []
    stop = threading.Event()
    if fadvise not in ('auto', True, False):
        raise PageCacheError('fadvise must be auto, True or False, got %r' % (fadvise,))
    advise = getattr(os, 'posix_fadvise', None) if fadvise else None
    willneed = getattr(os, 'POSIX_FADV_WILLNEED', 3)
    steps = {}  # st_dev -> WILLNEED step in bytes, or None for no WILLNEED
    if advise is not None:
        for info in files:
            dev = info.get('dev', 0)
            if dev not in steps:
                window = readahead_window(dev)
                steps[dev] = window if fadvise is True or window < chunk_size else None
    use_sendfile = reader != 'pread' and hasattr(os, 'sendfile')
    bufsize = min(chunk_size, PREAD_BUFFER)
    sink = os.open(os.devnull, os.O_WRONLY | getattr(os, 'O_CLOEXEC', 0)) if use_sendfile else None

    def worker():
        read = _read_sendfile if use_sendfile else _read_pread
        buf = None if use_sendfile else memoryview(bytearray(bufsize))
        while not stop.is_set():
            try:
                index, pieces = queue.popleft()
            except IndexError:
                return
            info = files[index]
            step = steps.get(info.get('dev', 0))
            offset = pieces[0][0]
            try:
                fd = _open_ro(info['path'])
                try:
                    for offset, length in pieces:
                        if stop.is_set():
                            return
                        begin = time.monotonic()
                        if step:
                            for start in range(offset, offset + length, step):
                                advise(fd, start, min(step, offset + length - start), willneed)
                        try:
                            got = read(fd, offset, length, sink, buf)
                        except OSError as exc:
                            if read is not _read_sendfile or reader != 'auto' or exc.errno not in _SENDFILE_UNSUPPORTED:
                                raise
                            read, buf = _read_pread, memoryview(bytearray(bufsize))
                            got = read(fd, offset, length, sink, buf)
                        done(info, got, begin, time.monotonic())
                finally:
                    os.close(fd)
            except OSError as exc:
                errors.append('%s (offset %d): %s' % (info['path'], offset, exc.strerror or exc))
                stop.set()
                return

    def done(info, got, begin, end):
        with lock:
            progress.bytes_done += got
            info['bytes_read'] += got
            if info['_start'] is None or begin < info['_start']:
                info['_start'] = begin
            if info['_end'] is None or end > info['_end']:
                info['_end'] = end
            info['_left'] -= 1
            if info['_left'] == 0 and count_files:
                progress.files_done += 1

    progress.set_state('reading')
    begin = time.monotonic()
    count = max(1, min(workers, len(queue)))
    threads = [threading.Thread(target=worker, name='page-cache-%d' % i) for i in range(count)]
    try:
        for thread in threads:
            thread.daemon = True
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        if sink is not None:
            os.close(sink)
    seconds = time.monotonic() - begin
    for info in files:
        start, end = info.pop('_start'), info.pop('_end')
        info.pop('_left')
        info['seconds'] = round(end - start, 3) if start is not None else 0.0
        info['gbps'] = gbps(info['bytes_read'], end - start) if start is not None else 0.0
    if errors:
        raise PageCacheError('read failed: %s' % errors[0], 'paths')
    return seconds


def make_resident(files, chunks, workers, chunk_size, progress=None, residency=None, retries=2, **kwargs):
    """warm(), re-measure, and re-read what went missing meanwhile; returns wall seconds.

    Pages read early can be reclaimed before the end of a long warm-up (memory pressure,
    proactive reclaim); up to ``retries`` extra passes re-read the chunks of files that are
    not fully resident afterwards. Sets resident_after and passes on every file.
    """
    residency = residency or Residency()
    progress = progress or Progress(sum(f['bytes_to_read'] for f in files), len(files))
    seconds = warm(files, chunks, workers, chunk_size, progress, **kwargs) if chunks else 0.0
    measure_after(files, residency)
    for info in files:
        info['passes'] = 1 if info.get('chunks') else 0
    for _attempt in range(retries):
        short = [f for f in files if f['resident_after'] < f['size']]
        if not short:
            break
        again = [{'path': f['path'], 'size': f['size'], 'dev': f.get('dev', 0)} for f in short]
        again, more = plan(again, chunk_size, residency)
        if not more:
            break
        with progress.lock:
            progress.bytes_total += sum(f['bytes_to_read'] for f in again)
        seconds += warm(again, more, workers, chunk_size, progress, count_files=False, **kwargs)
        for info, extra in zip(short, again):
            if extra['chunks']:
                info['passes'] += 1
                info['bytes_read'] = info.get('bytes_read', 0) + extra['bytes_read']
                info['seconds'] = round(info.get('seconds', 0.0) + extra['seconds'], 3)
                info['gbps'] = gbps(info['bytes_read'], info['seconds'])
        measure_after(short, residency)
    return seconds


def gbps(num_bytes, seconds):
    """Decimal GB/s rounded to 3 places (0.0 when nothing was timed)."""
    if seconds <= 0 or num_bytes <= 0:
        return 0.0
    return round(num_bytes / seconds / 1e9, 3)


# --------------------------------------------------------------------------- eviction

def drop_file(path):
    """posix_fadvise(DONTNEED) over the whole of ``path``: its clean, unmapped pages leave the page cache."""
    fd = _open_ro(path)
    try:
        os.posix_fadvise(fd, 0, 0, getattr(os, 'POSIX_FADV_DONTNEED', 4))
    finally:
        os.close(fd)


def evict(files, progress=None):
    """posix_fadvise(DONTNEED) every file with resident pages (``drop_file``); returns wall seconds.

    Sets per file ``seconds``. Dirty pages are not written back first (no fsync), so they
    and pages mapped by running processes stay resident.
    """
    begin = time.monotonic()
    if progress is not None:
        progress.set_state('evicting')
    for info in files:
        info['seconds'] = 0.0
        if not info.get('resident_before'):
            continue
        start = time.monotonic()
        try:
            drop_file(info['path'])
        except OSError as exc:
            raise PageCacheError('paths: cannot evict %s: %s' % (info['path'], exc.strerror or exc), 'paths')
        info['seconds'] = round(time.monotonic() - start, 3)
        if progress is not None:
            with progress.lock:
                progress.bytes_done += info['resident_before']
                progress.files_done += 1
    return time.monotonic() - begin


def measure_after(files, residency=None):
    """Set resident_after on every file (re-measured)."""
    residency = residency or Residency()
    for info in files:
        if not info['size']:
            info['resident_after'] = 0
            continue
        try:
            info['resident_after'] = residency.resident_path(info['path'], info['size'])
        except OSError:
            info['resident_after'] = 0  # removed meanwhile
    return files
