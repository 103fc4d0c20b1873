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


def test_warmup_time_limit_per_endpoint_and_model():
    """The warmup role's async limit: per endpoint readiness + 60 s, per model duration + 60 s (ceil)."""
    from ansible_collections.inferops.node.plugins.filter.triton_compose import triton_warmup_time_limit
    assert triton_warmup_time_limit(2, 600, 3, 30) == 2 * (600 + 60 + 3 * 90)
    # No model counted (the repository could not be listed) still allows one; a fractional duration rounds up.
    assert triton_warmup_time_limit(1, 180, 0, 2.5) == 180 + 60 + 63
    with pytest.raises(AnsibleFilterError):
        triton_warmup_time_limit(1, 'soon', 1, 2)
