# nvme_sched probe (run as: python3 -c <this> '<models json>' '<serials json>'); read-only.
# Prints JSON: every NVMe namespace (nvme<c>n<n>) with model, serial, available and active
# scheduler, read_ahead_kb, nr_requests and whether the selectors select it, and per selector
# the namespaces it matched. No selector at all selects every namespace.
import fnmatch
import json
import os
import re
import sys


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def number(value):
    return int(value) if value and value.isdigit() else None


models = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
serials = json.loads(sys.argv[2]) if len(sys.argv) > 2 else []
matches = {'models': dict((p, []) for p in models), 'serials': dict((p, []) for p in serials)}
names = [n for n in os.listdir('/sys/block') if re.match(r'^nvme\d+n\d+$', n)]
namespaces = []
for kname in sorted(names, key=lambda n: [int(x) for x in re.findall(r'\d+', n)]):
    base = '/sys/block/' + kname
    sched = read(base + '/queue/scheduler') or ''
    active = re.search(r'\[([^\]]+)\]', sched)
    entry = {
        'kname': kname,
        'model': read(base + '/device/model') or '',
        'serial': read(base + '/device/serial') or '',
        'schedulers': [s.strip('[]') for s in sched.split()],
        'scheduler': active.group(1) if active else (sched or None),
        'read_ahead_kb': number(read(base + '/queue/read_ahead_kb')),
        'nr_requests': number(read(base + '/queue/nr_requests')),
    }
    hit = not models and not serials
    for kind, attr in (('models', 'model'), ('serials', 'serial')):
        for pattern in matches[kind]:
            if fnmatch.fnmatchcase(entry[attr], pattern):
                matches[kind][pattern].append(kname)
                hit = True
    entry['selected'] = hit
    namespaces.append(entry)
print(json.dumps({'namespaces': namespaces, 'matches': matches}))
