#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: model_manifest
short_description: Compute a model directory's sha256 manifest and publish the model to an S3-compatible store
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Hashes every regular file under O(path) (symlinks and special files are refused) and returns the manifest
    M(inferops.node.model_sync) verifies against - C({"format" "inferops-model-manifest/1", "files" [{path,
    size, sha256}]}), see C(docs/model_sync.md) in the collection.
  - With O(upload=true), uploads the files under O(prefix) (multipart above O(part_size)) and then the manifest
    C(<prefix>/inferops-manifest.json) last, so a node never reads a manifest whose files are not all there.
    When the store already holds a manifest listing the same files (paths, sizes, sha256), nothing is uploaded
    and the task reports no change.
  - The same logic as the checkout's C(tools/model_manifest.py), for a model build host managed by Ansible.
extends_documentation_fragment:
  - inferops.node.s3_store
options:
  path:
    description:
      - The model directory (a Triton model - C(config.pbtxt), C(<version>/...)).
    type: path
    required: true
  model:
    description:
      - Model name recorded in the manifest.
    type: str
  version:
    description:
      - Version recorded in the manifest.
    type: str
  upload:
    description:
      - Upload the files and the manifest. V(false) only computes the manifest.
    type: bool
    default: false
  manifest_only:
    description:
      - Upload only the manifest (the files are already in the store; their bytes must be those of O(path), or
        every sync refuses them).
    type: bool
    default: false
  endpoint:
    description:
      - URL of the S3-compatible endpoint; falls back to C(AWS_ENDPOINT_URL). Required with O(upload=true).
    type: str
  bucket:
    description:
      - Bucket. Required with O(upload=true).
    type: str
  prefix:
    description:
      - Key prefix of this model version, e.g. V(resnet50/3) (model_sync's default is C(<name>/<version>)).
        Required with O(upload=true).
    type: str
  part_size:
    description:
      - Multipart part size, 5M-5G (bytes or a binary unit).
    type: raw
    default: 64M
attributes:
  check_mode:
    description: Computes the manifest and reads the store's manifest; uploads nothing.
    support: full
  diff_mode:
    description: Returns the store's manifest file list before and after.
    support: full
  platform:
    description: Any POSIX host with Python 3.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.model_sync
'''

EXAMPLES = r'''
- name: Publish a freshly built model version
  inferops.node.model_manifest:
    path: /build/out/resnet50
    model: resnet50
    version: "2026-11-30"
    upload: true
    endpoint: https://s3.eu-central-1.amazonaws.com
    region: eu-central-1
    bucket: acme-models
    prefix: resnet50/2026-11-30
  environment:
    AWS_ACCESS_KEY_ID: "{{ vault_publish_access_key }}"
    AWS_SECRET_ACCESS_KEY: "{{ vault_publish_secret_key }}"

- name: Only compute the manifest
  inferops.node.model_manifest:
    path: /build/out/resnet50
  register: manifest
'''

RETURN = r'''
manifest:
  description: The manifest (what is uploaded as C(inferops-manifest.json)).
  returned: always
  type: dict
manifest_sha256:
  description: sha256 of the manifest as uploaded (what model_sync's marker records); V(null) when nothing was uploaded.
  returned: always
  type: str
files:
  description: Number of files.
  returned: always
  type: int
bytes:
  description: Total size of the files.
  returned: always
  type: int
uploaded_bytes:
  description: Bytes of files uploaded (V(0) in check mode, when current, or with O(manifest_only)).
  returned: always
  type: int
source:
  description: C(s3://bucket/prefix) of the model, with O(upload=true).
  returned: when O(upload=true)
  type: str
'''

from ansible.module_utils.basic import AnsibleModule, env_fallback

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import (
    MANIFEST_NAME,
    ManifestError,
    build_manifest,
    dump_manifest,
    manifest_digest,
    parse_manifest,
    publish,
    same_files,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import S3Client, S3Error
from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import PageCacheError, parse_size
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3_arguments import CONNECTION_ARGUMENT_SPEC

ARGUMENT_SPEC = dict(
    CONNECTION_ARGUMENT_SPEC,
    path=dict(type='path', required=True),
    model=dict(type='str'),
    version=dict(type='str'),
    upload=dict(type='bool', default=False),
    manifest_only=dict(type='bool', default=False),
    endpoint=dict(type='str', fallback=(env_fallback, ['AWS_ENDPOINT_URL'])),
    bucket=dict(type='str'),
    prefix=dict(type='str'),
    part_size=dict(type='raw', default='64M'),
)


def listing(manifest):
    if not manifest:
        return 'absent\n'
    files = sorted(manifest['files'], key=lambda f: f['path'])
    return ''.join('%s %d %s\n' % (f['path'], f['size'], f['sha256']) for f in files)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[('upload', True, ('endpoint', 'bucket', 'prefix'))])
    p = module.params
    try:
        part_size = parse_size(p['part_size'], 'part_size')
    except PageCacheError as exc:
        module.fail_json(msg=exc.msg)
    if not 5 * 1024 * 1024 <= part_size <= 5 * 1024 ** 3:
        module.fail_json(msg='part_size = %r: S3 multipart parts are 5M to 5G' % (p['part_size'],))
    try:
        manifest = build_manifest(p['path'], p['model'], p['version'])
    except (ManifestError, OSError) as exc:
        module.fail_json(msg='path %s: %s' % (p['path'], getattr(exc, 'msg', exc)))
    result = dict(changed=False, manifest=manifest, manifest_sha256=None, files=len(manifest['files']),
                  bytes=sum(f['size'] for f in manifest['files']), uploaded_bytes=0)
    if p['upload']:
        prefix = p['prefix'].strip('/')
        result['source'] = 's3://%s/%s' % (p['bucket'], prefix)
        client = S3Client(p['endpoint'], p['region'], p['access_key'] or '', p['secret_key'] or '',
                          p['session_token'], addressing_style=p['addressing_style'],
                          validate_certs=p['validate_certs'])
        try:
            try:
                data, _headers = client.get_object(p['bucket'], '%s/%s' % (prefix, MANIFEST_NAME))
                remote = parse_manifest(data)
            except S3Error as exc:
                if exc.code != 'NoSuchKey':
                    raise
                remote, data = None, None
            except ManifestError:
                remote, data = None, None  # an unreadable manifest is replaced
            if remote is not None and same_files(remote, manifest):
                result['manifest_sha256'] = manifest_digest(data)
            else:
                result['changed'] = True
                if module._diff:
                    result['diff'] = {'before': listing(remote), 'after': listing(manifest)}
                if not module.check_mode:
                    _key, sent = publish(client, p['bucket'], prefix, p['path'], manifest, part_size,
                                         manifest_only=p['manifest_only'])
                    result['uploaded_bytes'] = sent
                    result['manifest_sha256'] = manifest_digest(dump_manifest(manifest))
        except S3Error as exc:
            module.fail_json(msg=exc.msg, **result)
        except (IOError, OSError) as exc:
            module.fail_json(msg='reading %s: %s' % (p['path'], exc), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
