# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared fixtures of the unit tests.

``evictable_dir``: the page cache tests need files whose pages the kernel can drop
(posix_fadvise(DONTNEED)). On tmpfs (a common /tmp) it cannot, and those tests used to skip
themselves there - a skip that CI counted as a pass. The fixture looks for a directory on a disk
filesystem instead and FAILS, naming what it tried, when there is none: the tests run everywhere
or the run is red.

``pytest_configure``: the tests' temporary files (``tmp_path``: the rebuilt sysfs snapshots, hundreds of
files a test) go to /dev/shm when it is a writable tmpfs - a memory filesystem like the sysfs they
imitate. On the lab host's ext4 /tmp a file took about 1 ms of kernel time to create (0.05 ms in
/var/tmp, 0.02 ms on tmpfs): rebuilding the snapshots was most of the units stage's CPU time.
``PYTEST_DEBUG_TEMPROOT`` or ``--basetemp`` set by the caller win. ``evictable_dir`` then finds /var/tmp.

``pytest_runtest_protocol``: before ansible-test forks the worker for a test, the values the test's
fixtures share through tests/unit/before_fork.py are made in the worker, once (see that module).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import page_cache as pc
from ansible_collections.inferops.node.tests.unit import before_fork

PROBE_SIZE = 1024 * 1024
ENV = 'INFEROPS_EVICTABLE_TMP'
MEMORY_TMP = '/dev/shm'


def _is_tmpfs(path):
    with open('/proc/self/mounts') as handle:
        return any(line.split()[1:3] == [path, 'tmpfs'] for line in handle)


def pytest_configure(config):
    if config.option.basetemp or os.environ.get('PYTEST_DEBUG_TEMPROOT'):
        return
    if os.path.isdir(MEMORY_TMP) and os.access(MEMORY_TMP, os.W_OK) and _is_tmpfs(MEMORY_TMP):
        # Read by pytest when it makes its base directory, and inherited by the xdist workers.
        os.environ['PYTEST_DEBUG_TEMPROOT'] = MEMORY_TMP


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


# A wrapper runs before every plain hook implementation, so before ansible_forked's fork.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # pylint: disable=unused-argument
    before_fork.make_for(item.fixturenames)
    yield
