# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter import cpulist as flt

FILTERS = flt.FilterModule().filters()

CASES = [
    ('cpulist_to_mask', ('0-3,8,10-11',), {}, '00000d0f'),
    ('cpulist_to_mask', ('0-3,8-11', 64), {}, '00000000,00000f0f'),
    ('cpulist_to_mask', ('0-3,8-11',), {'nr_cpus': '64'}, '00000000,00000f0f'),
    ('cpulist_to_mask', ([0, 1],), {'nr_cpus': 2}, '3'),
    ('cpulist_to_mask', (33,), {}, '00000002,00000000'),
    ('mask_to_cpulist', ('00000000,00000f0f',), {}, '0-3,8-11'),
    ('mask_to_cpulist', ('3',), {}, '0-1'),
    ('mask_to_cpulist', ('0x0',), {}, ''),
    ('cpulist_expand', ('0-3,8',), {}, [0, 1, 2, 3, 8]),
    ('cpulist_expand', ('',), {}, []),
    ('cpulist_expand', ([5, '1-2'],), {}, [1, 2, 5]),
    ('cpulist_compact', ([3, 0, 1, 2, 8, 10, 11],), {}, '0-3,8,10-11'),
    ('cpulist_compact', ('8,0-2,2-3',), {}, '0-3,8'),
    ('cpulist_compact', ([],), {}, ''),
    ('cpulist_contains', ('0-3', 2), {}, True),
    ('cpulist_contains', ('0-3', '2-4'), {}, False),
    ('cpulist_contains', ('0-15', [0, 7, 15]), {}, True),
    ('cpulist_contains', ('0-3', ''), {}, True),
    ('cpulist_overlaps', ('0-1', '2-15'), {}, False),
    ('cpulist_overlaps', ('0-2', '2-15'), {}, True),
    ('cpulist_overlaps', ([4], '0-3,4'), {}, True),
]

ERRORS = [
    ('cpulist_to_mask', ('0-x',), {}, "'0-x'"),
    ('cpulist_to_mask', ('0-3', 'many'), {}, "'many'"),
    ('cpulist_to_mask', ('0-40', 32), {}, 'nr_cpus=32'),
    ('mask_to_cpulist', ('zz,00',), {}, "'zz,00'"),
    ('mask_to_cpulist', (15,), {}, '15'),
    ('cpulist_expand', ('1-',), {}, "'1-'"),
    ('cpulist_expand', (None,), {}, 'None'),
    ('cpulist_compact', ([1, 'a'],), {}, "'a'"),
    ('cpulist_contains', ('0-3', 'two'), {}, "'two'"),
    ('cpulist_overlaps', ('5-1', '0'), {}, "'5-1'"),
]


@pytest.mark.parametrize('name, args, kwargs, expected', CASES)
def test_filter(name, args, kwargs, expected):
    assert FILTERS[name](*args, **kwargs) == expected


@pytest.mark.parametrize('name, args, kwargs, needle', ERRORS)
def test_filter_error_names_value(name, args, kwargs, needle):
    with pytest.raises(AnsibleFilterError) as err:
        FILTERS[name](*args, **kwargs)
    assert needle in str(err.value)
    assert name in str(err.value)


def test_round_trip():
    for text in ('0', '0-63', '1,3,5-7,40-47', '127'):
        mask = FILTERS['cpulist_to_mask'](text)
        assert FILTERS['mask_to_cpulist'](mask) == FILTERS['cpulist_compact'](text)
