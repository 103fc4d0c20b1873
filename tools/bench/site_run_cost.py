#!/usr/bin/env python
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one playbook run costs a node: wall time, task lines and remote executions, per tree.

Runs the same playbook against the same (already converged) lab node with this checkout and, with
--ref, with another commit checked out in a temporary git worktree - alternately, --runs times each,
in one invocation, so that both see the same guest and the same load. A remote execution is one
command the controller runs on the host over SSH (ansible-playbook -vvv prints each as `SSH: EXEC`):
a module run (pipelined Python), or a raw/low-level command. Module runs are also counted by module
(the `Using module file` lines). Figures go to docs/benchmarks.md as printed (Markdown).

Usage:
  tools/bench/site_run_cost.py -i .cache/lab/bench/inventory.yml -i inventories/lab \
      --playbook site.yml --ref <commit> [--runs 2] [-e k=v ...] [--before-each CMD] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The port as ansible-core writes it, quoted (-o 'Port=2222') or not (-o Port=2222), by version and inventory.
EXEC = re.compile(r"^<(?P<addr>[^>]+)> SSH: EXEC .*?-o '?Port=(?P<port>\d+)|^<(?P<addr2>[^>]+)> SSH: EXEC ")
MODULE = re.compile(r'^Using module file .*/(?P<module>[^/]+)\.py$')
# The interpreter fed the module on stdin (python3, python3.11, ...), last in the command; under become it sits
# inside sudo's quoted command.
PIPELINED = re.compile(r"python[0-9.]*['\"]* && sleep 0")
TASK_LINE = re.compile(r'^(ok|changed|skipping|failed|fatal): \[(?P<host>[^\]]+)')
RECAP = re.compile(r'^(?P<host>\S+)\s+: ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unr>\d+)'
                   r'\s+failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)')


def cost(output: str) -> dict:
    """The run's figures from its -vvv output: per host (by address:port) and by module."""
    execs = collections.Counter()
    modules = collections.Counter()
    module_runs = collections.Counter()
    tasks = collections.Counter()
    recap = {}
    for line in output.splitlines():
        m = EXEC.match(line)
        if m:
            where = m.group('addr') or m.group('addr2')
            if m.group('port'):
                where = f"{where}:{m.group('port')}"
            execs[where] += 1
            if PIPELINED.search(line):
                module_runs[where] += 1
            continue
        m = MODULE.match(line)
        if m:
            modules[m.group('module')] += 1
            continue
        m = TASK_LINE.match(line)
        if m:
            tasks[m.group('host')] += 1
            continue
        m = RECAP.match(line)
        if m:
            recap[m.group('host')] = {k: int(v) for k, v in m.groupdict().items() if k != 'host'}
    return {
        'remote_executions': sum(execs.values()),
        'module_runs': sum(module_runs.values()),
        'by_address': dict(execs),
        'by_module': dict(modules.most_common()),
        'task_lines': dict(tasks),
        'recap': recap,
    }


def run(tree: str, args, env) -> dict:
    argv = [shutil.which('ansible-playbook') or 'ansible-playbook', '-vvv']
    for inv in args.inventory:
        argv += ['-i', os.path.abspath(inv)]
    for ev in args.extra_vars:
        argv += ['-e', ev]
    argv.append(args.playbook)
    env = dict(env, ANSIBLE_CONFIG=os.path.join(tree, 'ansible.cfg'), ANSIBLE_FORCE_COLOR='0',
               ANSIBLE_STDOUT_CALLBACK='default', ANSIBLE_CALLBACK_RESULT_FORMAT='yaml')
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    figures = cost(proc.stdout + proc.stderr)
    figures['seconds'] = round(time.monotonic() - start, 1)
    figures['rc'] = proc.returncode
    if proc.returncode:
        figures['tail'] = (proc.stdout + proc.stderr)[-3000:]
    return figures


def worktree(ref: str) -> str:
    """The commit checked out beside this one, linked as the inferops.node collection of its own tree.

    A commit since 0.2.0 resolves itself through its committed collections/ link; an older one's
    ansible.cfg looks in .cache/collections only, hence the link made here.
    """
    path = tempfile.mkdtemp(prefix='inferops-ref-')
    subprocess.run(['git', '-C', ROOT, 'worktree', 'add', '--detach', path, ref], check=True,
                   capture_output=True)
    link = os.path.join(path, '.cache', 'collections', 'ansible_collections', 'inferops')
    os.makedirs(link, exist_ok=True)
    os.symlink(path, os.path.join(link, 'node'))
    return path


def summary(label: str, runs: list) -> dict:
    def median(values):
        values = sorted(values)
        return values[len(values) // 2]
    return {
        'tree': label,
        'runs': len(runs),
        'rc': [r['rc'] for r in runs],
        'seconds': median([r['seconds'] for r in runs]),
        'remote_executions': median([r['remote_executions'] for r in runs]),
        'module_runs': median([r['module_runs'] for r in runs]),
        'task_lines': median([sum(r['task_lines'].values()) for r in runs]),
        'changed': median([sum(h['changed'] for h in r['recap'].values()) for r in runs]),
        'by_module': runs[-1]['by_module'],
    }


def markdown(rows: list) -> str:
    out = ['| tree | runs | wall s (median) | remote executions | module runs | task lines | changed |',
           '|---|---|---|---|---|---|---|']
    for r in rows:
        out.append(f"| {r['tree']} | {r['runs']} | {r['seconds']} | {r['remote_executions']} | {r['module_runs']} "
                   f"| {r['task_lines']} | {r['changed']} |")
    if len(rows) == 2 and rows[1]['remote_executions']:
        ref, new = rows
        out.append('')
        out.append(f"ratio reference/this: remote executions {ref['remote_executions'] / new['remote_executions']:.2f}x, "
                   f"wall {ref['seconds'] / new['seconds']:.2f}x")
    for r in rows:
        out.append('')
        out.append(f"{r['tree']} module runs by module: " + ', '.join(f'{k} {v}' for k, v in r['by_module'].items()))
    return '\n'.join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('-i', '--inventory', action='append', required=True)
    parser.add_argument('--playbook', default='site.yml')
    parser.add_argument('-e', '--extra-vars', action='append', default=[])
    parser.add_argument('--ref', help='commit to measure beside this checkout (git worktree)')
    parser.add_argument('--runs', type=int, default=1)
    parser.add_argument('--before-each', help='shell command run on the controller before every playbook run '
                        '(for example drift made on the node through tools/inferops-lab ssh)')
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args()

    trees = [('this checkout', ROOT)]
    ref_path = None
    if args.ref:
        ref_path = worktree(args.ref)
        trees.insert(0, (f'reference {args.ref[:10]}', ref_path))
    labels = [label for label, dummy in trees]
    results = dict((label, []) for label in labels)
    try:
        for dummy in range(args.runs):
            for label, tree in trees:
                if args.before_each:
                    subprocess.run(args.before_each, shell=True, check=True, cwd=ROOT)
                results[label].append(run(tree, args, os.environ))
    finally:
        if ref_path:
            subprocess.run(['git', '-C', ROOT, 'worktree', 'remove', '--force', ref_path], check=False)
    rows = [summary(label, results[label]) for label in labels]
    if args.json:
        print(json.dumps({'summary': rows, 'runs': results}, indent=2))
    else:
        print(markdown(rows))
    return 0 if all(r['rc'] == 0 for runs in results.values() for r in runs) else 1


if __name__ == '__main__':
    sys.exit(main())
