"""Print, as JSON, the page cache bytes (memory.stat "file") charged to each cgroup v2 slice of the guest.

Run by verify.yml after the warmup role preloaded the model repository: by cgroup v2's rule a page is
charged to the cgroup of the process that first brought it in, so the preload's pages sit where the
preload ran (the SSH session of the Ansible task, under user.slice), not in the Triton instances'
slices whose memory.high/memory.max the inventory sets. Every *.slice directory, at any depth.
"""
import json
import os

ROOT = '/sys/fs/cgroup'


def file_bytes(path):
    with open(os.path.join(path, 'memory.stat')) as handle:
        for line in handle:
            key, value = line.split()
            if key == 'file':
                return int(value)
    return None


out = {}
for directory, names, dummy in os.walk(ROOT):
    if directory.endswith('.slice') and os.path.exists(os.path.join(directory, 'memory.stat')):
        out[os.path.relpath(directory, ROOT)] = file_bytes(directory)
print(json.dumps(out, sort_keys=True))
