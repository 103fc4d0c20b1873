# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The md_raid filters call the rules of module_utils/storage/md_raid_plan.py (tested in
tests/unit/plugins/module_utils/storage/test_md_raid_plan.py) and refuse what is not their input."""

from __future__ import annotations

import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter import md_raid as md_raid_filter
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.storage.test_md_raid_plan import settings

FILTERS = md_raid_filter.FilterModule().filters()


def test_filters_call_the_rules():
    assert FILTERS['md_raid_input_errors'](settings()) == []
    assert FILTERS['md_raid_input_errors'](settings(md_raid_xfs_check_duration='1 day')) == [
        'md_raid_xfs_check_duration = "1 day": must read "<n> minutes" or "<n> hours"']
    assert FILTERS['md_raid_want'](settings())[0]['mkfs_opts'] == '-d su=512k,sw=4'


@pytest.mark.parametrize('name, args, needle', [
    ('md_raid_input_errors', ([],), 'expects a mapping of the md_raid_xfs_* variables'),
    ('md_raid_want', ('x',), 'expects a mapping of the md_raid_xfs_* variables'),
    ('md_raid_host_errors', ({}, settings()), 'expects the result of inferops.node.md_info'),
    ('md_raid_plan', ({'arrays': {}}, 'x'), 'expects a mapping of the md_raid_xfs_* variables'),
    ('md_raid_filesystems', ({'failed': True}, settings()), 'expects the result of inferops.node.md_info'),
    ('md_raid_report', ('x', {'arrays': {}}), 'expects the list of md_raid_filesystems'),
])
def test_filters_refuse_wrong_input(name, args, needle):
    with pytest.raises(AnsibleFilterError, match=re.escape(needle)):
        FILTERS[name](*args)
