# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""numbers.as_int / as_float take what Ansible's own int and float conversions take, and nothing else."""

from __future__ import annotations

import pytest

from ansible.module_utils.common.validation import check_type_float, check_type_int
from ansible.module_utils.ansible_release import __version__ as ansible_core
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import as_float, as_int

VALUES = [0, 2, -3, '2', ' 2 ', '-3', '2.0', 2.0, '2.5', 2.5, '1e3', '0x10', 'two', '', b'2', [2], {'a': 1}, '1_000']
# ansible-core 2.19's int takes a whole decimal number too; 2.17 and 2.18 refuse these, so a role's argument spec
# refuses them there before any rule sees them: as_int takes them as 2.19 does.
WHOLE_DECIMALS = [('2.0', 2), (2.0, 2), ('1e3', 1000)]
OLD_INT = tuple(int(part) for part in ansible_core.split('.')[:2]) < (2, 19)


def ansible(check, value):
    try:
        return check(value)
    except TypeError:
        return value


@pytest.mark.parametrize('value', VALUES)
def test_as_int_is_ansibles_int(value):
    expected = ansible(check_type_int, value)
    if OLD_INT and expected is value:
        expected = next((whole for decimal, whole in WHOLE_DECIMALS if decimal == value and type(decimal) is type(value)),
                        value)
    assert as_int(value) == expected
    assert type(as_int(value)) is type(expected)


@pytest.mark.parametrize('value', VALUES)
def test_as_float_is_ansibles_float(value):
    assert as_float(value) == ansible(check_type_float, value)


@pytest.mark.parametrize('value', [True, False, None])
def test_booleans_and_null_stay_as_they_are(value):
    assert as_int(value) is value and as_float(value) is value
