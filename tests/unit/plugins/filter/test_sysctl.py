# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter sysctl_plan (kernel_tuning's validation and drift on the controller)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.sysctl import FilterModule


@pytest.fixture
def sysctl_plan():
    return FilterModule().filters()['sysctl_plan']


def test_plan(sysctl_plan):
    result = sysctl_plan([{'name': 'v', 'keyed': True, 'settings': {'vm.swappiness': 'on'}}],
                         {'parameters': {'vm.swappiness': '60'}, 'unreadable': []})
    assert result['errors'] == ["v['vm.swappiness'] = \"on\": boolean values are refused; write the value the "
                                "kernel expects (e.g. 0 or 1)"]


@pytest.mark.parametrize('args, message', [
    (({'vm.swappiness': 1},), 'the input must be a list of layers'),
    (([{'settings': {}}],), 'the input must be a list of layers'),
    (([], {'stdout': ''}), 'info must be the result of inferops.node.sysctl_info'),
    (([], None, 'sometimes'), 'thp must be one of always, madvise, never or null'),
])
def test_bad_arguments(sysctl_plan, args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        sysctl_plan(*args)
