#!/usr/bin/env python
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: Triton cold start to model ready, with and without the page cache preload.

Not a test. Answers what triton_compose_preload buys: triton_compose loads the model
repository into the page cache (the warmup role's page_cache tasks) before the servers
(re)start. Creates once under --dir a model repository with one python-backend model whose
initialize() reads a --weights-size file (random data, default 2 GiB) completely in 8 MiB
chunks, keeping a checksum, as a real model reads its weights; then, in one run, on the same
files, times the real tritonserver of nvidia-pytriton (the venv's) from its start until
GET /v2/models/<model>/ready answers 200 (polled every 50 ms on 127.0.0.1):

  cold     sync, echo 3 > drop_caches and DONTNEED on the files (0 % resident checked), start
  preload  the same drop, then page_cache's module path (plugins/module_utils/storage/page_cache.py,
           loaded directly, module defaults, timed on its own), then start
  warm     no drop: the repository already resident (the lower bound)
  role     (only with --with-ansible) the same drop, then the warmup role's page_cache tasks as
           triton_compose includes them (async page_cache, job_progress polls every
           --progress-interval, the role's default 5 s) in an ansible-playbook run, then start; the preload
           time is the tasks' own (from a timestamp before the include to one after it), not
           Ansible's start-up, which a real play pays once anyway

--gap waits that long before every start (untimed), as docker compose up does between the
preload and the server's first read; the weights' residency just before the start is reported.

With --docker IMAGE the server is that Triton image started by the Docker engine instead (docker run,
host network, the repository mounted read-only, as triton_compose runs it; timed from before `docker
run`), and the role condition is not offered: tools/bench/cold_start_guest.sh runs it so in a lab
guest with the lab's image.

Conditions run in rotating order for --repeat rounds; medians are reported. The server (its process
group, or its container) is ended after every measurement.
Usage: .venv/bin/python tools/bench/cold_start_bench.py [--dir /var/tmp/inferops-cold-start-bench] [--repeat 5]
Needs root (drop_caches, mincore) and a --venv with nvidia-pytriton (the checkout's), or --docker IMAGE.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

# The data set, drop and residency helpers are the page_cache benchmark's (same directory).
import page_cache_bench as pcb
import server_process

pc = pcb.pc
ROOT = pcb.ROOT
MODEL = 'coldstart'

PORTS = range(28700, 28800)
CONTAINER = 'inferops-cold-start-bench'
POLL = 0.05
RETRIES = 2  # plugins/modules/page_cache.py RETRIES: passes over pages reclaimed during the warm
CONDITIONS = ('cold', 'preload', 'warm')

# The tasks triton_compose runs before a (re)start (roles/triton_compose/tasks/deploy.yml), between two
# controller-side timestamps; the status file is the run's own, not the role's /run default.
PLAYBOOK = '''---
- name: Preload as triton_compose does
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Take the time before
      ansible.builtin.set_fact:
        __bench_begin: "{{ now().timestamp() }}"
    - name: Load the model repository into the page cache before the servers (re)start
      ansible.builtin.include_role:
        name: inferops.node.warmup
        tasks_from: page_cache.yml
      vars:
        warmup_model_repository: %s
        warmup_status_file: %s
    - name: Report the time the tasks took
      ansible.builtin.debug:
        msg: "PRELOAD_TASKS_SECONDS {{ now().timestamp() - __bench_begin | float }}"
'''

CONFIG = '''name: "%s"
backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
''' % MODEL

# initialize() reads the weights as a loader does: every byte copied into the process (readinto a
# reused 8 MiB buffer) and summed. adler32, not sha256: hashing 2 GiB would cost the two vCPUs
# more than the read and hide what the page cache changes. The time it took goes to a file
# named by INFEROPS_COLD_START_REPORT, so the table can split the load from the server's own start.
MODEL_PY = '''"""Cold-start benchmark model: initialize() reads weights.bin completely (tools/bench/cold_start_bench.py)."""
import json
import os
import time
import zlib

import triton_python_backend_utils as pb_utils

CHUNK = 8 * 1024 * 1024


class TritonPythonModel:
    def initialize(self, args):
        path = os.path.join(args["model_repository"], args["model_version"], "weights.bin")
        begin = time.monotonic()
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        total = 0
        checksum = 1
        with open(path, "rb", buffering=0) as handle:
            while True:
                num = handle.readinto(buf)
                if not num:
                    break
                checksum = zlib.adler32(view[:num], checksum)
                total += num
        report = os.environ.get("INFEROPS_COLD_START_REPORT")
        if report:
            with open(report, "w") as out:
                json.dump({"bytes": total, "seconds": time.monotonic() - begin, "adler32": checksum}, out)

    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
                for r in requests]
'''


# ----------------------------------------------------------------------------- set-up

def make_repository(directory, weights_size):
    """models/<MODEL>/{config.pbtxt,1/model.py,1/weights.bin}; the weights are kept when their size matches."""
    version = os.path.join(directory, 'models', MODEL, '1')
    os.makedirs(version, exist_ok=True)
    for path, text in ((os.path.join(directory, 'models', MODEL, 'config.pbtxt'), CONFIG),
                       (os.path.join(version, 'model.py'), MODEL_PY)):
        with open(path, 'w') as handle:
            handle.write(text)
    weights = os.path.join(version, 'weights.bin')
    if not os.path.exists(weights) or os.path.getsize(weights) != weights_size:
        print('creating %s of weights in %s ...' % (pc.human_bytes(weights_size), weights), flush=True)
        block = bytearray(os.urandom(16 * pc.MIB))
        with open(weights, 'wb') as handle:
            left, counter = weights_size, 0
            while left:
                counter += 1
                block[0:8] = counter.to_bytes(8, 'little')  # no two blocks alike (no dedup anywhere)
                num = min(left, len(block))
                handle.write(memoryview(block)[:num])
                left -= num
            handle.flush()
            os.fsync(handle.fileno())
    return os.path.join(directory, 'models')


def triton_layout(venv, directory):
    """(tritonserver binary, backend directory, environment) as tests/unit/fixtures/triton/record_triton.sh sets them up."""
    python = os.path.join(venv, 'bin', 'python')
    probe = ('import importlib.util, os, sys, sysconfig; print(json.dumps([os.path.dirname(importlib.util.find_spec("pytriton").origin), '
             '"%d.%d" % sys.version_info[:2], sysconfig.get_config_var("LIBDIR")]))')
    out = subprocess.run([python, '-c', 'import json; ' + probe], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    pytriton, pyver, libdir = json.loads(out)
    home = os.path.join(pytriton, 'tritonserver')
    # The python backend needs the stub built for this Python next to it; pytriton ships one per version.
    backends = os.path.join(directory, 'backends')
    if not os.path.exists(os.path.join(backends, 'python', 'triton_python_backend_stub')):
        shutil.rmtree(backends, ignore_errors=True)
        shutil.copytree(os.path.join(home, 'backends', 'python'), os.path.join(backends, 'python'))
        shutil.copy2(os.path.join(home, 'python_backend_stubs', pyver, 'triton_python_backend_stub'), os.path.join(backends, 'python'))
    env = dict(os.environ, PATH=os.path.join(venv, 'bin') + ':' + os.environ.get('PATH', ''),
               LD_LIBRARY_PATH='%s:%s' % (libdir, os.path.normpath(os.path.join(pytriton, '..', 'nvidia_pytriton.libs'))))
    # Every server's environment carries the marker of --dir: what outlives its process group is found by it.
    env[server_process.MARKER] = os.path.realpath(directory)
    return os.path.join(home, 'bin', 'tritonserver'), backends, env, directory


# ----------------------------------------------------------------------------- server

def free_port(ports):
    for port in ports:
        with socket.socket() as sock:
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
            return port
    raise SystemExit('cold_start_bench: no free port in %d-%d' % (PORTS[0], PORTS[-1]))


def model_ready(port):
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=1)
    try:
        conn.request('GET', '/v2/models/%s/ready' % MODEL)
        return conn.getresponse().status == 200
    except OSError:  # refused until the server has loaded every model and opened its port
        return False
    finally:
        conn.close()


def stop(proc, directory):
    """End the server's process group (server and python stubs) and anything left with this run's marker."""
    server_process.stop_group(proc.pid, 20)
    proc.poll()  # stop_group reaped it; let Popen know
    for pid in server_process.marked_pids(directory):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_to_ready(triton, repository, log, timeout, port):
    """Seconds from starting tritonserver to the model's ready endpoint answering 200, and the model's load report."""
    # (tritonserver, backend directory, environment, --dir), or with --docker ('docker', image, None, --dir).
    binary, backends, env, directory = triton
    report = log + '.load.json'
    if os.path.exists(report):
        os.unlink(report)
    server_args = ['--http-address=127.0.0.1', '--http-port=%d' % port, '--allow-grpc=false', '--allow-metrics=false']
    if binary == 'docker':
        # The report goes through a second bind mount; the repository stays read-only, as triton_compose mounts it.
        argv = ['docker', 'run', '--detach', '--name', CONTAINER, '--network', 'host', '--shm-size', '256m',
                '--volume', repository + ':/models:ro', '--volume', os.path.dirname(report) + ':/report',
                '--env', 'INFEROPS_COLD_START_REPORT=/report/' + os.path.basename(report),
                backends, 'tritonserver', '--model-repository=/models'] + server_args  # backends: the image
    else:
        env = dict(env, INFEROPS_COLD_START_REPORT=report)
        argv = [binary, '--model-repository=' + repository, '--backend-directory=' + backends] + server_args
    with open(log, 'w') as out:
        begin = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        polls = 0
        while not model_ready(port):
            polls += 1
            if time.monotonic() - begin > timeout or server_gone(proc, binary, polls):
                if binary == 'docker':
                    subprocess.run(['docker', 'logs', '--tail', '100', CONTAINER], stdout=sys.stderr, stderr=sys.stderr, check=False)
                else:
                    with open(log) as handle:
                        sys.stderr.write(handle.read()[-4000:])
                raise SystemExit('cold_start_bench: tritonserver not ready after %.0f s or gone (log %s)' % (time.monotonic() - begin, log))
            time.sleep(POLL)
        seconds = time.monotonic() - begin
    finally:
        if binary == 'docker':
            proc.wait()
            subprocess.run(['docker', 'rm', '--force', CONTAINER], stdout=subprocess.DEVNULL, check=True)
        else:
            stop(proc, directory)
    with open(report) as handle:
        return seconds, json.load(handle)


def server_gone(proc, binary, polls):
    """Whether the server exited: its process, or its container once `docker run` has returned (checked every
    40 polls, 2 s: docker inspect is not free in a guest, and under load creating the container alone took 20 s)."""
    if proc.poll() is None:
        return False
    if binary != 'docker' or proc.returncode != 0:
        return True
    if polls % 40:
        return False
    state = subprocess.run(['docker', 'inspect', '--format', '{{.State.Running}}', CONTAINER],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, check=False)
    return state.stdout.strip() != 'true'


def run_role(opts, repository):
    """Seconds the warmup role's page_cache tasks took inside an ansible-playbook run of this checkout."""
    collections = os.path.join(opts.dir, 'collections')
    link = os.path.join(collections, 'ansible_collections', 'inferops', 'node')
    # The link outlives the run: point it at this checkout, whichever ran last.
    if os.path.islink(link) and os.readlink(link) != ROOT:
        os.unlink(link)
    if not os.path.islink(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(ROOT, link)
    playbook = os.path.join(opts.dir, 'preload.yml')
    with open(playbook, 'w') as handle:
        handle.write(PLAYBOOK % (repository, os.path.join(opts.dir, 'page-cache-status.json')))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=collections)
    out = subprocess.run([os.path.join(opts.venv, 'bin', 'ansible-playbook'), '-i', 'localhost,', playbook,
                          '-e', 'ansible_python_interpreter=%s' % os.path.join(opts.venv, 'bin', 'python'),
                          '-e', 'warmup_progress_interval=%d' % opts.progress_interval],
                         check=True, cwd=ROOT, env=env, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return float(re.search(r'PRELOAD_TASKS_SECONDS ([0-9.]+)', out).group(1))


# ----------------------------------------------------------------------------- main

def measure(condition, opts, triton, repository, weights, port):
    sample = {'condition': condition, 'preload_seconds': 0.0}
    if condition != 'warm':
        pcb.drop([weights], 'global')
        sample['resident_after_drop'] = pcb.resident_fraction([weights])
        if sample['resident_after_drop'] > 0.001:
            raise SystemExit('cold_start_bench: %.1f %% of the weights still resident after the drop' % (100 * sample['resident_after_drop']))
    if condition == 'role':
        sample['preload_seconds'] = run_role(opts, repository)
    elif condition == 'preload':
        # The module's defaults as the warmup role passes them: workers by the rule, 8 MiB chunks.
        sample['preload_seconds'], _need = pcb.run_page_cache(repository, None, pc.DEFAULT_CHUNK_SIZE, retries=RETRIES)
    elif condition == 'warm' and pcb.resident_fraction([weights]) < 1.0:
        pcb.run_page_cache(repository, None, pc.DEFAULT_CHUNK_SIZE, retries=RETRIES)  # untimed: the warm case starts resident
    # docker compose up takes seconds between the preload and the server's first read (--gap stands in for
    # them, untimed), and proactive reclaim can take pages meanwhile: what the server found.
    time.sleep(opts.gap)
    sample['resident_at_start'] = pcb.resident_fraction([weights])
    log = os.path.join(opts.dir, 'server-%s.log' % condition)
    sample['ready_seconds'], load = start_to_ready(triton, repository, log, opts.timeout, port)
    sample['load_seconds'] = load['seconds']
    sample['total_seconds'] = sample['preload_seconds'] + sample['ready_seconds']
    if load['bytes'] != os.path.getsize(weights):
        raise SystemExit('cold_start_bench: the model read %d of %d bytes' % (load['bytes'], os.path.getsize(weights)))
    return sample


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--dir', default='/var/tmp/inferops-cold-start-bench', help='on a local disk, not tmpfs')
    parser.add_argument('--weights-size', default='2G', help='size of the weights file the model reads')
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--venv', default='/work/main/.venv', help='virtualenv with nvidia-pytriton')
    parser.add_argument('--timeout', type=int, default=600, help='seconds to wait for the model to be ready')
    parser.add_argument('--gap', type=float, default=0.0, help='seconds between the preload (or drop) and the server start, untimed')
    parser.add_argument('--with-ansible', action='store_true', help='also the role condition: the preload through the warmup role')
    parser.add_argument('--progress-interval', type=int, default=5, help='warmup_progress_interval for the role condition '
                        '(the role default 5: seconds between two polls of the preload job)')
    parser.add_argument('--docker', metavar='IMAGE', help='start this Triton image with the Docker engine instead of '
                        "the venv's tritonserver")
    parser.add_argument('--json', help='write all samples to this file')
    opts = parser.parse_args()
    if opts.docker and opts.with_ansible:
        parser.error('--with-ansible runs the venv\'s ansible-playbook on this host; not with --docker')

    if os.geteuid() != 0:
        sys.exit('cold_start_bench: needs root (drop_caches, mincore of the weights)')
    os.makedirs(opts.dir, exist_ok=True)
    fstype = subprocess.run(['findmnt', '-n', '-o', 'FSTYPE', '-T', opts.dir], check=True, stdout=subprocess.PIPE,
                            universal_newlines=True).stdout.strip()
    if fstype == 'tmpfs':
        sys.exit('cold_start_bench: %s is on tmpfs: its pages cannot be dropped, use a disk' % opts.dir)
    weights_size = pc.parse_size(opts.weights_size, 'weights-size')
    repository = make_repository(opts.dir, weights_size)
    weights = os.path.join(repository, MODEL, '1', 'weights.bin')
    if opts.docker:
        subprocess.run(['docker', 'rm', '--force', CONTAINER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        triton = ('docker', opts.docker, None, opts.dir)
    else:
        triton = triton_layout(opts.venv, opts.dir)
    print('repository: %s, weights %s (%d bytes) on %s; gap before the start %.1f s; server: %s' % (
        repository, pc.human_bytes(weights_size), weights_size, fstype, opts.gap,
        'docker run ' + opts.docker if opts.docker else "the venv's tritonserver"))
    print('machine: %d CPUs, MemAvailable %s, kernel %s, load average %.2f %.2f %.2f' % (
        (os.cpu_count(), pc.human_bytes(pc.read_meminfo()['MemAvailable']), os.uname().release) + os.getloadavg()))

    conditions = CONDITIONS + (('role',) if opts.with_ansible else ())
    samples = {c: [] for c in conditions}
    loads = [os.getloadavg()[0]]
    ports = iter(list(PORTS) * (opts.repeat + 1))
    for rnd in range(opts.repeat):
        order = conditions[rnd % len(conditions):] + conditions[:rnd % len(conditions)]
        for condition in order:
            port = free_port(ports)  # a new port each start: no wait for the last one's sockets
            sample = measure(condition, opts, triton, repository, weights, port)
            samples[condition].append(sample)
            loads.append(os.getloadavg()[0])
            print('  round %d  %-8s preload %6.2f s  start->ready %6.2f s (model load %6.2f s)  total %6.2f s  resident at start %5.1f %%  load %.1f'
                  % (rnd + 1, condition, sample['preload_seconds'], sample['ready_seconds'], sample['load_seconds'],
                     sample['total_seconds'], 100 * sample['resident_at_start'], loads[-1]), flush=True)
    if server_process.marked_pids(opts.dir):
        sys.exit('cold_start_bench: processes of this run still running: %s' % server_process.marked_pids(opts.dir))

    med = {c: {k: statistics.median(s[k] for s in samples[c]) for k in
               ('preload_seconds', 'ready_seconds', 'load_seconds', 'total_seconds', 'resident_at_start')} for c in conditions}
    print('\nmedians over %d round(s), load average (1 min) %.1f-%.1f during the run:' % (opts.repeat, min(loads), max(loads)))
    print('  %-8s %10s %14s %12s %14s %18s' % ('', 'preload s', 'start->ready s', 'model load s', 'preload+start s', 'resident at start'))
    for cond in conditions:
        row = med[cond]
        print('  %-8s %10.2f %14.2f %12.2f %14.2f %16.1f %%' % (cond, row['preload_seconds'], row['ready_seconds'], row['load_seconds'],
                                                                row['total_seconds'], 100 * row['resident_at_start']))
    cold = med['cold']['ready_seconds']
    print('\nratios of medians:')
    print('  cold / preload (server start to ready)      %.2fx' % (cold / med['preload']['ready_seconds']))
    print('  cold / preload (preload + start to ready)   %.2fx' % (cold / med['preload']['total_seconds']))
    if opts.with_ansible:
        print('  cold / role (role preload + start to ready) %.2fx' % (cold / med['role']['total_seconds']))
    print('  cold / warm                                 %.2fx' % (cold / med['warm']['ready_seconds']))
    if opts.json:
        with open(opts.json, 'w') as handle:
            json.dump({'weights_bytes': weights_size, 'samples': samples, 'medians': med, 'load_average': loads}, handle, indent=1)


if __name__ == '__main__':
    main()
