# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared fixtures of the unit tests.

``evictable_dir``: the page cache tests need files whose pages the kernel can drop
(posix_fadvise(DONTNEED)). On tmpfs (a common /tmp) it cannot, and those tests used to skip
themselves there - a skip that CI counted as a pass. The fixture looks for a directory on a disk
filesystem instead and FAILS, naming what it tried, when there is none: the tests run everywhere
or the run is red.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from ansible_collections.inferops.node.plugins.module_utils import page_cache as pc

PROBE_SIZE = 1024 * 1024
ENV = 'INFEROPS_EVICTABLE_TMP'


def _evictable(directory):
    """True when a file written in directory leaves the page cache on POSIX_FADV_DONTNEED."""
    probe = os.path.join(directory, '.evict-probe')
    try:
        with open(probe, 'wb') as handle:
            handle.write(os.urandom(PROBE_SIZE))
            handle.flush()
            os.fsync(handle.fileno())
        fd = os.open(probe, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return pc.Residency().resident_path(probe) == 0
    except OSError:
        return False
    finally:
        if os.path.exists(probe):
            os.unlink(probe)


def candidates(tmp_path):
    """Where to look, in order: pytest's tmp_path, $INFEROPS_EVICTABLE_TMP, /var/tmp, the checkout."""
    yield str(tmp_path)
    if os.environ.get(ENV):
        yield os.environ[ENV]
    yield '/var/tmp'
    yield os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def evictable_dir(tmp_path):
    """A fresh directory whose files the page cache can drop (removed afterwards)."""
    tried = []
    for base in candidates(tmp_path):
        if not os.path.isdir(base) or not os.access(base, os.W_OK):
            tried.append('%s (not a writable directory)' % base)
            continue
        directory = tempfile.mkdtemp(prefix='evictable.', dir=base)
        if _evictable(directory):
            yield directory
            shutil.rmtree(directory, ignore_errors=True)
            return
        shutil.rmtree(directory, ignore_errors=True)
        tried.append('%s (pages stay cached: tmpfs?)' % base)
    pytest.fail('no directory where files can be evicted from the page cache, tried: %s; set %s to a '
                'directory on a disk filesystem (ext4, xfs)' % (', '.join(tried), ENV))
