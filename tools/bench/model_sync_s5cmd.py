# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync against s5cmd on the same objects: end to end, and the transfer alone.

  .venv/bin/python tools/bench/model_sync_s5cmd.py [--case shards:4x150M] [--case files:1000x256K]
                                                   [--repeat 3] [--dest DIR]

In one run: a moto server on loopback (tests/unit/s3_lab.py, the tests' store, authentication on), one
model per case uploaded with its manifest, then each round, the two methods in alternating order, each
into a fresh destination with the page cache of the previous round written back first (`sync`):

* s5cmd - `s5cmd cp 's3://bucket/<model>/*' <dest>/` with its defaults (256 workers, 5 parts per file
  in flight): the process's wall time is both its end-to-end and its transfer figure. It verifies
  nothing against the manifest and fsyncs nothing.
* model_sync - `ansible localhost -m inferops.node.model_sync` (connection local, this Python) as a user
  runs it: end to end is the command's wall time (Ansible's start, manifest, plan, space check, the
  parallel ranged GETs, sha256 of every byte, what is made durable, the atomic swap); transfer is the
  module's RV(total.seconds), the download phase.

Prints one JSON line per measurement and a table of medians: model_sync / s5cmd as s5cmd's time over
model_sync's (above 1.0 = model_sync faster).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))
sys.path.insert(0, os.path.join(ROOT, 'collections'))  # the committed link to the checkout

from s3_lab import MotoServer, upload_model  # noqa: E402  pylint: disable=wrong-import-position

UNITS = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}


def size(text):
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def case_files(case):
    """'shards:4x150M' -> {path: bytes}: COUNT files of SIZE random bytes, and a config."""
    kind, spec = case.split(':')
    count, each = spec.split('x')
    files = {'config.pbtxt': ('name: "%s"\n' % kind).encode()}
    for index in range(int(count)):
        files['%s-%04d.bin' % (kind, index)] = os.urandom(size(each))
    return kind, files


def s5cmd(server, bucket, model, dest):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=server.access_key, AWS_SECRET_ACCESS_KEY=server.secret_key,
               AWS_REGION=server.region, LC_ALL='C')
    start = time.monotonic()
    subprocess.run([shutil.which('s5cmd') or os.path.join(os.path.dirname(sys.executable), 's5cmd'),
                    '--endpoint-url', server.endpoint, 'cp', 's3://%s/%s/1/*' % (bucket, model), dest + '/'],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    return seconds, seconds


def model_sync(server, bucket, model, dest):
    args = {'endpoint': server.endpoint, 'region': server.region, 'bucket': bucket,
            'access_key': server.access_key, 'secret_key': server.secret_key, 'destination': dest,
            'models': [{'name': model, 'version': '1'}], 'min_free': 0,
            # A temporary directory, not a mounted models array.
            'require_mount': False}
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_STDOUT_CALLBACK='json',
               ANSIBLE_LOAD_CALLBACK_PLUGINS='1', LC_ALL='C.UTF-8')
    ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
    start = time.monotonic()
    done = subprocess.run([ansible, 'localhost', '-c', 'local', '-e', 'ansible_python_interpreter=' + sys.executable,
                           '-m', 'inferops.node.model_sync', '-a', json.dumps(args)],
                          env=env, cwd=ROOT, check=False, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if done.returncode:
        raise SystemExit('model_sync failed (rc %d): %s%s' % (done.returncode, done.stdout[-2000:], done.stderr[-2000:]))
    result = json.loads(done.stdout)['plays'][0]['tasks'][0]['hosts']['localhost']
    return seconds, result['total']['seconds']


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--case', action='append', help='KIND:COUNTxSIZE (default shards:4x150M, files:1000x256K)')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--dest', default=os.environ.get('TMPDIR', '/var/tmp'), help='where the copies go')
    args = parser.parse_args()
    cases = args.case or ['shards:4x150M', 'files:1000x256K']

    work = tempfile.mkdtemp(prefix='model-sync-s5cmd.', dir=args.dest)
    server = MotoServer()
    try:
        client = server.client()
        client.create_bucket('bench')
        rows, totals = {}, {}
        for case in cases:
            kind, files = case_files(case)
            upload_model(client, 'bench', kind + '/1', files, part_size=64 * 1024 * 1024, tmpdir=work)
            totals[case] = (len(files), sum(len(d) for d in files.values()))
            del files
            for round_ in range(args.repeat):
                order = (('s5cmd', s5cmd), ('model_sync', model_sync))
                for method, run in order if round_ % 2 == 0 else order[::-1]:
                    dest = os.path.join(work, 'dest')
                    shutil.rmtree(dest, ignore_errors=True)
                    os.makedirs(dest)
                    subprocess.run(['sync'], check=True)
                    end_to_end, transfer = run(server, 'bench', kind, dest)
                    row = {'case': case, 'round': round_, 'method': method, 'end_to_end_s': round(end_to_end, 3),
                           'transfer_s': round(transfer, 3)}
                    print(json.dumps(row), flush=True)
                    rows.setdefault((case, method), []).append((end_to_end, transfer))
        shutil.rmtree(os.path.join(work, 'dest'), ignore_errors=True)
        print('\nmachine: %s, %d CPUs, Python %s, %s; %d rounds, medians; destination %s'
              % (platform.platform(), os.cpu_count(), platform.python_version(),
                 subprocess.run(['s5cmd', 'version'], capture_output=True, text=True, check=False).stdout.strip()
                 if shutil.which('s5cmd') else 's5cmd', args.repeat, args.dest))
        print('| case | files | MiB | s5cmd s | model_sync end to end s | transfer s '
              '| end to end vs s5cmd | transfer vs s5cmd |')
        print('| --- | --- | --- | --- | --- | --- | --- | --- |')
        for case in cases:
            s5 = statistics.median(e for e, _t in rows[(case, 's5cmd')])
            e2e = statistics.median(e for e, _t in rows[(case, 'model_sync')])
            transfer = statistics.median(t for _e, t in rows[(case, 'model_sync')])
            count, total = totals[case]
            print('| %s | %d | %.0f | %.2f | %.2f | %.2f | %.2fx | %.2fx |'
                  % (case, count, total / UNITS['M'], s5, e2e, transfer, s5 / e2e, s5 / transfer))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
