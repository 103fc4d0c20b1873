# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""numbers.as_int / as_float take what Ansible's own int and float conversions take, and nothing else."""

from __future__ import annotations

import pytest

from ansible.module_utils.common.validation import check_type_float, check_type_int
from ansible_collections.inferops.node.plugins.module_utils.numbers import as_float, as_int

VALUES = [0, 2, -3, '2', ' 2 ', '-3', '2.0', 2.0, '2.5', 2.5, '1e3', '0x10', 'two', '', b'2', [2], {'a': 1}, '1_000']


def ansible(check, value):
    try:
        return check(value)
    except TypeError:
        return value


@pytest.mark.parametrize('value', VALUES)
def test_as_int_is_ansibles_int(value):
    assert as_int(value) == ansible(check_type_int, value)
    assert type(as_int(value)) is type(ansible(check_type_int, value))


@pytest.mark.parametrize('value', VALUES)
def test_as_float_is_ansibles_float(value):
    assert as_float(value) == ansible(check_type_float, value)


@pytest.mark.parametrize('value', [True, False, None])
def test_booleans_and_null_stay_as_they_are(value):
    assert as_int(value) is value and as_float(value) is value
