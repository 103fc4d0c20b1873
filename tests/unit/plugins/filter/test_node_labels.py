# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""k8s_node_labels_errors / k8s_node_labels_plan: the controller's way in to module_utils/serving/node_labels.py
(the checks themselves are tested on recorded info results in module_utils/serving/test_node_labels.py)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.node_labels import FilterModule

FILTERS = FilterModule().filters()
POOL = 'nqn.2026-09.internal.ai:lab-pool'


def test_errors_name_the_role_variables():
    errors = FILTERS['k8s_node_labels_errors']({'prefix': 'x.k8s.io', 'expiry_hours': 24, 'refresh_hours': 0})
    assert errors == [
        'k8s_node_labels_refresh_hours = 0: must be a whole number of hours between 1 and '
        'k8s_node_labels_expiry_hours (24)',
        'k8s_node_labels_prefix = "x.k8s.io": nfd-master never publishes labels in k8s.io or its sub-namespaces '
        '(except feature.node.kubernetes.io and profile.node.kubernetes.io and theirs); use e.g. '
        'inferops.feature.node.kubernetes.io',
    ]
    assert FILTERS['k8s_node_labels_errors']({'nvmeof_connections': [{'subnqn': POOL, 'transport': 'tcp'}]}) == []


def test_plan_without_reads_labels_nothing():
    plan = FILTERS['k8s_node_labels_plan']({'nvmeof_connections': [{'subnqn': POOL, 'transport': 'tcp'}]})
    assert plan['labels'] == {} and plan['failed'] == ['nvmeof_connected', 'storage_profile']


def test_plan_takes_the_triton_info_result_fourth():
    settings = {'triton_endpoints': ['http://127.0.0.1:8000']}
    read = {'endpoints': [{'url': 'http://127.0.0.1:8000', 'reachable': True, 'live': True, 'ready': True,
                           'models': [], 'index': [], 'errors': []}]}
    assert FILTERS['k8s_node_labels_plan'](settings, None, None, read)['failed'] == []
    assert FILTERS['k8s_node_labels_plan'](settings, None, read)['failed'] == ['triton_ready']


def test_plan_with_bad_settings_has_only_errors():
    plan = FILTERS['k8s_node_labels_plan']({'prefix': 'Bad'}, {'controllers': []})
    assert plan['checks'] == [] and plan['labels'] == {} and len(plan['errors']) == 1


def test_not_a_mapping():
    with pytest.raises(AnsibleFilterError, match='must be a mapping'):
        FILTERS['k8s_node_labels_plan'](['x'])
