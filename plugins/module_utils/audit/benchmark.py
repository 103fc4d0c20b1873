# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node audit's ``benchmarks`` section of a host, on ``storage_benchmark_info``: the latest storage
benchmark run and the run it is compared with (``storage_benchmark.compared_pair``: the newest earlier run with
another label - before-tuning for an after-tuning run), figure by figure with the ratio after / before
(``storage_benchmark.side_by_side``). The section is no check: a host without runs has ``status`` ``none`` ("no
benchmark run"), which fails nothing.

* ``section(reads)`` - the section (schema ``schemas/audit_report.schema.json``, ``$defs/benchmarks``).
* ``UNREAD`` - the section of a host the audit could not read.
* ``CHECKS`` - ``storage.benchmark_baseline``: the role's own gate (``storage_benchmark.gate_errors``) on the latest
  run against ``storage_benchmark_baseline`` with ``storage_benchmark_tolerance_percent``, a WARN (a benchmark is
  a measurement on a shared machine, not a state to converge); SKIP without a baseline or a run.
"""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.storage import storage_benchmark
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, Missing, read

# What the check compares with: the storage_benchmark role's baseline and tolerance.
BENCHMARK_VARIABLES = (
    'storage_benchmark_baseline',
    'storage_benchmark_tolerance_percent',
)

__all__ = ['CHECKS', 'RUN_FIELDS', 'UNREAD', 'section']

# What the report keeps of each of the two runs (the figures are in the rows).
RUN_FIELDS = ('file', 'label', 'started_at', 'profile', 'kernel', 'host')
UNREAD = {'status': 'unread', 'reason': 'the host was not audited', 'directory': None, 'files': 0, 'errors': [],
          'latest': None, 'before': None, 'figures': []}


def _run(record):
    return None if record is None else dict((name, record.get(name)) for name in RUN_FIELDS)


def section(reads):
    """``{status, reason, directory, files, errors, latest, before, figures}``. ``status``: ``compared`` (a
    latest run and one with another label), ``single`` (runs of one label only: the latest's figures, no
    ratio), ``none`` (no run kept), ``unread`` (storage_benchmark_info did not run or failed - ``reason``)."""
    try:
        info = read(reads, 'storage_benchmark_info')
    except Missing as exc:
        return dict(UNREAD, reason=str(exc))
    records = info.get('records') or []
    latest, before = storage_benchmark.compared_pair(records)
    out = {'directory': info.get('directory'), 'files': info.get('files') or 0, 'errors': info.get('errors') or [],
           'latest': _run(latest), 'before': _run(before),
           'figures': storage_benchmark.side_by_side(before or {}, latest) if latest else []}
    if latest is None:
        reason = 'no benchmark run in %s' % info.get('directory')
        if out['errors']:
            reason += ' (%d file(s) not readable as a run record)' % len(out['errors'])
        return dict(out, status='none', reason=reason)
    if before is None:
        return dict(out, status='single', reason='no earlier run with another label than %r among the %d read'
                    % (latest.get('label'), len(records)))
    return dict(out, status='compared', reason=None)


@Check('storage.benchmark_baseline', 'Latest storage benchmark run within the tolerance of the baseline', 'minor',
       '<storage_benchmark_results_dir>/<UTC timestamp>.json against storage_benchmark_baseline',
       'find what changed since the baseline (kernel, profile: the report\'s benchmarks section) and run the '
       'storage_benchmark role again; a new baseline: keep a run record as storage_benchmark_baseline', variables=BENCHMARK_VARIABLES)
def baseline(check, reads, expected):
    info = read(reads, 'storage_benchmark_info')
    path = expected.get('storage_benchmark_baseline')
    tolerance = expected.get('storage_benchmark_tolerance_percent')
    if not path:
        return [check.skip('storage_benchmark_baseline is not set: no baseline to compare with')]
    latest = storage_benchmark.compared_pair(info.get('records') or [])[0]
    wanted = 'every figure at most %s %% below %s' % (tolerance, path)
    if latest is None:
        return [check.skip('no benchmark run in %s' % info.get('directory'), expected=wanted)]
    evidence = '%s against %s' % (latest['file'], path)
    if info.get('baseline') is None:
        return [check.warn(None, wanted, None, 'storage_benchmark_baseline = %s is not a run record: %s'
                           % (path, info.get('baseline_error') or 'not read'), evidence)]
    errors = storage_benchmark.gate_errors(latest, info['baseline'], tolerance,
                                           variable='storage_benchmark_baseline')
    try:
        rows = storage_benchmark.gate(latest['figures'], info['baseline']['figures'], float(tolerance))['compared']
    except (TypeError, ValueError):
        rows = []
    observed = dict((row['figure'], row['change_percent']) for row in rows)
    if errors:
        reason = '%s (run %s): %s' % (latest['label'], latest['started_at'], '; '.join(errors))
        return [check.warn(None, wanted, observed, reason, evidence)]
    return [check.passed(None, wanted, observed, evidence=evidence)]


CHECKS = [baseline]
