# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test glue for molecule/model_sync and molecule/serving: a moto server that outlives this process, and
test models (the scenarios start and publish them with ../tasks/s3_store.yml).

  store.py start --work DIR     # moto on a free loopback port; DIR/store.json = {endpoint, pid, keys}
  store.py model --work DIR --name N --version V --seed S [--size BYTES]   # DIR/src/N-V: a Triton model dir
  store.py array --work DIR     # DIR/models: an XFS on a loop device (DIR/array.img), mounted
  store.py recreate --work DIR  # unmount it, detach it, a new empty XFS on a new image and loop device, mounted
  store.py unmount --work DIR   # unmount it (the array not mounted: DIR/models is an empty directory again)
  store.py mount --work DIR     # mount the same XFS again (after unmount)
  store.py stop --work DIR      # ends the server started by start (its pid from store.json), unmounts
                                # DIR/models and detaches the loop device

Why a loop-device XFS for the models array: it is the filesystem md_raid_xfs makes on a node, so the
sync's hard links, renameat2(RENAME_EXCHANGE), posix_fallocate and statvfs free space run on the real
thing, and `recreate` is what a node goes through when its array is lost and re-created - a new device
with a new filesystem (a new UUID) mounted empty at the same place. A new image on a new loop device,
not mkfs.xfs -f on the old one: a mount namespace created while the old filesystem was mounted (a
sandboxed service, a container) keeps it alive after the umount here, and mkfs then fails with
"Device or resource busy" (seen once in a lab run). A tmpfs would be a separate filesystem too, but not the one a
node serves from; deleting the model directories or the markers would keep the same filesystem and
could leave behind what a re-creation does not (the staging area, hidden files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'unit'))
sys.path.insert(0, os.path.join(ROOT, 'collections'))  # the committed link to the checkout

from s3_lab import MotoServer  # noqa: E402  pylint: disable=wrong-import-position

# Sparse; mkfs.xfs refuses a filesystem under 300 MiB. About 65 MiB of it is written (the log).
ARRAY_SIZE = 320 * 1024 * 1024


def run(*argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, LC_ALL='C')).stdout.strip()


def filesystem(mountpoint):
    """source, fstype and uuid of what is mounted exactly at mountpoint, or None."""
    try:
        out = run('findmnt', '--json', '--output', 'SOURCE,FSTYPE,UUID', '--mountpoint', mountpoint)
    except subprocess.CalledProcessError:  # findmnt exits 1 when nothing is mounted there
        return None
    return json.loads(out)['filesystems'][0]


def make_xfs(device, mountpoint):
    run('mkfs.xfs', '-q', '-f', device)
    run('mount', '-t', 'xfs', device, mountpoint)
    return dict(filesystem(mountpoint), entries=sorted(os.listdir(mountpoint)))


def attach(image):
    """A new sparse image file, attached to a free loop device; returns the device."""
    with open(image, 'wb') as handle:
        handle.truncate(ARRAY_SIZE)
    return run('losetup', '--find', '--show', image)


def loop_devices(image):
    """Loop devices backed by image (losetup -j), also one attached by a run that died before saving it."""
    if not os.path.exists(image):
        return []
    return [line.split(':', 1)[0] for line in run('losetup', '--associated', image).splitlines() if line]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('command', choices=['start', 'model', 'array', 'recreate', 'unmount', 'mount', 'stop'])
    parser.add_argument('--work', required=True)
    parser.add_argument('--name')
    parser.add_argument('--version')
    parser.add_argument('--seed', type=int, default=1)
    # python: a python-backend model with the empty __init__.py such models often carry (a zero-byte
    # object); onnx: an ONNX-shaped model (platform onnxruntime_onnx, 1/model.onnx), whose config
    # triton_compose must leave as published.
    parser.add_argument('--kind', choices=['python', 'onnx'], default='python')
    parser.add_argument('--size', type=int, default=3 * 1024 * 1024 + 7)
    args = parser.parse_args()
    state = os.path.join(args.work, 'store.json')
    models = os.path.join(args.work, 'models')
    image = os.path.join(args.work, 'array.img')
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
        runtime = 'platform: "onnxruntime_onnx"' if args.kind == 'onnx' else 'backend: "python"'
        with open(os.path.join(src, 'config.pbtxt'), 'w') as handle:
            handle.write('name: "%s"\n%s\n# %s\n' % (args.name, runtime, args.version))
        if args.kind == 'python':
            open(os.path.join(src, '1', '__init__.py'), 'w').close()
        with open(os.path.join(src, '1', 'model.onnx' if args.kind == 'onnx' else 'model.bin'), 'wb') as handle:
            handle.write(bytes(rng.getrandbits(8) for _byte in range(4096)) * (args.size // 4096) + b'x' * (args.size % 4096))
        print(json.dumps({'changed': True, 'path': src}))
    elif args.command == 'array':
        os.makedirs(models, mode=0o755, exist_ok=True)
        print(json.dumps({'changed': True, 'filesystem': make_xfs(attach(image), models)}))
    elif args.command == 'recreate':
        before = filesystem(models)
        # mkfs only the loop device that `array` attached to this work directory's image, nothing else.
        if not before or before['source'] not in loop_devices(image):
            sys.exit('%s is not the XFS of %s (store.py array): %s' % (models, image, before))
        run('umount', models)
        # Detached once nothing holds it any more (the kernel's autoclear); the image is unlinked.
        run('losetup', '--detach', before['source'])
        os.unlink(image)
        after = make_xfs(attach(image), models)
        print(json.dumps({'changed': True, 'before': before, 'after': after}))
    elif args.command == 'unmount':
        before = filesystem(models)
        if not before or before['source'] not in loop_devices(image):
            sys.exit('%s is not the XFS of %s (store.py array): %s' % (models, image, before))
        run('umount', models)
        print(json.dumps({'changed': True, 'before': before, 'entries': sorted(os.listdir(models))}))
    elif args.command == 'mount':
        devices = loop_devices(image)
        if filesystem(models) or len(devices) != 1:
            sys.exit('%s: already mounted (%s) or not one loop device of %s: %s'
                     % (models, filesystem(models), image, devices))
        run('mount', '-t', 'xfs', devices[0], models)
        print(json.dumps({'changed': True, 'after': dict(filesystem(models), entries=sorted(os.listdir(models)))}))
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
        if filesystem(models):
            run('umount', models)
            changed = True
        for device in loop_devices(image):
            run('losetup', '--detach', device)
            changed = True
        print(json.dumps({'changed': changed}))


if __name__ == '__main__':
    main()
