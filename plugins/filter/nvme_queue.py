# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe request-queue filters: the rules of module_utils/storage/nvme_queue.py (scheduler, read-ahead - the rule
of blockdev_readahead -, nr_requests, model/serial selection) on the controller, for the nvme_sched role.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_queue


def _namespaces(nvme_info):
    if not isinstance(nvme_info, dict) or not isinstance(nvme_info.get('namespaces'), list):
        raise AnsibleFilterError('nvme_info must be the registered result of inferops.node.nvme_info')
    return nvme_info['namespaces']


def nvme_queue_errors(settings, nvme_info=None, prefix='nvme_sched'):
    """Problems of the queue settings alone, and with an nvme_info result against the host."""
    if not isinstance(settings, dict):
        raise AnsibleFilterError('nvme_queue_errors: settings must be a dict, got %r' % (settings,))
    errors = nvme_queue.input_errors(settings.get('scheduler'), settings.get('read_ahead_kb'), settings.get('nr_requests'),
                                     settings.get('models', []), settings.get('serials', []), settings.get('rules_file'),
                                     prefix=prefix)
    if nvme_info is not None and not errors:
        errors = nvme_queue.host_errors(_namespaces(nvme_info), settings.get('scheduler'), settings.get('models', []),
                                        settings.get('serials', []), prefix=prefix)
    return errors


def nvme_queue_select(nvme_info, models=None, serials=None):
    """The namespaces of an nvme_info result that the model/serial globs select (all when both are empty)."""
    return nvme_queue.select(_namespaces(nvme_info), models or [], serials or [])[0]


def nvme_queue_drift(namespaces, scheduler, read_ahead_kb, nr_requests=None):
    """The namespaces whose queue differs from the wanted values: [{name, text}]."""
    return nvme_queue.drift(namespaces, scheduler, read_ahead_kb, nr_requests)


class FilterModule(object):
    """NVMe request-queue filters."""

    def filters(self):
        return {
            'nvme_queue_errors': nvme_queue_errors,
            'nvme_queue_select': nvme_queue_select,
            'nvme_queue_drift': nvme_queue_drift,
        }
