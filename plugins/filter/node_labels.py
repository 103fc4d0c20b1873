# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes node labels from what was verified: the rule of module_utils/serving/node_labels.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels


def _expect(value):
    if not isinstance(value, dict):
        raise AnsibleFilterError('k8s_node_labels: the input must be a mapping of the role settings, got %r' % (value,))
    return value


def k8s_node_labels_errors(value, name='k8s_node_labels'):
    """Problems of the role's settings, each naming the variable, the value and the fix (empty = valid)."""
    return node_labels.expect_errors(_expect(value), name)


def k8s_node_labels_plan(value, nvme=None, sysctl=None, triton=None):
    """{checks, labels, failed, errors}: the labels of the checks that passed on nvme_info / sysctl_info /
    triton_info results."""
    return node_labels.plan(_expect(value), nvme, sysctl, triton)


class FilterModule(object):
    """Kubernetes node label filters."""

    def filters(self):
        return {
            'k8s_node_labels_errors': k8s_node_labels_errors,
            'k8s_node_labels_plan': k8s_node_labels_plan,
        }
