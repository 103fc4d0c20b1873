# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleLookupError
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import lookup_loader
from ansible.template import Templar

from ansible_collections.inferops.node.plugins.plugin_utils import role_specs

try:  # ansible-core 2.19+: only a string loaded from a file (trusted) is a template
    from ansible.template import trust_as_template
except ImportError:  # 2.17, 2.18: every string is
    def trust_as_template(value):
        return value

ROLES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles')


def defaults(role):
    path = os.path.join(ROLES, role, 'defaults', 'main.yml')
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def lookup(terms, variables, **kwargs):
    return lookup_loader.get('inferops.node.role_settings', loader=DataLoader()).run(terms, variables, **kwargs)


def template(expression, variables):
    """As a role's vars/main.yml does it: the lookup inside a template, with the host's variables."""
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expression))


@pytest.mark.parametrize('role', sorted(os.listdir(ROLES)))
def test_every_declared_variable_has_its_default(role):
    # The lookup refuses a declared variable without a value: a role's own tasks always have one (a required
    # one is the inventory's to give - the role's argument validation stops a run without it).
    options = role_specs.role_options(os.path.join(ROLES, role))
    missing = sorted(name for name, option in options.items() if name not in defaults(role) and not option.get('required'))
    assert missing == [], '%s declares %s in meta/argument_specs.yml without a default in defaults/main.yml' % (
        role, ', '.join(missing))


def test_the_role_defaults_come_back_by_name_and_the_inventory_wins():
    variables = dict(defaults('md_raid_xfs'), md_raid_xfs_force='yes', md_raid_xfs_check_policy='window')
    settings = lookup(['md_raid_xfs'], variables)[0]
    assert sorted(settings) == sorted(role_specs.role_options(os.path.join(ROLES, 'md_raid_xfs')))
    # A bool option given as Ansible's "yes" reaches the rules as a bool; the rest as given.
    assert settings['md_raid_xfs_force'] is True and settings['md_raid_xfs_check_policy'] == 'window'
    assert settings['md_raid_xfs_arrays'] == defaults('md_raid_xfs')['md_raid_xfs_arrays']


def test_values_are_templated_with_the_hosts_variables():
    variables = dict(defaults('nvme_sched'), site_rules='/etc/udev/rules.d/61-site.rules',
                     nvme_sched_rules_file=trust_as_template('{{ site_rules }}'),
                     nvme_sched_serials=[trust_as_template('{{ inventory_hostname }}-0')], inventory_hostname='node1')
    settings = template("{{ lookup('inferops.node.role_settings', 'nvme_sched', strip_prefix='nvme_sched_') }}",
                        variables)
    assert settings['rules_file'] == '/etc/udev/rules.d/61-site.rules'
    assert settings['serials'] == ['node1-0']
    assert sorted(settings) == sorted(name[len('nvme_sched_'):] for name in
                                      role_specs.role_options(os.path.join(ROLES, 'nvme_sched')))


def test_a_bool_ansible_does_not_accept_is_left_for_the_validation_to_name():
    settings = lookup(['nic_queues'], dict(defaults('nic_queues'), nic_queues_irqbalance_ban='maybe'),
                      strip_prefix='nic_queues_')[0]
    assert settings == {'interfaces': defaults('nic_queues')['nic_queues_interfaces'],
                        'cpu_groups': defaults('nic_queues')['nic_queues_cpu_groups'], 'irqbalance_ban': 'maybe'}


def test_a_declared_variable_without_a_value_and_an_unknown_role_are_named():
    variables = defaults('docker_engine')
    del variables['docker_engine_log_driver']
    with pytest.raises(AnsibleLookupError, match='docker_engine_log_driver: declared in docker_engine/meta/'
                                                 'argument_specs.yml but has no value'):
        lookup(['docker_engine'], variables)
    with pytest.raises(AnsibleLookupError, match='no role docker in this collection'):
        lookup(['docker'], {})
    with pytest.raises(AnsibleLookupError, match='give one role name'):
        lookup(['docker_engine', 'nvme_sched'], {})
