# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Numbers of role variables as Ansible's own conversion takes them.

A variable given with ``-e key=value`` reaches the roles as a string ("2"), and a role's argument spec
accepts it (Ansible converts it to check it, but hands the role the string); the rules in Python must
take it too, as they take every boolean Ansible takes.

* ``as_int(value)`` - ``value`` as an int when Ansible's ``int`` type takes it ("2", 2.0, "2.0"),
  otherwise ``value`` unchanged, so that a rule refusing it shows what was given. A boolean stays a
  boolean: Ansible's conversion would make ``true`` a 1.
* ``as_float(value)`` - the same for Ansible's ``float`` type.
"""

from __future__ import annotations

from ansible.module_utils.common.validation import check_type_float, check_type_int

__all__ = ['as_float', 'as_int']


def _converted(value, check):
    if isinstance(value, bool) or value is None:
        return value
    try:
        return check(value)
    except TypeError:
        return value


def as_int(value):
    return _converted(value, check_type_int)


def as_float(value):
    return _converted(value, check_type_float)
