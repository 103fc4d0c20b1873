# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""warmup filters: the rules on the role's variables (module_utils/serving/warmup_input.py).

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.serving.warmup_input import errors


def warmup_errors(params):
    """Problems of the warmup_* variables given, one message each (empty list = valid)."""
    if not isinstance(params, dict):
        raise AnsibleFilterError('warmup_errors: the input must be a dict of warmup_* variables, got %r' % (params,))
    return errors(params)


class FilterModule(object):
    """warmup filters."""

    def filters(self):
        return {'warmup_errors': warmup_errors}
