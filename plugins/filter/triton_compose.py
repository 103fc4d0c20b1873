# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Triton filters: the triton_compose role's plan (module_utils/serving/triton_compose.py), the error lines of a
server log (module_utils/serving/triton_probe.py) and the warmup role's time limit of its async warm-up job
(module_utils/serving/triton_v2.py).

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.serving.triton_compose import plan
from ansible_collections.inferops.node.plugins.module_utils.serving.triton_probe import server_errors
from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import warmup_time_limit


def triton_compose_plan(params):
    """Instances, errors, compose definition and endpoints of the role's variables (see module_utils)."""
    if not isinstance(params, dict):
        raise AnsibleFilterError('triton_compose_plan: the input must be a mapping of triton_compose_* variables, '
                                 'got %r' % (params,))
    return plan(params)


def triton_server_errors(log, limit=20):
    """The error lines of a tritonserver log, or of docker compose logs of its services (see module_utils)."""
    if not isinstance(log, str):
        raise AnsibleFilterError('triton_server_errors: the input must be the log text, got %r' % (type(log).__name__,))
    return server_errors(log, int(limit))


def triton_warmup_time_limit(endpoints, ready_timeout, models, duration):
    """Seconds an async triton_warmup job may run (see module_utils/serving/triton_v2.warmup_time_limit)."""
    try:
        return warmup_time_limit(endpoints, ready_timeout, models, duration)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('triton_warmup_time_limit: %s' % exc)


class FilterModule(object):
    """Triton compose filters."""

    def filters(self):
        return {
            'triton_compose_plan': triton_compose_plan,
            'triton_server_errors': triton_server_errors,
            'triton_warmup_time_limit': triton_warmup_time_limit,
        }
