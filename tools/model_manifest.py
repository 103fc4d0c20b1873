# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compute, check and upload the manifest that inferops.node.model_sync verifies a model against.

  python tools/model_manifest.py show   DIR [--model NAME --version V]        # print the manifest (JSON)
  python tools/model_manifest.py verify DIR MANIFEST                          # DIR matches MANIFEST? (exit 1 if not)
  python tools/model_manifest.py upload DIR --endpoint URL --bucket B --prefix P [--region R] [--part-size 64M]
                                     [--manifest-only]

`upload` hashes every file of DIR, uploads the files (multipart above --part-size), then the manifest
`<prefix>/inferops-manifest.json` last, so a sync never sees a manifest whose files are not all there yet.
--manifest-only uploads just the manifest, for files that are already in the store (their bytes must be
those of DIR: model_sync refuses any file whose sha256 differs).
Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. Standard library only:
it loads the collection's own module_utils files, so it runs in a model build pipeline without Ansible.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UTILS = os.path.join(HERE, '..', 'plugins', 'module_utils')


def _load(name):
    # Registered under its collection name too: model_sync/manifest.py imports model_sync/s3.py's endpoint rule
    # by that name, and finds the file loaded here (no Ansible, no collection path needed).
    spec = importlib.util.spec_from_file_location(name, os.path.join(UTILS, *name.split('.')) + '.py')
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault('ansible_collections.inferops.node.plugins.module_utils.' + name, module)
    spec.loader.exec_module(module)
    return module


s3 = _load('model_sync.s3')
manifest_lib = _load('model_sync.manifest')


def parse_size(text):
    match = re.match(r'^(\d+)([KMG]?)(i?B)?$', text, re.I)
    if not match:
        raise argparse.ArgumentTypeError('a size such as 64M or 1G')
    size = int(match.group(1)) * 1024 ** ' KMG'.index((match.group(2) or ' ').upper())
    if not 5 * 1024 * 1024 <= size <= 5 * 1024 ** 3:
        raise argparse.ArgumentTypeError('S3 multipart parts are 5M to 5G')
    return size


def verify(directory, manifest):
    """Problems of a directory against a manifest (empty list: it matches)."""
    problems = []
    listed = set()
    for entry in manifest['files']:
        path = os.path.join(directory, entry['path'])
        listed.add(entry['path'])
        if not os.path.isfile(path):
            problems.append('%s: missing' % entry['path'])
        elif os.path.getsize(path) != entry['size']:
            problems.append('%s: %d bytes, manifest says %d' % (entry['path'], os.path.getsize(path), entry['size']))
        elif manifest_lib.file_sha256(path) != entry['sha256']:
            problems.append('%s: sha256 differs from the manifest' % entry['path'])
    for item in manifest_lib.build_manifest(directory)['files'] if os.path.isdir(directory) else []:
        if item['path'] not in listed:
            problems.append('%s: not in the manifest' % item['path'])
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    sub = parser.add_subparsers(dest='command', required=True)
    show = sub.add_parser('show', help='print the manifest of a directory')
    check = sub.add_parser('verify', help='check a directory against a manifest file')
    upload = sub.add_parser('upload', help='upload a directory and its manifest')
    for p in (show, check, upload):
        p.add_argument('directory')
    check.add_argument('manifest')
    for p in (show, upload):
        p.add_argument('--model')
        p.add_argument('--version')
    upload.add_argument('--endpoint', default=os.environ.get('AWS_ENDPOINT_URL'), required='AWS_ENDPOINT_URL' not in
                        os.environ)
    upload.add_argument('--region', default=os.environ.get('AWS_REGION') or os.environ.get('AWS_DEFAULT_REGION') or
                        'us-east-1')
    upload.add_argument('--bucket', required=True)
    upload.add_argument('--prefix', required=True, help='key prefix of the model, e.g. resnet50/3')
    upload.add_argument('--part-size', type=parse_size, default=64 * 1024 * 1024)
    upload.add_argument('--addressing-style', choices=['path', 'virtual'], default='path')
    upload.add_argument('--manifest-only', action='store_true')
    args = parser.parse_args(argv)

    try:
        if args.command == 'verify':
            with open(args.manifest, 'rb') as handle:
                manifest = manifest_lib.parse_manifest(handle.read())
            problems = verify(args.directory, manifest)
            for problem in problems:
                print(problem)
            print('%s: %s' % (args.directory, 'differs from the manifest' if problems else 'matches the manifest'))
            return 1 if problems else 0
        manifest = manifest_lib.build_manifest(args.directory, args.model, args.version)
        data = manifest_lib.dump_manifest(manifest)
        if args.command == 'show':
            sys.stdout.write(data.decode())
            return 0
        access, secret = os.environ.get('AWS_ACCESS_KEY_ID'), os.environ.get('AWS_SECRET_ACCESS_KEY')
        if not access or not secret:
            print('model_manifest: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY', file=sys.stderr)
            return 2
        client = s3.S3Client(args.endpoint, args.region, access, secret, os.environ.get('AWS_SESSION_TOKEN'),
                             addressing_style=args.addressing_style)
        start = time.monotonic()

        def report(entry):
            where = 's3://%s/%s/%s' % (args.bucket, args.prefix.strip('/'), entry['path'])
            print('uploaded %s (%d bytes)' % (where, entry['size']))

        key, sent = manifest_lib.publish(client, args.bucket, args.prefix, args.directory, manifest, args.part_size,
                                         manifest_only=args.manifest_only, report=report)
        print(json.dumps({'manifest': 's3://%s/%s' % (args.bucket, key), 'files': len(manifest['files']),
                          'bytes': sum(f['size'] for f in manifest['files']), 'uploaded_bytes': sent,
                          'seconds': round(time.monotonic() - start, 3),
                          'manifest_sha256': manifest_lib.manifest_digest(data)}))
        return 0
    except (manifest_lib.ManifestError, s3.S3Error, OSError) as exc:
        print('model_manifest: %s' % getattr(exc, 'msg', exc), file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
