"""Print what the kernel and the engine say about the compose project's containers, as JSON.

Run on the guest by verify.yml: docker inspect of every container of the project, and for
each the cgroup it runs in (memory.max/high/min/low up its slices), the CPUs it may run on,
the TCP sockets its processes listen on, a write into the model repository from inside, and
the option table tritonserver printed at start.
"""
import json
import os
import re
import subprocess
import sys


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                          universal_newlines=True, env=dict(os.environ, LC_ALL='C'))
    return proc.returncode, proc.stdout, proc.stderr


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def cgroup_chain(pid):
    """memory.* of the process's cgroup and of each parent up to the root, innermost first."""
    line = (read('/proc/%d/cgroup' % pid) or '').splitlines()
    path = next((entry.split(':', 2)[2] for entry in line if entry.startswith('0::')), None)
    chain = []
    while path not in (None, '', '/'):
        base = '/sys/fs/cgroup' + path
        limits = [(key, read('%s/memory.%s' % (base, key))) for key in ('max', 'high', 'low', 'min')]
        chain.append(dict([('path', path)] + limits))
        path = os.path.dirname(path)
    return chain


def listening(pids):
    """host:port of every listening TCP socket of these processes (ss -Hltnp)."""
    rc, out, err = run(['ss', '-H', '-l', '-t', '-n', '-p'])
    found = []
    for entry in out.splitlines():
        owners = set(int(pid) for pid in re.findall(r'pid=(\d+)', entry))
        if owners & pids:
            # gRPC binds an IPv6 socket to the IPv4-mapped address of --grpc-address=127.0.0.1
            # ([::ffff:127.0.0.1]:28001 in the lab): it accepts 127.0.0.1 only, so it is written as such.
            found.append(re.sub(r'^\[::ffff:([0-9.]+)\]:', r'\1:', entry.split()[3]))
    return sorted(set(found))


def descendants(pid):
    rc, out, err = run(['ps', '-e', '-o', 'pid=,ppid='])
    children = {}
    for entry in out.split('\n'):
        if entry.strip():
            child, parent = (int(x) for x in entry.split())
            children.setdefault(parent, []).append(child)
    todo, seen = [pid], set()
    while todo:
        current = todo.pop()
        seen.add(current)
        todo.extend(children.get(current, []))
    return seen


def option_table(log):
    """tritonserver's start-up table: | option | value |."""
    table = {}
    for entry in log.splitlines():
        match = re.match(r'^\|\s*([a-z_\[\]0-9]+)\s*\|\s*(.*?)\s*\|$', entry)
        if match and match.group(1) != 'Option':
            table[match.group(1)] = match.group(2)
    return table


def main():
    project = sys.argv[1]
    repo_target = sys.argv[2]
    rc, out, err = run(['docker', 'ps', '-a', '-q', '--filter', 'label=com.docker.compose.project=' + project])
    ids = out.split()
    state = {'containers': {}, 'errors': []}
    if rc != 0:
        state['errors'].append('docker ps: ' + err.strip())
    inspected = []
    if ids:
        rc, out, err = run(['docker', 'inspect'] + ids)
        inspected = json.loads(out) if rc == 0 else []
    for info in inspected:
        name = info['Config']['Labels'].get('com.docker.compose.service', info['Name'])
        pid = info['State'].get('Pid') or 0
        entry = {'inspect': info, 'cgroups': [], 'cpus_allowed': None, 'listening': [], 'write': None,
                 'options': {}}
        if pid:
            entry['cgroups'] = cgroup_chain(pid)
            status = read('/proc/%d/status' % pid) or ''
            entry['cpus_allowed'] = next((s.split(':', 1)[1].strip() for s in status.splitlines()
                                          if s.startswith('Cpus_allowed_list:')), None)
            entry['listening'] = listening(descendants(pid))
            rc, out, err = run(['docker', 'exec', info['Id'], 'touch', repo_target + '/written-from-container'])
            entry['write'] = {'rc': rc, 'stderr': err.strip()}
        rc, out, err = run(['docker', 'logs', info['Id']])
        entry['options'] = option_table(out + '\n' + err)
        state['containers'][name] = entry
    json.dump(state, sys.stdout, sort_keys=True)


main()
