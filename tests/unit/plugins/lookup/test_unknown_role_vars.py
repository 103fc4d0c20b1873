# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import os

import pytest

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import lookup_loader

from ansible_collections.inferops.node.plugins.lookup import unknown_role_vars as plugin
from ansible_collections.inferops.node.plugins.plugin_utils import role_specs

ROLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles')


def lookup(terms, variables, **kwargs):
    return lookup_loader.get('inferops.node.unknown_role_vars').run(terms, variables, **kwargs)


def test_every_role_spec_is_read():
    # The collection's own argument_specs: every role has options, all with the role's prefix.
    for role in sorted(os.listdir(ROLES)):
        options = role_specs.role_options(os.path.join(ROLES, role))
        assert options, role
        assert all(name.startswith(role + '_') for name in options), (role, options)


def test_misspelt_variable_is_named_with_suggestions():
    variables = {'role_path': os.path.join(ROLES, 'kernel_tuning'), 'kernel_tuning_sysctl': {'vm.swappiness': 1},
                 'kernel_tuning_profile': 'inference', 'inventory_hostname': 'node1'}
    messages = lookup(['kernel_tuning'], variables)
    assert len(messages) == 1
    assert messages[0].startswith('kernel_tuning_sysctl is not a variable of role kernel_tuning (did you mean ')
    assert messages[0].count('kernel_tuning_sysctl_') == 3 and 'profile' not in messages[0]


def test_known_options_outputs_and_other_prefixes_pass():
    variables = {'role_path': os.path.join(ROLES, 'md_raid_xfs'), 'md_raid_xfs_arrays': [], 'md_raid_xfs_force': True,
                 'md_raid_xfs_report': [], '__md_raid_xfs_probe': {}, 'nvme_sched_scheduler': 'none',
                 'md_raid_xfs_readahead': 1}
    assert lookup(['md_raid_xfs'], variables, outputs=['md_raid_xfs_report']) == [
        'md_raid_xfs_readahead is not a variable of role md_raid_xfs (did you mean md_raid_xfs_readahead_rules_file?)']


def test_outputs_are_never_suggested():
    messages = plugin.unknown('warmup', ['warmup_results'], ['warmup_qps'], ['warmup_result'])
    assert messages == ['warmup_results is not a variable of role warmup (if it is your own, list it in inferops_allowed_extra_vars)']


def test_inventory_can_allow_its_own_variables():
    variables = {'role_path': os.path.join(ROLES, 'triton_compose'), 'triton_compose_image_tag': '24.08-py3',
                 'inferops_allowed_extra_vars': ['triton_compose_image_tag']}
    assert lookup(['triton_compose'], variables) == []
    with pytest.raises(AnsibleLookupError, match='inferops_allowed_extra_vars = .*must be a list'):
        lookup(['triton_compose'], dict(variables, inferops_allowed_extra_vars='triton_compose_image_tag'))


def test_unreadable_spec_and_missing_role_path(tmp_path):
    with pytest.raises(AnsibleLookupError, match='cannot read'):
        lookup(['x'], {'role_path': str(tmp_path)})
    with pytest.raises(AnsibleLookupError, match='no role_path'):
        lookup(['x'], {})
