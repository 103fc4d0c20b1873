# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every int and float option of every role's argument spec, given as ``-e key=value`` gives it (a string),
passes the role's own rules as the number does: `-e k8s_node_labels_expiry_hours=2` was refused with "must be a
whole number of hours", `-e nvmeof_initiator_read_ahead_sectors=8192` crashed the rule comparing it.

A role whose rules are Python is run through them (RULES); a role whose numbers only Jinja or the modules'
argument specs check says so in JINJA_OR_MODULE, with where. A new int or float option of a role in neither
fails this test until it is placed."""

from __future__ import annotations

import copy
import glob
import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins.filter.nvme_fabrics import nvme_fabrics_errors
from ansible_collections.inferops.node.plugins.filter.nvmet import nvmet_target_errors
from ansible_collections.inferops.node.plugins.module_utils.health import node_health
from ansible_collections.inferops.node.plugins.module_utils.serving import docker_engine, node_labels, triton_compose, warmup_input
from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan, nvme_queue

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
POOL = 'nqn.2026-09.internal.ai:lab-pool'


def _without(prefix, params):
    return dict((key[len(prefix):], value) for key, value in params.items() if key.startswith(prefix))


RULES = {
    'docker_engine': docker_engine.input_errors,
    'k8s_node_labels': lambda p: node_labels.expect_errors(dict(
        _without('k8s_node_labels_', p), nvmeof_connections=[{'subnqn': POOL, 'transport': 'tcp'}])),
    'md_raid_xfs': md_raid_plan.input_errors,
    'node_health': node_health.errors,
    'nvme_sched': lambda p: nvme_queue.input_errors(p['nvme_sched_scheduler'], p['nvme_sched_read_ahead_kb'],
                                                    p['nvme_sched_nr_requests']),
    'nvmeof_initiator': lambda p: nvme_fabrics_errors([], settings=_without('nvmeof_initiator_', p)),
    'nvmeof_target': lambda p: nvmet_target_errors([], [], settings={'restore_timeout': p['nvmeof_target_restore_timeout']}),
    'triton_compose': triton_compose.errors,
    'warmup': lambda p: warmup_input.errors(dict((k, v) for k, v in p.items() if k.startswith('warmup_'))),
}
JINJA_OR_MODULE = {
    'kernel_tuning': 'kernel_tuning_nr_hugepages is a sysctl value, written as given (module_utils/kernel/sysctl.py)',
    'model_sync': "model_sync_connections: tasks/validate.yml, `| string is match('^[0-9]+$')`, and model_sync's int option",
    'storage_benchmark': "tasks/validate.yml `| string is match(...)` then `| float`; storage_benchmark's int options",
}
# A value for an option whose default is null.
EXAMPLES = {
    'kernel_tuning_nr_hugepages': 2, 'md_raid_xfs_speed_limit_min': 1000, 'md_raid_xfs_speed_limit_max': 200000,
    'nvme_sched_nr_requests': 64, 'nvmeof_initiator_nr_io_queues': 4, 'nvmeof_initiator_keep_alive_tmo': 5,
    'k8s_node_labels_nvmeof_read_ahead_kb': 4096, 'warmup_page_cache_workers': 4, 'warmup_traffic_timeout': 60,
    'md_raid_xfs_resync_speed_outside_window': 10000,
}
# What else an option needs set to be valid at all.
CONTEXT = {'md_raid_xfs_resync_speed_outside_window': {'md_raid_xfs_check_policy': 'window'}}


def number_options():
    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'meta', 'argument_specs.yml'))):
        role = path.split(os.sep)[-3]
        with open(path) as handle:
            options = yaml.safe_load(handle)['argument_specs']['main'].get('options') or {}
        for name, spec in sorted(options.items()):
            if spec.get('type') in ('int', 'float'):
                yield role, name


def defaults(role):
    path = os.path.join(ROOT, 'roles', role, 'defaults', 'main.yml')
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def test_there_are_number_options_and_each_role_is_placed():
    options = list(number_options())
    assert len(options) >= 30
    assert set(role for role, dummy in options) <= set(RULES) | set(JINJA_OR_MODULE)


@pytest.mark.parametrize('role, name', [o for o in number_options() if o[0] in RULES])
def test_a_number_given_as_a_string_passes_as_the_number_does(role, name):
    params = dict(defaults(role), **CONTEXT.get(name, {}))
    value = params.get(name) if params.get(name) is not None else EXAMPLES[name]
    as_number = RULES[role](dict(copy.deepcopy(params), **{name: value}))
    as_string = RULES[role](dict(copy.deepcopy(params), **{name: str(value)}))
    assert as_number == [] and as_string == [], (name, str(value))
