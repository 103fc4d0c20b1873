# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter fabric_xfs_mounts on blkid probes recorded in the lab (fixtures/blkid)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.fabric_mounts import FilterModule
from ansible_collections.inferops.node.tests.unit.module_harness import fixture


@pytest.fixture
def fabric_xfs_mounts():
    return FilterModule().filters()['fabric_xfs_mounts']


def probe(path, text):
    return {'item': {'path': path, 'device': '/dev/nvme1n1', 'opts': '_netdev,nofail,ro'}, 'stdout': text, 'rc': 0}


def test_source_is_the_filesystem_uuid(fabric_xfs_mounts):
    assert fabric_xfs_mounts([probe('/mnt/pool', fixture('blkid', 'xfs.txt'))]) == [
        {'path': '/mnt/pool', 'src': 'UUID=7818b878-0184-4568-8611-eced46e00bc0', 'opts': '_netdev,nofail,ro'}]


def test_no_filesystem_is_an_error(fabric_xfs_mounts):
    with pytest.raises(AnsibleFilterError, match=r'/mnt/pool \(/dev/nvme1n1\) has no filesystem UUID'):
        fabric_xfs_mounts([probe('/mnt/pool', fixture('blkid', 'nvme0n1_fresh.txt'))])


def test_not_registered_results(fabric_xfs_mounts):
    with pytest.raises(AnsibleFilterError, match='expects registered loop results'):
        fabric_xfs_mounts(['/mnt/pool'])


def test_nothing_to_mount(fabric_xfs_mounts):
    assert fabric_xfs_mounts([]) == []
