# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync's mount rule on recorded mount tables (tests/unit/fixtures/model_sync/README.md)."""

from __future__ import annotations

import os

from ansible_collections.inferops.node.plugins.module_utils.model_sync.mount import (
    mount_of,
    mount_problem,
    parse_mountinfo,
)

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'fixtures', 'model_sync')
WORK = '/var/tmp/inferops-mountinfo'  # record_mountinfo.sh's work directory


def table(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return parse_mountinfo(handle.read())


def test_unmounted_array_mount_point_is_refused_naming_the_root_filesystem_and_the_fix():
    problem = mount_problem(WORK + '/data/models', table('mountinfo_array_unmounted.txt'))
    assert problem.startswith('destination %s/data/models is not a mount point' % WORK)
    for text in ('root filesystem (/dev/vda, ext4, mounted on /)', 'md_raid_xfs', 'nofail',
                 'require_mount=false', 'model_sync_require_mount', 'Nothing was changed'):
        assert text in problem
    # A model directory below it is refused the same way.
    assert mount_problem(WORK + '/data/models/resnet', table('mountinfo_array_unmounted.txt'))


def test_mounted_array_passes_at_and_below_its_mount_point():
    mounts = table('mountinfo_array_mounted.txt')
    for path in (WORK + '/data/models', WORK + '/data/models/resnet/1'):
        assert mount_problem(path, mounts) is None
        assert (mount_of(path, mounts)['fstype'], mount_of(path, mounts)['source']) == ('xfs', '/dev/loop0')
    # Its parent is still the root filesystem: a prefix match must stop at a path component.
    assert mount_of(WORK + '/data/models-old', mounts)['mount_point'] == '/'


def test_bind_mount_of_a_root_filesystem_directory_passes():
    # Same device as / (254:0), so st_dev or os.path.ismount would call it the root filesystem.
    mounts = table('mountinfo_array_mounted.txt')
    mount = mount_of(WORK + '/srv/models', mounts)
    assert (mount['source'], mount['root']) == ('/dev/vda', WORK + '/srv/bind-src/models')
    assert mount_problem(WORK + '/srv/models', mounts) is None


def test_escaped_mount_point_and_stacked_mounts():
    mounts = table('mountinfo_array_mounted.txt')
    assert mount_of(WORK + '/data/models two/x', mounts)['fstype'] == 'tmpfs'
    # /dev/shm holds two tmpfs stacked on one point (the host's table): the top one is seen.
    assert mount_of('/dev/shm/x', mounts)['id'] == '111'
    assert mount_of('/dev/shm', table('mountinfo_host.txt'))['id'] == '30'


def test_lab_node_models_mount_passes_and_an_unmounted_path_is_refused():
    mounts = table('mountinfo_lab_compute1.txt')
    assert mount_problem('/srv/models', mounts) is None
    assert mount_of('/srv/models/llama', mounts)['source'] == '/dev/nvme0n1'
    assert '(/dev/vda1, ext4, mounted on /)' in mount_problem('/data/models', mounts)
    assert mount_problem('/', mounts)


def test_table_without_root_is_refused():
    assert 'lists no root filesystem' in mount_problem('/data/models', [])
    assert parse_mountinfo('garbage\n\n1 2 3\n') == []
