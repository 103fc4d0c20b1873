# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters mount_options_errors / mount_options_missing (the role's validation on the controller)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.mount_options import FilterModule


@pytest.fixture
def filters():
    return FilterModule().filters()


def test_errors_name_variable_value_and_fix(filters):
    errors = filters['mount_options_errors']('noatime,,x', 'md_raid_xfs_mount_opts')
    assert errors == [
        'md_raid_xfs_mount_opts = "noatime,,x": empty item (leading, trailing or doubled comma) in '
        "'noatime,,x'; remove the extra comma",
        'md_raid_xfs_mount_opts = "noatime,,x": x: unknown option (neither XFS, the VFS, mount(8) nor systemd '
        'know it); check the spelling or remove it',
    ]


def test_valid_is_empty(filters):
    assert filters['mount_options_errors']('noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k') == []


def test_not_a_string(filters):
    errors = filters['mount_options_errors'](['noatime'], 'md_raid_xfs_arrays[0] (models).mount_opts')
    assert errors == ["md_raid_xfs_arrays[0] (models).mount_opts = ['noatime']: must be a string of comma-separated "
                      "options, got ['noatime']"]


def test_missing(filters):
    assert filters['mount_options_missing']('noatime,logbufs=8', 'rw,relatime') == {
        'missing': ['noatime', 'logbufs=8'], 'remount': ['noatime'], 'pending': ['logbufs=8']}
    assert filters['mount_options_missing']('noatime', None)['missing'] == ['noatime']
    with pytest.raises(AnsibleFilterError):
        filters['mount_options_missing'](None, [])
