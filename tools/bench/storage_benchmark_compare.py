#!/usr/bin/env python
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two storage_benchmark run records side by side, as a Markdown table (or JSON with --json).

A record is what the storage_benchmark role keeps on a host (/var/lib/inferops/benchmarks/<ts>.json,
latest.json). The comparison is side_by_side() of plugins/module_utils/storage/storage_benchmark.py. Given a results
directory instead, it compares the runs the node audit compares (read_records, compared_pair): the latest and
the newest earlier run with another label.
Usage: tools/bench/storage_benchmark_compare.py before.json after.json [--json]
       tools/bench/storage_benchmark_compare.py /var/lib/inferops/benchmarks [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTILS = os.path.join(ROOT, 'plugins', 'module_utils', 'storage', 'storage_benchmark.py')


def load_utils():
    spec = importlib.util.spec_from_file_location('inferops_storage_benchmark', UTILS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def spread(record, name):
    """min-max of a figure's repetitions, from the record's module result."""
    bench = record.get('benchmark', {})
    if name.startswith('fio/'):
        for case in bench.get('fio', []):
            if 'fio/' + case['key'] == name and case.get('mbps'):
                return '%.0f-%.0f' % (case['mbps']['min'], case['mbps']['max'])
    part, _sep, key = name.partition('/')
    stats = (bench.get(part) or {}).get('mbps' if key == 'mbps' else key)
    if isinstance(stats, dict):
        return '%.0f-%.0f' % (stats['min'], stats['max'])
    return ''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('before', help='a run record, or a results directory')
    parser.add_argument('after', nargs='?')
    parser.add_argument('--json', action='store_true')
    opts = parser.parse_args()
    utils = load_utils()
    if opts.after is None:
        found = utils.read_records(opts.before, 10, details=True)
        for error in found['errors']:
            print('not a run record: %s: %s' % (error['file'], error['msg']), file=sys.stderr)
        after, before = utils.compared_pair(found['records'])
        if before is None:
            why = 'no run' if after is None else 'no earlier run with another label than %r' % after['label']
            parser.exit(1, '%s: %s\n' % (opts.before, why))
    else:
        with open(opts.before) as handle:
            before = json.load(handle)
        with open(opts.after) as handle:
            after = json.load(handle)
    rows = utils.side_by_side(before, after)
    if opts.json:
        print(json.dumps(rows, indent=1))
        return
    print('| figure (MB/s, median) | %s | min-max | %s | min-max | after / before |'
          % (before.get('label') or 'before', after.get('label') or 'after'))
    print('| --- | ---: | ---: | ---: | ---: | ---: |')
    for row in rows:
        print('| `%s` | %s | %s | %s | %s | %s |' % (
            row['figure'], '-' if row['before'] is None else '%.0f' % row['before'], spread(before, row['figure']),
            '-' if row['after'] is None else '%.0f' % row['after'], spread(after, row['figure']),
            '-' if row['ratio'] is None else '**%.2f**' % row['ratio']))


if __name__ == '__main__':
    main()
