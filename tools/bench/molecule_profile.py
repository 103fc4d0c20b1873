#!/usr/bin/env python
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a molecule scenario's time went: seconds per action (create, converge, verify, ...) and the slowest tasks.

tools/test.sh runs molecule with the ansible.posix.profile_tasks callback, which prints after each task header
the time the task before it took ("Sunday 06 December 2026  20:01:50 +0000 (0:01:02.008) ..."). This reads
those lines from a stage log (.cache/test-logs/molecule-<scenario>.log, or any molecule or ansible-playbook
output with the callback on). A nested ansible-playbook (the local-NVMe site run) counts as the one task that
ran it.

    python tools/bench/molecule_profile.py .cache/test-logs/molecule-local_nvme.log [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

ACTION = re.compile(r'\[\w+ > (\w+)\] Executing')
TASK = re.compile(r'^(?:TASK|RUNNING HANDLER) \[(.*)\]')
TIMING = re.compile(r'^\w+ \d+ \w+ \d{4}\s+\d\d:\d\d:\d\d [+-]\d{4} \((\d+):(\d\d):(\d\d(?:\.\d+)?)\)')


def profile(lines):
    """[(action, task, seconds)] in the order the tasks ran."""
    rows, action, running, header = [], '?', None, None
    for line in lines:
        found = ACTION.search(line)
        if found:
            # A new ansible-playbook: its first timing line belongs to no task of ours.
            action, running, header = found.group(1), None, None
            continue
        found = TASK.match(line)
        if found:
            header = found.group(1)
            continue
        found = TIMING.match(line)
        if found:
            seconds = int(found.group(1)) * 3600 + int(found.group(2)) * 60 + float(found.group(3))
            if running is not None:
                rows.append((action, running, seconds))
            running = header
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('log')
    parser.add_argument('--top', type=int, default=25, help='how many of the slowest tasks to list')
    args = parser.parse_args(argv)
    with open(args.log, errors='replace') as handle:
        rows = profile(handle)
    if not rows:
        print('%s: no profile_tasks timing lines (was ansible.posix.profile_tasks enabled?)' % args.log)
        return 1
    per_action = collections.OrderedDict()
    for action, dummy, seconds in rows:
        per_action[action] = per_action.get(action, 0.0) + seconds
    print('seconds per action: ' + ', '.join('%s %d' % item for item in per_action.items()))
    print('%d tasks, %d s' % (len(rows), sum(seconds for dummy, dummy2, seconds in rows)))
    for action, task, seconds in sorted(rows, key=lambda row: -row[2])[:args.top]:
        print('%7.1f  %-12s %s' % (seconds, action, task))
    return 0


if __name__ == '__main__':
    sys.exit(main())
