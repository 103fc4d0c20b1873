# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How validation messages show values, the same for every rule that used to be a Jinja template.

* ``shown(value)`` - the value as Ansible's ``to_json`` shows plain data (``"on"``, ``true``, ``[1]``),
  ``repr`` for what JSON cannot hold.
* ``text(value)`` - Jinja's ``string`` filter for plain data (``True``, ``5``).

Standard library only.
"""

from __future__ import annotations

import json

__all__ = ['shown', 'text']


def shown(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def text(value):
    return value if isinstance(value, str) else str(value)
