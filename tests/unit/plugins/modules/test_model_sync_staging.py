# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync's ``staging_dir`` against a real S3 API (``lab``: conftest.py): a staging area on the destination's
filesystem is used and left clean; one on another filesystem (two found on this host, never skipped), or on
another mount of the same filesystem (a recorded mount table), is refused before any request to the store."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from s3_lab import MIB, model_files, tree, upload_model  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.inferops.node.plugins.module_utils.model_sync.mount import (  # noqa: E402
    parse_mountinfo,
    staging_problem,
)

# Where another filesystem than the tests' tmp_path may be: tmp_path is on the /dev/shm tmpfs when it is
# writable (tests/unit/plugins/conftest.py), else on the disk's /tmp.
OTHER_FILESYSTEMS = ('/var/tmp', '/dev/shm', '/tmp', '/run', os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def other_filesystem(lab):
    """A fresh directory on another filesystem than the destination; the test FAILS when there is none."""
    tried = []
    for base in OTHER_FILESYSTEMS:
        if not os.path.isdir(base) or not os.access(base, os.W_OK):
            tried.append('%s (not a writable directory)' % base)
        elif os.stat(base).st_dev == os.stat(str(lab['dest'])).st_dev:
            tried.append('%s (the destination\'s filesystem)' % base)
        else:
            path = tempfile.mkdtemp(prefix='model-sync-staging.', dir=base)
            yield path
            shutil.rmtree(path, ignore_errors=True)
            return
    pytest.fail('no writable directory on another filesystem than %s, tried: %s' % (lab['dest'], ', '.join(tried)))


def fstype(path):
    with open('/proc/self/mountinfo') as handle:
        mounts = parse_mountinfo(handle.read())
    best = max((m for m in mounts if path == m['mount_point'] or path.startswith(m['mount_point'].rstrip('/') + '/')),
               key=lambda m: len(m['mount_point']))
    return best['fstype']


def test_custom_staging_dir_on_the_destination_filesystem_is_used_and_left_clean(lab):
    files = model_files(51, big=6 * MIB + 3)
    upload_model(lab['client'], lab['bucket'], 'st/1', files)
    staging = lab['tmp'] / 'staging' / 'area'  # not there yet: made on the first run, parents too
    lab['proxy'].reset(limit=3 * MIB)  # cut the line: the download fails half-way
    failed, result = lab['sync']([{'name': 'st', 'version': '1'}], staging_dir=str(staging), retries=0,
                                 connections=1)
    assert failed, result
    # The resume data is in the staging area asked for, not in the default one inside the repository.
    assert os.listdir(str(staging / 'parts')), tree(staging)
    assert os.listdir(str(lab['dest'])) == []

    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'st', 'version': '1'}], staging_dir=str(staging) + '/')
    assert not failed, result
    model = result['models'][0]
    assert model['action'] == 'synced' and model['bytes_resumed'] >= MIB, model
    placed = tree(lab['dest'] / 'st')
    assert json.loads(placed.pop('.inferops-model-sync.json'))['version'] == '1'
    assert placed == files
    assert os.listdir(str(lab['dest'])) == ['st']  # no .inferops-model-sync in the repository
    assert not staging.exists() and os.listdir(str(lab['tmp'] / 'staging')) == []  # nothing left to resume


def test_staging_dir_on_another_filesystem_is_refused_before_any_request(lab, other_filesystem):  # pylint: disable=redefined-outer-name
    upload_model(lab['client'], lab['bucket'], 'fs/1', model_files(52, big=MIB))
    lab['proxy'].reset()
    dest = str(lab['dest'])
    for staging in (other_filesystem, os.path.join(other_filesystem, 'new', 'area')):  # there, and to be made
        for check in (True, False):
            failed, result = lab['sync']([{'name': 'fs', 'version': '1'}], staging_dir=staging, check=check)
            assert failed, result
            msg = result['msg']
            assert msg.startswith('staging_dir = %s is not on the filesystem of destination %s: it would be on '
                                  % (staging, dest)), msg
            assert '(%s, mounted on' % fstype(other_filesystem) in msg and '(%s, mounted on' % fstype(dest) in msg
            assert "Set staging_dir to a directory on the destination's filesystem" in msg
            assert 'or leave it unset for the default %s/.inferops-model-sync' % dest in msg
            assert 'Nothing was changed.' in msg
    assert lab['proxy'].gets == 0  # refused before the store was asked anything
    assert os.listdir(other_filesystem) == [] and os.listdir(dest) == []


def test_staging_dir_on_another_mount_of_the_same_filesystem_is_refused(tmp_path):
    # rename(2) and link(2) fail with EXDEV across two mounts of one filesystem too (a bind mount): same st_dev,
    # another entry of the mount table. Real directories, a table recorded with a bind mount on <tmp>/bind.
    (tmp_path / 'models').mkdir()
    (tmp_path / 'bind').mkdir()
    base = os.path.realpath(str(tmp_path))
    table = ('1 0 8:1 / / rw - ext4 /dev/vda1 rw\n'
             '2 1 0:30 %s %s rw - tmpfs tmpfs rw\n'
             '3 2 0:30 %s/models %s/bind rw - tmpfs tmpfs rw\n' % (base, base, base, base))
    staging = str(tmp_path / 'bind' / 'stage')
    problem = staging_problem(staging, str(tmp_path / 'models'), parse_mountinfo(table))
    assert problem and problem.startswith('staging_dir = %s is not on the filesystem of destination' % staging)
    assert 'mounted on %s/bind) (another mount of the same filesystem)' % base not in problem
    assert 'the destination is on tmpfs (tmpfs, mounted on %s) (another mount of the same filesystem)' % base \
        in problem, problem
    assert staging_problem(staging, str(tmp_path / 'models'), parse_mountinfo(table.rsplit('3 2', 1)[0])) is None
    assert staging_problem(staging, str(tmp_path / 'models'), None) is None  # no table: st_dev alone
