# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter triton_compose_plan (the triton_compose role's validation and rendering on the controller)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.triton_compose import FilterModule


def test_not_a_mapping():
    with pytest.raises(AnsibleFilterError, match='the input must be a mapping of triton_compose_\\* variables'):
        FilterModule().filters()['triton_compose_plan'](['triton_compose_image'])


def test_errors_are_returned():
    result = FilterModule().filters()['triton_compose_plan']({'triton_compose_instances': []})
    assert 'triton_compose_instances names = []: at least one instance, each with a unique name of letters, ' \
           "digits, '-' and '_'" in result['errors']
    assert result['definition'] is None
