# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parallel ranged downloads into the staging area, verification, and the atomic swap into place.

* ``Downloader(client, staging, connections, part_size)`` - ``run(files)`` fetches each file (unique by
  sha256; from the file's own ``client`` when it names one - the endpoint of its model) as byte ranges
  of ``part_size`` with ``connections`` threads, each on its own keep-alive connection, written with
  ``pwrite`` into ``parts/<sha>.part``. A file of several parts is journalled: a part only after
  ``fdatasync``, so an interrupted run resumes at the parts not journalled; all its parts are read with
  If-Match on the ETag seen first (a replaced object is noticed, not mixed); it is hashed in order as its
  parts complete (from the page cache, beside the other parts' downloads), the rest when the last
  arrives. A file of one part (most files of a model: configs, tokenizers, small shards) is
  hashed as it streams in and neither journalled nor synced on its own: an interrupted run fetches it
  again (at most ``part_size``), and the downloads are made durable together by one ``syncfs`` of the
  staging filesystem before they are moved to ``objects/`` (per-file syncs cost 4-5 syscalls a file and
  most of a many-file model's time). Only a matching sha256 reaches ``objects/<sha>`` - which therefore
  holds only verified bytes that are on disk; a mismatch deletes the file.
* ``place_model(plan, staging, marker)`` - builds ``build/<model>`` from hard links (placed files and
  verified objects) plus the marker, then exchanges it with the live directory in one
  ``renameat2(RENAME_EXCHANGE)`` (Linux 3.15+; two renames where the filesystem refuses it).
* ``remove_tree(path, staging)`` - renames a tree into ``trash/`` first (it disappears at once), then
  deletes it.
* ``SyncProgress()`` - what a run is doing, for its status file (module_utils.status_file): once
  ``downloading(downloader)`` is called, that downloader's bytes and verified files against what it has to
  fetch, rate, ETA and a line an operator reads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import queue
import shutil
import threading
import time

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import MARKER_NAME
from ansible_collections.inferops.node.plugins.module_utils.model_sync.plan import human
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import S3Error
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import eta_seconds

__all__ = ['Downloader', 'SyncError', 'SyncProgress', 'exchange', 'place_model', 'remove_tree']

# Errors after which no other request can succeed: stop at once instead of retrying every part.
FATAL_CODES = ('InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'NoSuchBucket', 'ExpiredToken',
               'AuthorizationHeaderMalformed')
RENAME_EXCHANGE = 2
AT_FDCWD = -100


class SyncError(Exception):
    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


class _File(object):
    def __init__(self, sha, size, bucket, key, part_size, client):
        self.client = client
        self.sha = sha
        self.size = size
        self.bucket = bucket
        self.key = key
        self.part_size = part_size
        # An empty file has no byte range to fetch: no parts, straight to verification.
        self.count = (size + part_size - 1) // part_size
        # One part (or none): hashed as it streams in, no journal (see the module's docstring).
        self.single = self.count <= 1
        self.digest = None
        # A file of several parts: sha256 of parts 0..hashed-1, advanced as parts complete (_hash_ahead).
        self.hasher = hashlib.sha256()
        self.hashed = 0
        self.hash_lock = threading.Lock()
        self.verified = False
        self.done = set()
        self.etag = None
        self.fd = None
        self.journal = None
        self.error = None
        self.bytes = 0
        self.started = None
        self.verify_queued = False
        # Bumped when the object changed under the download: parts of an older generation are dropped.
        self.gen = 0
        self.finished = None
        self.lock = threading.Lock()


def _reserve(item):
    """Reserve the file's blocks now: a full disk fails here, not in the middle of a write."""
    if item.size:
        try:
            os.posix_fallocate(item.fd, 0, item.size)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise
            os.ftruncate(item.fd, item.size)


class Downloader(object):
    """Fetch files into the staging area; thread pool of ``connections`` workers."""

    def __init__(self, client, staging, connections=8, part_size=64 * 1024 * 1024, retries=3, backoff=0.5):
        self.client = client
        self.staging = staging
        self.connections = connections
        self.part_size = part_size
        self.retries = retries
        self.backoff = backoff
        self.lock = threading.Lock()
        self.bytes_downloaded = 0
        self.files_done = 0  # downloaded and verified
        # What run() has to fetch: the parts not journalled yet (a resumed file counts only its missing parts).
        self.bytes_planned = 0
        self.files_planned = 0
        self.requests = 0
        self.retried = 0
        self.fatal = None

    # -- journal -------------------------------------------------------------------------------
    def _open(self, item):
        staging = self.staging
        if item.single:
            return  # opened by the worker that fetches it (_fetch_part): a thousand opens in parallel
        header, done = staging.read_journal(item.sha)
        if not header or header.get('size') != item.size or header.get('part_size') != item.part_size:
            header, done = None, set()
            for path in (staging.part_path(item.sha), staging.journal_path(item.sha)):
                if os.path.exists(path):
                    os.unlink(path)
        item.fd = os.open(staging.part_path(item.sha), os.O_RDWR | os.O_CREAT, 0o644)
        if header is None:
            _reserve(item)
            self._new_journal(item)
        else:
            item.etag = header.get('etag')
            item.done = set(i for i in done if 0 <= i < item.count)
            with open(staging.journal_path(item.sha), 'r') as handle:
                for line in handle.read().split('\n')[1:-1]:
                    if line.startswith('etag '):
                        item.etag = line[5:]
        item.journal = open(staging.journal_path(item.sha), 'a')

    def _open_single(self, item):
        # A journal left by an earlier run (a part size that made this file multi-part) means nothing now.
        if os.path.exists(self.staging.journal_path(item.sha)):
            os.unlink(self.staging.journal_path(item.sha))
        item.fd = os.open(self.staging.part_path(item.sha), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        _reserve(item)

    def _journal(self, item, line):
        # Callers hold item.lock: journal lines and a reset never interleave.
        item.journal.write(line + '\n')
        item.journal.flush()
        os.fsync(item.journal.fileno())

    def _reset(self, item, gen):
        """The object changed since parts of generation ``gen`` were fetched: start this file again.

        Returns False when another thread already did (its parts carry the newer generation).
        """
        with item.lock:
            if gen != item.gen:
                return False
            item.gen += 1
            item.done = set()
            item.etag = None
            item.hasher, item.hashed = hashlib.sha256(), 0
            item.journal.close()
            self._new_journal(item)
            item.journal = open(self.staging.journal_path(item.sha), 'a')
        return True

    def _new_journal(self, item):
        with open(self.staging.journal_path(item.sha), 'w') as handle:
            handle.write(json.dumps({'size': item.size, 'part_size': item.part_size, 'key': item.key}) + '\n')
            handle.flush()
            os.fsync(handle.fileno())

    # -- work ----------------------------------------------------------------------------------
    def _fetch_part(self, item, index, gen):
        start = index * item.part_size
        end = min(start + item.part_size, item.size) - 1
        attempt = 0
        while True:
            if self.fatal or item.error or gen != item.gen:
                return
            if item.fd is None and item.single:
                self._open_single(item)
            written = [0]
            # A single part arrives in order: hashed on the way (a retry starts the part, and this, again).
            hasher = hashlib.sha256() if item.single else None

            def sink(offset, data):
                os.pwrite(item.fd, data, offset)
                if hasher is not None:
                    hasher.update(data)
                written[0] += len(data)
                with self.lock:
                    self.bytes_downloaded += len(data)

            try:
                with self.lock:
                    self.requests += 1
                etag = item.client.get_range(item.bucket, item.key, start, end, sink, if_match=item.etag)
            except S3Error as exc:
                if exc.code in FATAL_CODES:
                    self.fatal = exc.msg
                    return
                if exc.status == 412:
                    raise _Changed(gen)
                if exc.retryable and attempt < self.retries:
                    attempt += 1
                    with self.lock:
                        self.retried += 1
                    time.sleep(self.backoff * (2 ** (attempt - 1)))
                    continue
                item.error = exc.msg
                return
            with item.lock:
                item.bytes += written[0]
                if gen != item.gen:
                    return  # fetched from the object as it was before the reset: dropped
                if item.etag is None and etag:
                    item.etag = etag
                    first = True
                else:
                    first = False
                changed = etag and item.etag and etag != item.etag
            if changed:
                raise _Changed(gen)
            if item.single:
                with item.lock:
                    item.digest = hasher.hexdigest()
                    item.done.add(index)
                return
            if first:
                with item.lock:
                    self._journal(item, 'etag ' + etag)
            os.fdatasync(item.fd)
            with item.lock:
                if gen != item.gen:
                    return
                self._journal(item, str(index))
                item.done.add(index)
            self._hash_ahead(item, wait=False)
            return

    def _hash_ahead(self, item, wait):
        """Feed the file's hash the parts that complete its prefix. One thread at a time per file; with
        ``wait=False`` a thread that finds another one hashing leaves it the work (_verify waits and ends it)."""
        if not item.hash_lock.acquire(blocking=wait):
            return
        try:
            while True:
                with item.lock:
                    index, gen, hasher = item.hashed, item.gen, item.hasher
                    if index >= item.count or index not in item.done:
                        return
                offset = index * item.part_size
                end = min(offset + item.part_size, item.size)
                while offset < end:
                    block = os.pread(item.fd, min(8 * 1024 * 1024, end - offset), offset)
                    if not block:
                        raise IOError('%s: short read at %d' % (self.staging.part_path(item.sha), offset))
                    hasher.update(block)
                    offset += len(block)
                with item.lock:
                    if gen != item.gen:
                        return  # reset meanwhile: a new hasher starts from part 0
                    item.hashed = index + 1
        finally:
            item.hash_lock.release()

    def _verify(self, item):
        if item.fd is None:  # an empty file: no part fetched, nothing opened
            self._open_single(item)
        if item.single:
            got = item.digest or hashlib.sha256().hexdigest()  # an empty file: no part was fetched
        else:
            self._hash_ahead(item, wait=True)
            got = item.hasher.hexdigest()
            os.fsync(item.fd)
            item.journal.close()
        os.close(item.fd)
        item.fd = None
        part = self.staging.part_path(item.sha)
        if got != item.sha:
            os.unlink(part)
            if not item.single:
                os.unlink(self.staging.journal_path(item.sha))
            item.error = ('sha256 mismatch for s3://%s/%s: the manifest says %s, the %d bytes downloaded hash to %s '
                          '(ETag %s); the file was discarded and nothing was put in place'
                          % (item.bucket, item.key, item.sha, item.size, got, item.etag))
            return
        with self.lock:
            self.files_done += 1
        if item.single:
            item.verified = True  # moved to objects/ after the one syncfs (run())
            return
        os.rename(part, self.staging.object_path(item.sha))
        os.unlink(self.staging.journal_path(item.sha))

    def run(self, files):
        """Download ``files`` ([{sha256, size, bucket, key[, client]}], unique sha256); returns {sha: result}."""
        items = [_File(f['sha256'], f['size'], f['bucket'], f['key'], self.part_size, f.get('client') or self.client)
                 for f in files]
        clients = list(dict((id(i.client), i.client) for i in items).values())
        for item in items:
            self._open(item)
        tasks = queue.Queue()
        self.files_planned = len(items)
        self.bytes_planned = sum(min(item.part_size, item.size - i * item.part_size)
                                 for item in items for i in range(item.count) if i not in item.done)
        for item in items:
            missing = [i for i in range(item.count) if i not in item.done]
            if not missing:
                item.verify_queued = True
                tasks.put(('verify', item, None, 0))
            for index in missing:
                tasks.put(('part', item, index, 0))

        def worker():
            while True:
                try:
                    kind, item, index, gen = tasks.get_nowait()
                except queue.Empty:
                    for client in clients:
                        client.close()  # this thread's keep-alive connections
                    return
                if kind == 'verify':
                    if not item.error and not self.fatal:
                        self._verify(item)
                    item.finished = time.monotonic()
                    continue
                if item.started is None:
                    item.started = time.monotonic()
                try:
                    self._fetch_part(item, index, gen)
                except _Changed as exc:
                    # Re-fetch every part of this file from the object as it is now (once per change).
                    if self._reset(item, exc.gen):
                        for again in range(item.count):
                            tasks.put(('part', item, again, exc.gen + 1))
                    continue
                except (IOError, OSError) as exc:
                    item.error = 'writing %s: %s' % (self.staging.part_path(item.sha), exc)
                with item.lock:
                    complete = len(item.done) == item.count and not item.error and not item.verify_queued
                    if complete:
                        item.verify_queued = True
                if complete:
                    tasks.put(('verify', item, None, gen))

        start = time.monotonic()
        threads = [threading.Thread(target=worker) for _n in range(max(1, min(self.connections, len(items) * 1000)))]
        for thread in threads:
            thread.start()
        # A worker that finds the queue empty while others still add a verify task would exit early:
        # join, then drain whatever is left on this thread.
        for thread in threads:
            thread.join()
        while not tasks.empty():
            worker()
        verified = [item for item in items if item.single and item.verified]
        if verified:
            # The single-part files' bytes to disk at once, then into objects/ (which holds only durable,
            # verified files: a later run uses them without hashing again).
            syncfs(self.staging.parts)
            for item in verified:
                os.rename(self.staging.part_path(item.sha), self.staging.object_path(item.sha))
        seconds = time.monotonic() - start
        results = {}
        for item in items:
            if item.fd is not None:
                os.close(item.fd)
            if item.journal is not None and not item.journal.closed:
                item.journal.close()
            error = item.error or (self.fatal and 'not completed: %s' % self.fatal)
            if not error and not os.path.isfile(self.staging.object_path(item.sha)):
                error = 'not completed (%d of %d parts)' % (len(item.done), item.count)
            results[item.sha] = {'error': error, 'bytes': item.bytes}
        return results, seconds


class SyncProgress(object):
    """What a sync is doing, as the snapshot its status file is written from: ``state`` (``planning``,
    ``downloading``, ``placing``, ``done``, ``failed``), the bytes and files downloaded of what
    ``downloader`` has to fetch (its counters, once set), the rate since the download began and the time left."""

    def __init__(self):
        self.lock = threading.Lock()
        self.state = 'planning'
        self.downloader = None
        self.started = time.monotonic()
        self.download_started = None
        self.download_ended = None

    def downloading(self, downloader):
        with self.lock:
            self.downloader = downloader
            self.state, self.download_started = 'downloading', time.monotonic()

    def set_state(self, state):
        with self.lock:
            self.state = state
            if state != 'downloading' and self.download_started is not None and self.download_ended is None:
                self.download_ended = time.monotonic()

    def snapshot(self):
        with self.lock:
            state, downloader = self.state, self.downloader
            began, ended = self.download_started, self.download_ended
        done, files_done, total, files_total = (
            (downloader.bytes_downloaded, downloader.files_done, downloader.bytes_planned, downloader.files_planned)
            if downloader else (0, 0, 0, 0))
        now = time.monotonic()
        rate = done / max((ended or now) - began, 1e-9) if began is not None else 0.0
        eta = eta_seconds(total - done, rate)
        status = {'state': state, 'bytes_done': done, 'bytes_total': total, 'files_done': files_done,
                  'files_total': files_total, 'percent': round(100.0 * done / total, 1) if total else 100.0,
                  'mb_per_s': round(rate / 1e6, 1), 'eta_seconds': eta,
                  'elapsed_seconds': round(now - self.started, 2)}
        status['line'] = '%s %s %% (%s of %s, %s/%s files, %s MB/s, eta %s, %s s elapsed)' % (
            state, status['percent'], human(done), human(total), files_done, files_total, status['mb_per_s'],
            '?' if eta is None else '%s s' % eta, status['elapsed_seconds'])
        return status


class _Changed(Exception):
    def __init__(self, gen):
        super().__init__(gen)
        self.gen = gen


# -- placing ---------------------------------------------------------------------------------------
_libc = None


def exchange(a, b):
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE); False when the system cannot."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
    try:
        renameat2 = _libc.renameat2
    except AttributeError:
        return False
    rc = renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a)


def syncfs(path):
    """Write back every dirty page of the filesystem that holds ``path`` (syncfs(2); sync(2) without it)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if getattr(_libc, 'syncfs', None) is None or _libc.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_tree(path, staging):
    """Take a tree out of sight at once (rename into trash/), then delete it."""
    if not os.path.lexists(path):
        return
    os.makedirs(staging.trash, exist_ok=True)
    target = os.path.join(staging.trash, '%s.%d.%d' % (os.path.basename(path), os.getpid(), time.time_ns()))
    os.rename(path, target)
    shutil.rmtree(target)


def place_model(plan, staging, marker, keep_replaced=None):
    """Build the model's next tree and swap it in; returns how ('exchange', 'rename' or 'create').

    ``keep_replaced``: a directory to move an unmanaged tree into instead of deleting it.
    """
    live = plan['live_dir']
    build = os.path.join(staging.build, plan['name'])
    if os.path.lexists(build):
        shutil.rmtree(build)
    os.makedirs(build, mode=0o755)
    for row in plan['files']:
        target = os.path.join(build, row['path'])
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        source = os.path.join(live, row['path']) if row['source'] == 'live' else staging.object_path(row['sha256'])
        os.link(source, target)
        os.chmod(target, 0o644)
    with open(os.path.join(build, MARKER_NAME), 'w') as handle:
        handle.write(json.dumps(marker, indent=1, sort_keys=True) + '\n')
        handle.flush()
        os.fsync(handle.fileno())
    for root, dirs, _names in os.walk(build):
        for name in dirs:
            _fsync_dir(os.path.join(root, name))
    _fsync_dir(build)
    parent = os.path.dirname(live)
    if not os.path.lexists(live):
        os.rename(build, live)
        how = 'create'
    elif exchange(build, live):
        how = 'exchange'
    else:
        aside = build + '.old'
        os.rename(live, aside)
        os.rename(build, live)
        os.rename(aside, build)
        how = 'rename'
    _fsync_dir(parent)
    if os.path.lexists(build):  # the previous tree, now out of sight
        if keep_replaced:
            os.makedirs(keep_replaced, exist_ok=True)
            os.rename(build, os.path.join(keep_replaced, '%s.%d' % (plan['name'], time.time_ns())))
        else:
            remove_tree(build, staging)
    return how
