# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Storage benchmark filter: the baseline gate, the rule of module_utils/storage/storage_benchmark.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.storage.storage_benchmark import gate_errors


def storage_benchmark_gate_errors(current, baseline, tolerance_percent=10, host='',
                                  variable='storage_benchmark_baseline'):
    """Figures of this run below the baseline's by more than the tolerance, one message each."""
    return gate_errors(current, baseline, tolerance_percent, host=host, variable=variable)


class FilterModule(object):
    """Storage benchmark filters."""

    def filters(self):
        return {'storage_benchmark_gate_errors': storage_benchmark_gate_errors}
