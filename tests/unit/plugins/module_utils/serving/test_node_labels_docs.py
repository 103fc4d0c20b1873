# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/k8s_node_labels.md against the code and the example inventory.

The page's feature file is what the rule labels a compute node of inventories/nvmeof_pool with when
every check passes (the hash included), and its serving Deployment's node affinity selects that node and
no node whose fabric check failed. kubectl's client does not type-check a Deployment offline (``--local``
accepts ``values: nvmeof`` for a list), so the affinity is evaluated here, as the scheduler's
``In`` / ``NotIn`` / ``Exists`` / ``DoesNotExist`` do.
"""

from __future__ import annotations

import os
import re

import jinja2
import yaml

from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels as nl

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')
DROPIN = '/etc/sysctl.d/90-inferops-kernel-tuning.conf'


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as handle:
        return handle.read()


def pool_worker_expect():
    """k8s_workers' group_vars of inventories/nvmeof_pool, templated with the inventory's own values."""
    inventory = 'inventories', 'nvmeof_pool'
    context = dict(yaml.safe_load(read(*inventory + ('hosts.yml',)))['all']['vars'])
    context.update(yaml.safe_load(read(*inventory + ('group_vars', 'nvmeof_initiators.yml'))))
    workers = yaml.safe_load(read(*inventory + ('group_vars', 'k8s_workers.yml')))

    def render(value):
        if isinstance(value, str):
            return jinja2.Environment().from_string(value).render(**context)
        if isinstance(value, list):
            return [render(item) for item in value]
        if isinstance(value, dict):
            return dict((key, render(item)) for key, item in value.items())
        return value

    workers = render(workers)
    profile = yaml.safe_load(read('roles', 'kernel_tuning', 'vars', 'main.yml'))['__kernel_tuning_profiles'][
        workers['k8s_node_labels_tuning_profile']]
    settings = dict(profile, **{'vm.nr_hugepages': context['kernel_tuning_nr_hugepages']})
    expect = {'prefix': nl.DEFAULT_PREFIX, 'nvmeof_connections': workers['k8s_node_labels_nvmeof_connections'],
              'nvmeof_read_ahead_kb': int(workers['k8s_node_labels_nvmeof_read_ahead_kb']),
              'tuning_profile': workers['k8s_node_labels_tuning_profile'], 'sysctl_file': DROPIN}
    return expect, settings


def node(expect, settings, fabric_up=True):
    """The labels the rule gives a worker whose drop-in is live, its fabric connected or not."""
    conn = expect['nvmeof_connections'][0]
    nvme = {'controllers': [{'name': 'nvme1', 'subsysnqn': conn['subnqn'], 'transport': conn['transport'],
                             'state': 'live' if fabric_up else 'connecting', 'namespaces': ['nvme1n1']}],
            'namespaces': [{'name': 'nvme1n1', 'queue': {'read_ahead_kb': expect['nvmeof_read_ahead_kb']}}]}
    sysctl = {'files': [{'path': DROPIN, 'readable': True, 'settings': settings}],
              'parameters': dict((key, str(value)) for key, value in settings.items()),
              'set_by': dict((key, {'file': DROPIN}) for key in settings)}
    the_plan = nl.plan(expect, nvme, sysctl)
    assert the_plan['errors'] == []
    return the_plan['labels']


def blocks(kind):
    return re.findall(r'```%s\n(.*?)```' % kind, read('docs', 'k8s_node_labels.md'), re.S)


def matches(expression, labels):
    key, operator, values = expression['key'], expression['operator'], expression.get('values') or []
    assert isinstance(values, list)
    return {'In': key in labels and labels.get(key) in values,
            'NotIn': labels.get(key) not in values,
            'Exists': key in labels,
            'DoesNotExist': key not in labels}[operator]


def test_the_pages_feature_file_is_what_a_pool_worker_gets():
    expect, settings = pool_worker_expect()
    shown = [block for block in blocks('') if nl.EXPIRY_DIRECTIVE in block]
    assert len(shown) == 1
    assert nl.parse(shown[0])['labels'] == node(expect, settings)
    # The hash the page quotes (twice) is that of the inventory's profile.
    assert read('docs', 'k8s_node_labels.md').count(nl.profile_hash(settings)) == 2


def test_the_example_deployment_lands_on_a_verified_worker_only():
    expect, settings = pool_worker_expect()
    deployment = [yaml.safe_load(block) for block in blocks('yaml') if 'kind: Deployment' in block]
    assert len(deployment) == 1
    affinity = deployment[0]['spec']['template']['spec']['affinity']['nodeAffinity']
    terms = affinity['requiredDuringSchedulingIgnoredDuringExecution']['nodeSelectorTerms']
    preferred = [entry['preference'] for entry in affinity['preferredDuringSchedulingIgnoredDuringExecution']]

    def eligible(labels):
        return any(all(matches(expression, labels) for expression in term['matchExpressions']) for term in terms)

    verified = node(expect, settings)
    assert eligible(verified)
    assert all(all(matches(expression, verified) for expression in term['matchExpressions']) for term in preferred)
    assert not eligible(node(expect, settings, fabric_up=False))  # storage-profile withheld
    assert not eligible({})                                         # labels lapsed
    # Every key the manifest selects on is one the role publishes.
    keys = set(expression['key'] for term in terms + preferred for expression in term['matchExpressions'])
    assert keys <= set(verified)
