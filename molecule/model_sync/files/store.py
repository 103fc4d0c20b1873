# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test glue for molecule/model_sync: a moto server that outlives this process, and test models.

  store.py start --work DIR     # moto on a free loopback port; DIR/store.json = {endpoint, pid, keys}
  store.py model --work DIR --name N --version V --seed S [--size BYTES]   # DIR/src/N-V: a Triton model dir
  store.py stop --work DIR      # ends the server started by start (its pid from store.json)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))
sys.path.insert(0, os.path.join(ROOT, '.cache', 'collections'))

from s3_lab import MotoServer  # noqa: E402  pylint: disable=wrong-import-position


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('command', choices=['start', 'model', 'stop'])
    parser.add_argument('--work', required=True)
    parser.add_argument('--name')
    parser.add_argument('--version')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--size', type=int, default=3 * 1024 * 1024 + 7)
    args = parser.parse_args()
    state = os.path.join(args.work, 'store.json')
    if args.command == 'start':
        server = MotoServer(detach=True)
        server.client().create_bucket('models')
        with open(state, 'w') as handle:
            json.dump({'endpoint': server.endpoint, 'region': server.region, 'pid': server.proc.pid,
                       'access_key': server.access_key, 'secret_key': server.secret_key}, handle)
        print(json.dumps({'changed': True, 'endpoint': server.endpoint}))
    elif args.command == 'model':
        src = os.path.join(args.work, 'src', '%s-%s' % (args.name, args.version))
        os.makedirs(os.path.join(src, '1'), exist_ok=True)
        rng = random.Random(args.seed)
        with open(os.path.join(src, 'config.pbtxt'), 'w') as handle:
            handle.write('name: "%s"\nbackend: "python"\n# %s\n' % (args.name, args.version))
        with open(os.path.join(src, '1', 'model.bin'), 'wb') as handle:
            handle.write(bytes(rng.getrandbits(8) for _byte in range(4096)) * (args.size // 4096) + b'x' * (args.size % 4096))
        print(json.dumps({'changed': True, 'path': src}))
    else:
        changed = False
        if os.path.exists(state):
            with open(state) as handle:
                pid = json.load(handle)['pid']
            try:
                os.kill(pid, signal.SIGTERM)
                changed = True
            except ProcessLookupError:
                pass
            os.unlink(state)
        print(json.dumps({'changed': changed}))


if __name__ == '__main__':
    main()
