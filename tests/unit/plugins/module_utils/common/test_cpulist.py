# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import cpulist
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import fixture

PARSE = [
    ('0', [0]),
    ('0-3', [0, 1, 2, 3]),
    ('0-3,8,10-11', [0, 1, 2, 3, 8, 10, 11]),
    ('10-11,0-3,8', [0, 1, 2, 3, 8, 10, 11]),
    ('0-2,1-3', [0, 1, 2, 3]),
    (' 1 , 3 ', [1, 3]),
    ('', []),
    ('\n', []),
    ('0-15:2/4', [0, 1, 4, 5, 8, 9, 12, 13]),
    ('0-7:1/2', [0, 2, 4, 6]),
]

BAD = ['abc', '0-', '-1', '3-1', '1,,2', '0-3:0/4', '0-3:5/4', '0x3', '1.5', '9000', '0-9000']

COMPACT = [
    ([], ''),
    ([0], '0'),
    ([0, 1, 2, 3, 8, 10, 11], '0-3,8,10-11'),
    ([11, 10, 8, 3, 2, 1, 0, 0], '0-3,8,10-11'),
    ([1, 3, 5], '1,3,5'),
    (list(range(64)), '0-63'),
]

MASK = [
    ([0, 1, 2, 3, 8, 9, 10, 11], None, '00000f0f'),
    ([0, 1, 2, 3, 8, 9, 10, 11], 64, '00000000,00000f0f'),
    ([0, 1, 2, 3, 8, 10, 11], None, '00000d0f'),
    ([], None, '00000000'),
    ([], 96, '00000000,00000000,00000000'),
    ([32], None, '00000001,00000000'),
    ([31, 63], None, '80000000,80000000'),
    ([1], 2, '2'),
    ([0, 1], 2, '3'),
    (list(range(40)), 40, 'ff,ffffffff'),
    ([0], 33, '0,00000001'),
    ([5], 32, '00000020'),
]


@pytest.mark.parametrize('text, expected', PARSE)
def test_parse_cpulist(text, expected):
    assert cpulist.parse_cpulist(text) == expected


@pytest.mark.parametrize('text', BAD)
def test_parse_cpulist_rejects_and_names_value(text):
    with pytest.raises(cpulist.CpuListError) as err:
        cpulist.parse_cpulist(text)
    assert repr(text) in str(err.value)


@pytest.mark.parametrize('cpus, expected', COMPACT)
def test_format_cpulist(cpus, expected):
    assert cpulist.format_cpulist(cpus) == expected


@pytest.mark.parametrize('cpus, nr_cpus, expected', MASK)
def test_cpulist_to_mask(cpus, nr_cpus, expected):
    assert cpulist.cpulist_to_mask(cpus, nr_cpus) == expected
    assert cpulist.mask_to_cpus(expected) == sorted(cpus)


def test_mask_too_small_for_cpu():
    with pytest.raises(cpulist.CpuListError, match='nr_cpus=32'):
        cpulist.cpulist_to_mask([40], 32)


@pytest.mark.parametrize('mask, expected', [
    ('f', [0, 1, 2, 3]),
    ('0x3', [0, 1]),
    ('00000001,00000000', [32]),
    ('1,0', [32]),
    ('0000000000000101', [0, 8]),
    ('00000000', []),
])
def test_mask_to_cpus(mask, expected):
    assert cpulist.mask_to_cpus(mask) == expected


@pytest.mark.parametrize('mask', ['', 'xyz', '1,,0', '123456789,0', 'f g', 5, None])
def test_mask_to_cpus_rejects(mask):
    with pytest.raises(cpulist.CpuListError) as err:
        cpulist.mask_to_cpus(mask)
    assert repr(mask) in str(err.value)


@pytest.mark.parametrize('value, expected', [
    ('0-2', [0, 1, 2]), (3, [3]), ([3, 1, '5-6'], [1, 3, 5, 6]), ((), []),
])
def test_to_cpus(value, expected):
    assert cpulist.to_cpus(value) == expected


@pytest.mark.parametrize('value', [True, -1, [1, -2], [1.5], ['x'], {'a': 1}, 2.0])
def test_to_cpus_rejects(value):
    with pytest.raises(cpulist.CpuListError):
        cpulist.to_cpus(value)


def test_recorded_smp_affinity_pairs_agree():
    """Every IRQ of the recorded guest: smp_affinity (mask) and smp_affinity_list describe the same CPUs."""
    snapshot = json.loads(fixture('sysfs', 'fresh.json'))['files']
    pairs = 0
    for path, mask in snapshot.items():
        if not path.endswith('/smp_affinity') and not path.endswith('/effective_affinity'):
            continue
        listed = snapshot.get(path + '_list')
        if listed is None:
            continue
        assert cpulist.mask_to_cpus(mask.strip()) == cpulist.parse_cpulist(listed), path
        assert cpulist.cpulist_to_mask(cpulist.parse_cpulist(listed), nr_cpus=2) == mask.strip(), path
        pairs += 1
    assert pairs > 40
    assert cpulist.parse_cpulist(snapshot['/sys/devices/system/cpu/online']) == [0, 1]
