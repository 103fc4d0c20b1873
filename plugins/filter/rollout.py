# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet rollout filters: the wave plan, the record after each wave and the verify gates, the rule of
module_utils/fleet/rollout.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.fleet import rollout

OUTCOME_VAR = '__inferops_rollout_outcome'


def _host_vars(hostvars, host):
    """A host's variables from Ansible's hostvars (or a plain dict in tests); {} when unknown."""
    try:
        own = hostvars[host]
    except (KeyError, TypeError):
        return {}
    return own if isinstance(own, Mapping) else {}


def rollout_plan(fleet, values, hostvars=None, groups=None, state_text=None, sites=None, run_tags=None, skip_tags=None):
    """The wave plan of a fleet; ``errors`` names variable, value and fix (empty when the plan is usable)."""
    if not isinstance(fleet, (list, tuple)):
        raise AnsibleFilterError('rollout_plan: the fleet must be a list of host names, got %r' % (fleet,))
    if not isinstance(values, Mapping):
        raise AnsibleFilterError('rollout_plan: the settings must be a dict of inferops_rollout_* variables, got %r'
                                 % (values,))
    hosts = {str(host): _host_vars(hostvars, host) for host in fleet} if hostvars is not None else {}
    return rollout.plan(list(fleet), dict(values), hostvars=hosts, groups=dict(groups or {}), state_text=state_text,
                        sites=None if sites is None else dict(sites), run_tags=run_tags, skip_tags=skip_tags)


def rollout_record(plan, wave, hostvars):
    """{state, halt, message, passed, failed} after a wave, from each wave host's recorded outcome."""
    if not isinstance(plan, Mapping) or 'waves' not in plan or plan.get('errors'):
        raise AnsibleFilterError('rollout_record: the input must be a usable result of rollout_plan')
    try:
        number = int(wave)
    except (TypeError, ValueError):
        raise AnsibleFilterError('rollout_record: wave must be a wave index, got %r' % (wave,))
    if not 0 <= number < len(plan['waves']):
        raise AnsibleFilterError('rollout_record: wave %d is not a wave of the plan (0-%d)'
                                 % (number, len(plan['waves']) - 1))
    outcomes = {host: _host_vars(hostvars, host).get(OUTCOME_VAR) for host in plan['waves'][number]['hosts']}
    return rollout.record(plan, number, outcomes)


def rollout_audit_errors(results, severities=None, reads=None):
    """The verify gate: the node audit's FAIL results of the gated severities and its failed reads."""
    if not isinstance(results, (list, tuple)):
        raise AnsibleFilterError('rollout_audit_errors: the input must be the results list of audit_host, got %r'
                                 % (results,))
    if reads is not None and not isinstance(reads, Mapping):
        raise AnsibleFilterError('rollout_audit_errors: reads must be a dict of info module results, got %r'
                                 % (reads,))
    gated = severities if severities is not None else rollout.DEFAULTS['inferops_rollout_audit_severities']
    return rollout.audit_gate_errors(list(results), list(gated), dict(reads or {}))


def rollout_warmup_errors(warmup, bound=None):
    """The verify gate: each endpoint and model whose warm-up P99 (warmup_result) is above the bound."""
    if warmup is not None and not isinstance(warmup, Mapping):
        raise AnsibleFilterError('rollout_warmup_errors: the input must be the warmup role\'s warmup_result (or '
                                 'triton_warmup\'s result), got %r' % (warmup,))
    raw = rollout.DEFAULTS['inferops_rollout_warmup_p99_ms'] if bound is None else bound
    normalised, problems = rollout.warmup_bound(_plain(raw))
    if problems:
        raise AnsibleFilterError('rollout_warmup_errors: %s' % '; '.join(problems))
    return rollout.warmup_gate_errors(None if warmup is None else _plain(warmup), normalised)


def _plain(value):
    """Nested Mappings as dicts (Ansible hands the filter its own mapping types)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


class FilterModule(object):
    """Fleet rollout filters."""

    def filters(self):
        return {
            'rollout_plan': rollout_plan,
            'rollout_record': rollout_record,
            'rollout_audit_errors': rollout_audit_errors,
            'rollout_warmup_errors': rollout_warmup_errors,
        }
