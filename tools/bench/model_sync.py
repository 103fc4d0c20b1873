# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync's parallel ranged download against a plain single-stream download of the same objects.

  .venv/bin/python tools/bench/model_sync.py [--sizes 256M,256M,64M,1M] [--repeat 3]
                                             [--connections 8] [--part-size 16M] [--rates 0,50M]

In one run: starts a moto server on loopback (tests/unit/s3_lab.py, the tests' store), uploads one model
(random data, the sizes given, multipart), then for each per-connection rate (0 = unthrottled loopback;
otherwise the counting proxy caps every connection at that many bytes/s, as a remote store caps one stream)
and each round, in alternating order:

* single - one connection, one plain GET per object, streamed to a file (what `curl -o` or a naive
  copy does), no verification;
* model_sync - the module's main() in this process (the whole path: manifest, plan, space check, parallel
  ranged GETs, sha256 of every file, hard links, marker, atomic swap) into a fresh destination.

Prints one JSON line per measurement and a table of medians (seconds, MB/s, model_sync / single).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))
sys.path.insert(0, os.path.join(ROOT, 'collections'))  # the committed link to the checkout

from module_harness import run_module  # noqa: E402  pylint: disable=wrong-import-position
from s3_lab import CountingProxy, MotoServer, upload_model  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.inferops.node.plugins.modules import model_sync  # noqa: E402


def size(text):
    units = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def single_stream(client, bucket, keys, dest):
    """One connection, a whole-object GET per key, written as it arrives."""
    os.makedirs(dest)
    total = 0
    start = time.monotonic()
    for key in keys:
        with open(os.path.join(dest, hashlib.sha1(key.encode()).hexdigest()), 'wb') as handle:
            response = client.request('GET', bucket, key, payload_hash='UNSIGNED-PAYLOAD', stream=True)
            while True:
                data = response.read(1024 * 1024)
                if not data:
                    break
                handle.write(data)
                total += len(data)
    return time.monotonic() - start, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    parser.add_argument('--sizes', default='256M,256M,64M,1M')
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--connections', type=int, default=8)
    parser.add_argument('--part-size', default='16M')
    parser.add_argument('--rates', default='0,50M', help='per-connection caps in bytes/s (0 = none)')
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix='model-sync-bench.', dir=os.environ.get('TMPDIR', '/var/tmp'))
    server = MotoServer()
    proxy = CountingProxy(server.port)
    try:
        client = server.client()
        client.create_bucket('bench')
        files = {'config.pbtxt': b'name: "bench"\n'}
        for index, text in enumerate(args.sizes.split(',')):
            files['1/shard-%d.bin' % index] = os.urandom(size(text))
        total = sum(len(d) for d in files.values())
        upload_model(client, 'bench', 'bench/1', files, part_size=64 * 1024 * 1024, tmpdir=work)
        keys = ['bench/1/%s' % path for path in files]
        del files
        rows = {}
        for rate_text in args.rates.split(','):
            rate = size(rate_text) if rate_text != '0' else 0
            for round_ in range(args.repeat):
                order = ('single', 'model_sync') if round_ % 2 == 0 else ('model_sync', 'single')
                for method in order:
                    dest = os.path.join(work, 'dest')
                    shutil.rmtree(dest, ignore_errors=True)
                    proxy.reset(rate=rate or None)
                    if method == 'single':
                        seconds, got = single_stream(server.client(endpoint=proxy.endpoint), 'bench', keys, dest)
                    else:
                        os.makedirs(dest)
                        start = time.monotonic()
                        failed, result = run_module(model_sync.main, dict(
                            endpoint=proxy.endpoint, region=server.region, bucket='bench',
                            access_key=server.access_key, secret_key=server.secret_key, destination=dest,
                            models=[{'name': 'bench', 'version': '1'}], connections=args.connections,
                            part_size=args.part_size, min_free=0,
                            # The bench writes to a temporary directory, not a mounted models array.
                            require_mount=False))
                        seconds = time.monotonic() - start
                        if failed:
                            raise SystemExit('model_sync failed: %s' % result['msg'])
                        got = result['total']['bytes_downloaded']
                    assert got == total, (method, got, total)
                    row = {'rate': rate, 'round': round_, 'method': method, 'seconds': round(seconds, 3),
                           'mb_per_s': round(total / seconds / 1e6, 1), 'served': proxy.served}
                    print(json.dumps(row), flush=True)
                    rows.setdefault((rate, method), []).append(seconds)
        print('\nmachine: %s, %d CPUs, Python %s; model %d files, %d bytes (%s); %d rounds, medians; '
              'model_sync connections=%d part_size=%s'
              % (platform.platform(), os.cpu_count(), platform.python_version(), len(keys), total, args.sizes,
                 args.repeat, args.connections, args.part_size))
        print('| per-connection cap | single stream s | MB/s | model_sync s | MB/s | model_sync / single |')
        print('| --- | --- | --- | --- | --- | --- |')
        for rate_text in args.rates.split(','):
            rate = size(rate_text) if rate_text != '0' else 0
            single = statistics.median(rows[(rate, 'single')])
            parallel = statistics.median(rows[(rate, 'model_sync')])
            print('| %s | %.2f | %.0f | %.2f | %.0f | %.2fx |' % (
                '%s/s (%.1f MB/s)' % (rate_text, rate / 1e6) if rate else 'none (loopback)', single, total / single / 1e6,
                parallel, total / parallel / 1e6, single / parallel))
    finally:
        proxy.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
