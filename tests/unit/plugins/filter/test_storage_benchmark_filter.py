# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter storage_benchmark_gate_errors (the role's gate on the controller) on stored run records."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.filter.storage_benchmark import FilterModule

GATE = FilterModule().filters()['storage_benchmark_gate_errors']


def record(**figures):
    """A run record as the role stores it (only the keys the gate reads, plus some it ignores)."""
    return {'record_version': 1, 'host': 'node1', 'profile': 'local_nvme', 'kernel': '6.1.0-57-amd64',
            'figures': dict(figures), 'benchmark': {'fio': []}}


def test_records_and_figures_both_accepted():
    base = record(**{'page_cache/mbps': 1000.0, 'fio/directory/direct/bs=1M/jobs=1,qd=32': 800.0})
    now = record(**{'page_cache/mbps': 950.0, 'fio/directory/direct/bs=1M/jobs=1,qd=32': 600.0})
    errors = GATE(now, base, 10, 'node1', 'storage_benchmark_baseline /var/lib/inferops/benchmarks/baseline.json')
    assert errors == ['node1: fio/directory/direct/bs=1M/jobs=1,qd=32 = 600.0 MB/s is 25.0 % below the baseline '
                      '800.0 MB/s (tolerance 10.0 %, storage_benchmark_baseline '
                      '/var/lib/inferops/benchmarks/baseline.json)']
    assert GATE(now['figures'], base, 30) == []
    assert GATE(now, base['figures'], '30') == []


def test_better_figures_pass_and_tolerance_zero_is_strict():
    base = record(**{'page_cache/mbps': 1000.0})
    assert GATE(record(**{'page_cache/mbps': 2000.0}), base, 0) == []
    assert len(GATE(record(**{'page_cache/mbps': 999.9}), base, 0)) == 1
