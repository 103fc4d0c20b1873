# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Numbers of role variables as Ansible's own conversion takes them.

A variable given with ``-e key=value`` reaches the roles as a string ("2"), and a role's argument spec
accepts it (Ansible converts it to check it, but hands the role the string); the rules in Python must
take it too, as they take every boolean Ansible takes.

* ``as_int(value)`` - ``value`` as an int when Ansible's ``int`` type takes it ("2", 2.0, "2.0": what
  ``ansible.module_utils.common.validation.check_type_int`` takes), otherwise ``value`` unchanged, so that a
  rule refusing it shows what was given. A boolean stays a boolean: Ansible's conversion makes ``true`` a 1.
* ``as_float(value)`` - the same for Ansible's ``float`` type (``check_type_float``).
* ``whole_numbers(values, keys)`` - a copy of the mapping ``values`` with ``as_int`` applied to ``keys``.

Standard library only, with no import of Ansible: the boot helpers run the NVMe-oF rules (nvme_common.py) from
a zip application on hosts without Ansible. tests/unit/plugins/module_utils/common/test_numbers.py holds both to
Ansible's own functions.
"""

from __future__ import annotations

import decimal

__all__ = ['as_float', 'as_int', 'whole_numbers']


def as_int(value):
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    try:
        exact = decimal.Decimal(value)
        whole = int(exact)
    except (decimal.DecimalException, TypeError, ValueError, OverflowError):
        return value
    return whole if exact == whole else value


def as_float(value):
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def whole_numbers(values, keys):
    return dict((key, as_int(value) if key in keys else value) for key, value in values.items())
