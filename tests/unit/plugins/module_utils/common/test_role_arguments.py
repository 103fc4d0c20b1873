# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role variables against the roles' own argument specs (the files in roles/*/meta)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.common.role_arguments import argument_errors, is_boolean

ROLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'roles')


def options(role):
    with open(os.path.join(ROLES, role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']['main']['options']


MODELS = {'name': 'models', 'level': '0', 'devices': ['/dev/nvme0n1', '/dev/nvme1n1'], 'mount': '/data/models'}


@pytest.mark.parametrize('value', [True, False, 'true', 'false', 'True', 'yes', 'no', 'on', 'off', '1', '0', 1, 0, 'y', 'n'])
def test_booleans_as_ansible_converts_them(value):
    assert is_boolean(value)
    assert argument_errors(options('md_raid_xfs'), {'md_raid_xfs_force': value}) == []


@pytest.mark.parametrize('value', ['maybe', 2, '', None, [], 'enable'])
def test_not_booleans(value):
    assert not is_boolean(value)


def test_bad_boolean_names_the_variable():
    errors = argument_errors(options('md_raid_xfs'), {'md_raid_xfs_force': 'maybe'})
    assert len(errors) == 1 and "'md_raid_xfs_force'" in errors[0] and 'maybe' in errors[0]


def test_entry_of_a_list_is_named_by_index_and_name():
    arrays = [MODELS, dict(MODELS, name='index', level=5)]
    errors = argument_errors(options('md_raid_xfs'), {'md_raid_xfs_arrays': arrays})
    assert errors == ['md_raid_xfs_arrays[1] (name=index): value of level must be one of: 0, 1, 10, got: 5']


def test_an_unknown_key_of_an_entry_is_reported_once_with_the_entry_named():
    arrays = [MODELS, {'name': 'index', 'level': '1', 'devices': ['/dev/nvme2n1', '/dev/nvme3n1'],
                       'mountpoint': '/data/index'}]
    errors = argument_errors(options('md_raid_xfs'), {'md_raid_xfs_arrays': arrays})
    assert len(errors) == 1
    assert errors[0].startswith('md_raid_xfs_arrays[1] (name=index): mountpoint. Supported parameters include: ')


def test_connection_entries_are_named_by_address():
    connections = [{'transport': 'infiniband', 'traddr': '10.0.0.1', 'subnqn': 'nqn.2026-09.internal.ai:pool'}]
    errors = argument_errors(options('nvmeof_initiator'), {'nvmeof_initiator_connections': connections})
    assert errors == ['nvmeof_initiator_connections[0] (traddr=10.0.0.1): value of transport must be one of: '
                      'tcp, rdma, fc, got: infiniband']


def test_every_problem_is_reported_once():
    errors = argument_errors(options('nvme_sched'), {'nvme_sched_read_ahead_kb': 'lots', 'nvme_sched_verify': 'perhaps'})
    assert len(errors) == 2
    assert any("'nvme_sched_read_ahead_kb' is of type" in e for e in errors)
    assert any("'nvme_sched_verify'" in e for e in errors)


def test_required_options_left_to_defaults_are_not_errors():
    assert argument_errors(options('md_raid_xfs'), {}) == []
    assert argument_errors(options('md_raid_xfs'), {'md_raid_xfs_arrays': [MODELS]}) == []


def test_a_list_that_is_not_a_list_is_one_message():
    errors = argument_errors(options('md_raid_xfs'), {'md_raid_xfs_arrays': 'models'})
    assert len(errors) == 1 and 'md_raid_xfs_arrays' in errors[0]
