#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: model_sync
short_description: Make a local model repository match model versions in an S3-compatible store
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Each model of O(models) is a key prefix in a bucket (default C(<name>/<version>)) holding the model's files
    and a manifest C(inferops-manifest.json) listing every file with its size and sha256 (written by the
    helper C(tools/model_manifest.py)). The module makes C(<destination>/<name>) hold exactly those files.
  - Integrity - every downloaded file is hashed and compared with the manifest; a file that does not match is
    deleted and its model is not touched. ETags are used only to notice an object replaced during a download
    (C(If-Match)), never as a digest (a multipart ETag is not one).
  - Atomic - files are downloaded into a staging area on the same filesystem (O(staging_dir)), verified, and the
    model's new tree (hard links, files unchanged since the last sync are reused) is swapped with the live
    directory in one C(renameat2(RENAME_EXCHANGE)), so Triton sees the old model or the new one, never a mix.
  - Resumable - the parts of a file larger than O(part_size) are journalled after they reach the disk; an
    interrupted sync downloads only the parts not journalled (a smaller file again whole), and files already
    verified are not downloaded again (they were made durable by one C(syncfs) before they counted as verified).
  - Fast when nothing changed - a marker (C(.inferops-model-sync.json)) in each model directory records the
    manifest's sha256; a model whose manifest is unchanged and whose files are all present with their sizes is
    skipped without reading them (one small GET of the manifest per model).
  - Safe - refuses a destination on the root filesystem (the models array not mounted, O(require_mount));
    refuses before downloading anything when the destination lacks the space (naming each model and the
    shortfall); replaces or removes only directories that carry its marker (O(replace_unmanaged) to adopt one);
    removes models only with O(models[].state=absent) or O(prune).
  - Each model is read from its own O(models[].endpoint) when it names one, else from O(endpoint); one set of
    credentials serves every endpoint of a call.
  - Fast - files are fetched as byte ranges of O(part_size) by O(connections) threads, each on its own
    keep-alive connection; the result reports bytes, seconds and MB/s.
  - The S3 client is the standard library (C(http.client) + a Signature Version 4 signer in
    C(module_utils/model_sync/s3.py)), so the managed node needs no botocore/boto3.
  - Made for C(async) tasks too - with O(status_file), what the run is doing is written as JSON every
    O(status_interval) seconds for M(inferops.node.job_progress), which prints its C(line).
extends_documentation_fragment:
  - inferops.node.s3_store
  - inferops.node.status_file
options:
  status_file:
    description:
      - Path of a JSON progress file, rewritten atomically every O(status_interval) seconds while the module
        runs (not in check mode), for an C(async) task followed by M(inferops.node.job_progress).
      - C(line) reads, for example, C(downloading 42.0 % (1.2 GiB of 2.9 GiB, 3/14 files, 512.3 MB/s, eta 3.4 s,
        2.1 s elapsed)); the bytes and files are those this run has to fetch (a resumed file counts only its
        missing parts), the rate is since the download began.
      - Other keys - C(state) (V(planning), V(downloading), V(placing), V(done) or V(failed)), C(bytes_done),
        C(bytes_total), C(files_done), C(files_total), C(percent), C(mb_per_s), C(eta_seconds),
        C(elapsed_seconds), C(started_at), C(updated_at), C(updated_epoch), C(pid).
      - Its directory must exist.
    type: path
    version_added: 0.2.0
  endpoint:
    description:
      - URL of the S3-compatible endpoint (V(https://s3.eu-west-1.amazonaws.com), V(http://minio.lan:9000)) of
        every model that does not name its own O(models[].endpoint).
      - Falls back to the environment variable C(AWS_ENDPOINT_URL).
      - An C(http://) or C(https://) URL with a host, checked before anything is read or written.
    type: str
    required: true
  bucket:
    description:
      - Bucket of every model that does not name its own O(models[].bucket).
    type: str
  ca_path:
    description:
      - CA bundle to verify the endpoint with, instead of the system's.
    type: path
  destination:
    description:
      - The model repository (Triton's C(--model-repository) on the host). Must exist - it is the models
        array's mount point; the module never creates it, so a missing mount cannot fill the root filesystem.
      - With O(require_mount) (the default) it must also be on a filesystem of its own - see there.
    type: path
    default: /data/models
  require_mount:
    description:
      - Refuse, before reading the store or writing anything (check mode too), a O(destination) that is on the
        root filesystem - neither it nor a directory above it (below C(/)) is a mount point. That is the
        models array not mounted (assembly failed at boot with C(nofail) in fstab, an operator's C(umount)) -
        its empty mount-point directory is still there, and a sync would fill the root filesystem.
      - Read from C(/proc/self/mountinfo), symlinks resolved; a bind mount counts as a mount point.
      - V(false) when writing the models to the root filesystem is intended (a test host, a small model).
    type: bool
    default: true
  staging_dir:
    description:
      - Staging area; default C(<destination>/.inferops-model-sync). Must be on the same mounted filesystem as
        O(destination) - files are renamed and hard-linked from it into place, which works (atomically) only
        within one mount. Another filesystem, or another mount of the same one (a bind mount), is refused before
        anything is read from the store or written (check mode too), naming both filesystems. Removed after a sync without failures; kept after a failure,
        so the next run resumes. Triton may log it as a model it cannot load while it exists (with
        C(--exit-on-error=false) that is all).
    type: path
  models:
    description:
      - The models this host holds, handled in one call.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - Model name - the directory under O(destination).
        type: str
        required: true
      version:
        description:
          - The model's version in the store (a release name or number). Required for V(present).
        type: str
      prefix:
        description:
          - Key prefix of the model in the bucket; default O(prefix_template) filled in.
        type: str
      bucket:
        description:
          - Bucket of this model; default O(bucket).
        type: str
      endpoint:
        description:
          - URL of the S3-compatible endpoint that holds this model; default O(endpoint). The call's credentials
            (O(access_key), O(secret_key), O(session_token)), O(region), O(addressing_style), O(validate_certs)
            and O(ca_path) apply to it too.
          - Checked as O(endpoint) is (an C(http://) or C(https://) URL with a host), before anything is read or
            written.
        type: str
        version_added: 0.2.0
      state:
        description:
          - V(present) syncs the model; V(absent) removes its directory if the module put it there.
        type: str
        choices: [present, absent]
        default: present
  prefix_template:
    description:
      - Key prefix of a model without O(models[].prefix); C({name}) and C({version}) are replaced.
    type: str
    default: "{name}/{version}"
  prune:
    description:
      - Also remove model directories under O(destination) that carry the module's marker but are not in
        O(models). Directories without the marker are never removed.
    type: bool
    default: false
  replace_unmanaged:
    description:
      - A model directory that exists without the marker is refused by default (someone else put it there).
        With V(true) it is replaced, and the old tree is kept in C(<staging_dir>/replaced/).
    type: bool
    default: false
  verify_existing:
    description:
      - Hash the files already in place instead of trusting the marker and the sizes (reads every byte).
    type: bool
    default: false
  connections:
    description:
      - Parallel connections (download threads), 1-64.
    type: int
    default: 8
  part_size:
    description:
      - Size of one ranged GET, bytes or a binary unit (V(64M)); 1 MiB to 5 GiB. Also the unit of resume.
    type: raw
    default: 64M
  retries:
    description:
      - Retries of a part after a connection error, a time-out or a 5xx answer (with back-off).
    type: int
    default: 3
  timeout:
    description:
      - Socket time-out in seconds for every request.
    type: float
    default: 60
  min_free:
    description:
      - Space that must stay free on the destination after the downloads, bytes, a binary unit (V(10G)) or a
        percentage of the filesystem (V(5%)).
    type: raw
    default: 1G
attributes:
  check_mode:
    description: Reads the manifests and reports what would be downloaded, reused, replaced or removed; downloads
      and writes nothing.
    support: full
  diff_mode:
    description: Returns each model's version, manifest digest, file count and size before and after, and which files are
      missing or changed in the live tree when that is why a model is synced again.
    support: full
  platform:
    description: Linux (C(renameat2), C(posix_fallocate), C(fdatasync), C(syncfs)).
    support: full
    platforms: posix
notes:
  - Run with the same user as the files' owner (usually root with C(become)).
  - Two syncs into one destination at the same time are refused (a lock file in C(/run/lock)).
  - MB/s figures are decimal (10^6 bytes per second).
seealso:
  - name: Model sync
    description: docs/model_sync.md in the collection - manifest format, failure modes, the helper.
    link: https://github.com/inferops/inferops.node/blob/main/docs/model_sync.md
'''

EXAMPLES = r'''
- name: Hold two models from the store on the models array
  inferops.node.model_sync:
    endpoint: https://s3.eu-central-1.amazonaws.com
    region: eu-central-1
    bucket: acme-models
    destination: /data/models
    models:
      - {name: resnet50, version: "2026-11-30"}
      - {name: llama3-8b-trt, version: "7", prefix: llm/llama3-8b/7}
      # Another store (same credentials): the model's own endpoint and bucket.
      - {name: bert-base, version: "2", endpoint: "http://minio.lan:9000", bucket: nlp-models}
    connections: 16
    part_size: 128M
  environment:
    AWS_ACCESS_KEY_ID: "{{ vault_models_access_key }}"
    AWS_SECRET_ACCESS_KEY: "{{ vault_models_secret_key }}"

- name: Remove an old model (only if model_sync put it there) and anything else it put there
  inferops.node.model_sync:
    endpoint: http://minio.lan:9000
    bucket: models
    models:
      - {name: resnet50, version: "2026-11-30"}
      - {name: bert-old, state: absent}
    prune: true
'''

RETURN = r'''
status_file:
  description: The progress file, when O(status_file) was given (not in check mode).
  returned: when O(status_file) is set, not in check mode
  type: str
  sample: /run/inferops-model-sync.json
destination:
  description: The model repository.
  returned: always
  type: str
  sample: /data/models
models:
  description: One entry per model of O(models) and per pruned directory.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Model name.
      type: str
      sample: resnet50
    version:
      description: Version asked for (V(null) for a removal).
      type: str
      sample: "2026-11-30"
    action:
      description: V(current) (nothing to do), V(synced), V(would_sync) (check mode), V(removed),
        V(would_remove), V(absent) (nothing to remove), V(failed).
      type: str
      sample: synced
    source:
      description: C(s3://bucket/prefix) of the model.
      type: str
      sample: s3://acme-models/resnet50/2026-11-30
    endpoint:
      description: The endpoint the model was read from (its own O(models[].endpoint) or O(endpoint); V(null) for a
        removal).
      type: str
      sample: https://s3.eu-central-1.amazonaws.com
      version_added: 0.2.0
    manifest_sha256:
      description: sha256 of the manifest the directory now matches (recorded in the marker).
      type: str
    files:
      description: Files in the manifest.
      type: int
    bytes:
      description: Size of the model.
      type: int
    bytes_to_download:
      description: Bytes that had to be downloaded (planned).
      type: int
    bytes_downloaded:
      description: Bytes downloaded for this model in this run.
      type: int
    bytes_reused:
      description: Bytes of files already in place and unchanged (hard-linked, not downloaded).
      type: int
    bytes_resumed:
      description: Bytes found in the staging area from an earlier interrupted run (not downloaded again).
      type: int
    swap:
      description: How the new tree was put in place - V(exchange) (atomic), V(rename) (two renames), V(create).
      type: str
    error:
      description: Why the model failed (it was left as it was).
      type: str
total:
  description: Totals of the run.
  returned: always
  type: dict
  contains:
    bytes_downloaded:
      description: Bytes received from the store.
      type: int
    seconds:
      description: Wall time of the download phase (including verification).
      type: float
    mb_per_s:
      description: RV(total.bytes_downloaded) / RV(total.seconds), decimal MB/s.
      type: float
    requests:
      description: Ranged GET requests sent (retries included).
      type: int
    retries:
      description: Parts retried after a transient error.
      type: int
    connections:
      description: Parallel connections used.
      type: int
    part_size:
      description: Part size in bytes.
      type: int
    free_before:
      description: Free bytes on the destination before the run.
      type: int
'''

import errno
import fcntl
import hashlib
import os
import shutil
import time

from ansible.module_utils.basic import AnsibleModule, env_fallback

from ansible_collections.inferops.node.plugins.module_utils.model_sync.download import (
    Downloader,
    SyncProgress,
    place_model,
    remove_tree,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import (
    MANIFEST_NAME,
    MARKER_FORMAT,
    ManifestError,
    manifest_digest,
    model_errors,
    normalize_models,
    parse_manifest,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.mount import (
    MOUNTINFO,
    mount_problem,
    parse_mountinfo,
    staging_problem,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.plan import (
    Staging,
    plan_model,
    read_marker,
    space_problem,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import S3Client, S3Error, endpoint_problem
from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import PageCacheError, parse_size
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3_arguments import CONNECTION_ARGUMENT_SPEC
from ansible_collections.inferops.node.plugins.module_utils.common.status_file import (
    ARGUMENT_SPEC as STATUS_ARGUMENT_SPEC,
    StatusWriter,
    option_problems,
)

MIB = 1024 * 1024
LOCK_DIR = '/run/lock'
# Credentials the store refuses: no model can be read, stop before anything. (AccessDenied and NoSuchBucket
# can be one bucket's or one prefix's: they fail that model only.)
FATAL = ('InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'AuthorizationHeaderMalformed')

ARGUMENT_SPEC = dict(
    CONNECTION_ARGUMENT_SPEC,
    endpoint=dict(type='str', required=True, fallback=(env_fallback, ['AWS_ENDPOINT_URL'])),
    bucket=dict(type='str'),
    ca_path=dict(type='path'),
    destination=dict(type='path', default='/data/models'),
    require_mount=dict(type='bool', default=True),
    staging_dir=dict(type='path'),
    models=dict(type='list', elements='dict', required=True, options=dict(
        name=dict(type='str', required=True),
        version=dict(type='str'),
        prefix=dict(type='str'),
        bucket=dict(type='str'),
        endpoint=dict(type='str'),
        state=dict(type='str', choices=['present', 'absent'], default='present'),
    )),
    prefix_template=dict(type='str', default='{name}/{version}'),
    prune=dict(type='bool', default=False),
    replace_unmanaged=dict(type='bool', default=False),
    verify_existing=dict(type='bool', default=False),
    connections=dict(type='int', default=8),
    part_size=dict(type='raw', default='64M'),
    retries=dict(type='int', default=3),
    timeout=dict(type='float', default=60.0),
    min_free=dict(type='raw', default='1G'),
    **STATUS_ARGUMENT_SPEC
)


class Refusal(Exception):
    def __init__(self, msg, **extra):
        super().__init__(msg)
        self.msg = msg
        self.extra = extra


def validate(params):
    models = [dict((k, v) for k, v in m.items() if v is not None and not (k == 'state' and v == 'present'))
              for m in params['models']]
    problems = model_errors(models, 'models')
    problem = endpoint_problem(params['endpoint'])
    if problem:
        problems.insert(0, 'endpoint = %r: %s' % (params['endpoint'], problem))
    for index, model in enumerate(models):
        if model.get('state', 'present') == 'present' and not (model.get('bucket') or params['bucket']):
            problems.append('models[%d] (name=%s): no bucket - set bucket or models[%d].bucket'
                            % (index, model.get('name'), index))
    if not 1 <= params['connections'] <= 64:
        problems.append('connections = %d: must be 1-64' % params['connections'])
    if params['retries'] < 0:
        problems.append('retries = %d: must be 0 or more' % params['retries'])
    if params['timeout'] <= 0:
        problems.append('timeout = %s: must be greater than 0' % params['timeout'])
    part_size = 0
    try:
        part_size = parse_size(params['part_size'], 'part_size')
        if not MIB <= part_size <= 5 * 1024 * MIB:
            problems.append('part_size = %r: must be 1M-5G' % (params['part_size'],))
    except PageCacheError as exc:
        problems.append(exc.msg)
    if '{name}' not in params['prefix_template']:
        problems.append('prefix_template = %r: must contain {name}' % params['prefix_template'])
    problems += [problem for dummy, problem in option_problems(params)]
    if problems:
        raise Refusal('invalid input, nothing was changed: ' + '; '.join(problems))
    return models, part_size


def fetch_manifest(client, entry):
    key = '%s/%s' % (entry['prefix'], MANIFEST_NAME) if entry['prefix'] else MANIFEST_NAME
    try:
        data, headers = client.get_object(entry['bucket'], key)
    except S3Error as exc:
        if exc.code in FATAL:
            raise Refusal('model %s: reading the manifest: %s. Nothing was changed.' % (entry['name'], exc.msg))
        if exc.code == 'NoSuchKey':
            return None, 'manifest s3://%s/%s not found: upload the model with its manifest (tools/model_manifest.py)' \
                % (entry['bucket'], key)
        return None, 'reading the manifest: %s' % exc.msg
    try:
        manifest = parse_manifest(data)
    except ManifestError as exc:
        return None, 'manifest s3://%s/%s is invalid: %s' % (entry['bucket'], key, exc.msg)
    return (manifest, manifest_digest(data), headers.get('etag')), None


def describe(state):
    if not state:
        return 'absent'
    digest = (state['manifest_sha256'] or '')[:12]
    text = 'version %s (manifest %s), %d files, %d bytes' % (state['version'], digest, state['files'], state['bytes'])
    stale = state.get('stale')
    if stale:
        text += '; %d missing or changed: %s' % (len(stale), ', '.join(stale[:5]) + (', ...' if len(stale) > 5 else ''))
    return text


def marker_state(marker):
    if not marker:
        return None
    files = marker.get('files', [])
    return {'version': marker.get('version'), 'manifest_sha256': marker.get('manifest_sha256'), 'files': len(files),
            'bytes': sum(f.get('size', 0) for f in files if isinstance(f, dict))}


def lock_file(destination):
    """One lock per repository, outside it (in /run/lock): nothing in the repository but models."""
    return os.path.join(LOCK_DIR if os.path.isdir(LOCK_DIR) else '/tmp', 'inferops-model-sync.%s.lock'
                        % hashlib.sha256(os.path.realpath(destination).encode()).hexdigest()[:16])


def run(module):
    p = module.params
    check = module.check_mode
    models, part_size = validate(p)
    destination = p['destination'].rstrip('/') or '/'
    if not os.path.isdir(destination):
        raise Refusal('destination %s does not exist or is not a directory: mount the models array first (the module '
                      'never creates it, so a missing mount cannot fill the root filesystem)' % destination)
    # Before the store is read and before the staging area or the lock exists: nothing is written.
    mounts = None
    try:
        with open(MOUNTINFO) as handle:
            mounts = parse_mountinfo(handle.read())
    except (IOError, OSError) as exc:
        if p['require_mount']:
            raise Refusal('cannot read %s (%s) to tell whether destination %s is a mounted filesystem; nothing '
                          'was changed. Set require_mount=false to sync anyway.' % (MOUNTINFO, exc, destination))
    if p['require_mount']:
        problem = mount_problem(os.path.realpath(destination), mounts)
        if problem:
            raise Refusal(problem)
    staging = Staging((p['staging_dir'].rstrip('/') or '/') if p['staging_dir'] else
                      os.path.join(destination, '.inferops-model-sync'))
    problem = staging_problem(staging.root, destination, mounts)
    if problem:
        raise Refusal(problem)
    vfs = os.statvfs(destination)
    free = vfs.f_bavail * vfs.f_frsize
    try:
        reserve = parse_size(p['min_free'], 'min_free', total=vfs.f_blocks * vfs.f_frsize)
    except PageCacheError as exc:
        raise Refusal('invalid input, nothing was changed: %s' % exc.msg)

    lock = None
    lock_path = lock_file(destination)
    if not check:
        lock = open(lock_path, 'a+')
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise Refusal('another model_sync is running on %s (lock %s); nothing was changed'
                              % (destination, lock_path))
            raise
        staging.create()
    progress = status = None
    if p['status_file'] and not check:
        progress = SyncProgress()
        status = StatusWriter(p['status_file'], progress, p['status_interval'])
        status.start()
    state = 'failed'
    try:
        result = sync(module, p, models, part_size, destination, staging, free, reserve, progress)
        state = 'failed' if any(r['action'] == 'failed' for r in result['models']) else 'done'
        return result
    finally:
        if status is not None:
            status.stop(state=state)
            if status.error:
                module.warn('could not write status_file %s' % status.error)
        if lock is not None:
            staging.tidy()
            lock.close()


def sync(module, p, models, part_size, destination, staging, free, reserve, progress=None):
    check = module.check_mode
    entries = normalize_models(models, p['bucket'], p['prefix_template'], endpoint=p['endpoint'])
    clients = {}  # one client per endpoint, the call's credentials for each

    def client_of(endpoint):
        if endpoint not in clients:
            clients[endpoint] = S3Client(endpoint, p['region'], p['access_key'] or '', p['secret_key'] or '',
                                         p['session_token'], addressing_style=p['addressing_style'],
                                         timeout=p['timeout'], validate_certs=p['validate_certs'], ca_path=p['ca_path'])
        return clients[endpoint]

    results = []
    plans = []
    removals = []
    for entry in entries:
        live = os.path.join(destination, entry['name'])
        result = {'name': entry['name'], 'version': entry['version'], 'source': None, 'endpoint': None,
                  'manifest_sha256': None,
                  'files': 0, 'bytes': 0, 'bytes_to_download': 0, 'bytes_downloaded': 0, 'bytes_reused': 0,
                  'bytes_resumed': 0, 'swap': None, 'error': None}
        results.append(result)
        if entry['state'] == 'absent':
            removals.append((result, live))
            continue
        result.update(source='s3://%s/%s' % (entry['bucket'], entry['prefix']), endpoint=entry['endpoint'])
        fetched, error = fetch_manifest(client_of(entry['endpoint']), entry)
        if error:
            result.update(action='failed', error=error)
            continue
        manifest, digest, etag = fetched
        plan = plan_model(entry, manifest, digest, live, staging, part_size, p['verify_existing'])
        plan['manifest_etag'] = etag
        plan['endpoint'] = entry['endpoint']
        plan['result'] = result
        result.update(manifest_sha256=digest, files=len(plan['files']), bytes=plan['bytes'],
                      bytes_to_download=plan['bytes_to_download'], bytes_reused=plan['bytes_reused'],
                      bytes_resumed=plan['bytes_staged'], before=marker_state(plan['marker']))
        if result['before'] and result['before']['manifest_sha256'] == digest:
            # The wanted manifest already, yet synced again: live files are missing or changed. The diff says which.
            result['before']['stale'] = sorted(row['path'] for row in plan['files'] if row['source'] != 'live')
        if plan['action'] == 'unmanaged' and not p['replace_unmanaged']:
            result.update(action='failed', error='%s exists and was not put there by model_sync (no %s marker): move it '
                          'away or set replace_unmanaged=true (the old tree is then kept in %s/replaced)'
                          % (live, '.inferops-model-sync.json', staging.root))
            continue
        if plan['action'] == 'current':
            result['action'] = 'current'
            continue
        result['action'] = 'would_sync' if check else 'sync'
        plans.append(plan)

    wanted = set(e['name'] for e in entries if e['state'] == 'present')
    if p['prune']:
        for name in sorted(os.listdir(destination)):
            live = os.path.join(destination, name)
            if name.startswith('.') or name in wanted or any(r['name'] == name for r, _l in removals):
                continue
            if os.path.isdir(live) and not os.path.islink(live) and read_marker(live) is not None:
                result = {'name': name, 'version': None, 'action': None, 'error': None, 'pruned': True}
                results.append(result)
                removals.append((result, live))
    for result, live in removals:
        marker = read_marker(live) if os.path.isdir(live) else None
        result['before'] = marker_state(marker)
        if not os.path.lexists(live):
            result['action'] = 'absent'
        elif marker is None:
            result.update(action='failed', error='%s was not put there by model_sync (no marker): not removed' % live)
        else:
            result['action'] = 'would_remove' if check else 'remove'

    problem = space_problem(plans, destination, free, reserve) if plans else None
    if problem:
        raise Refusal(problem, models=clean(results))

    total = {'bytes_downloaded': 0, 'seconds': 0.0, 'mb_per_s': 0.0, 'requests': 0, 'retries': 0,
             'connections': p['connections'], 'part_size': part_size, 'free_before': free}
    if not check and plans:
        todo = {}
        for plan in plans:
            for row in plan['files']:
                if row['source'] in ('download', 'partial') and row['sha256'] not in todo:
                    todo[row['sha256']] = {'sha256': row['sha256'], 'size': row['size'], 'bucket': plan['bucket'],
                                           'key': row['key'], 'client': client_of(plan['endpoint'])}
        downloader = Downloader(client_of(p['endpoint']), staging, p['connections'], part_size, p['retries'])
        if progress is not None:
            progress.downloading(downloader)
        outcome, seconds = downloader.run(list(todo.values())) if todo else ({}, 0.0)
        if progress is not None:
            progress.set_state('placing')
        total.update(bytes_downloaded=downloader.bytes_downloaded, seconds=round(seconds, 3),
                     mb_per_s=round(downloader.bytes_downloaded / seconds / 1e6, 1) if seconds else 0.0,
                     requests=downloader.requests, retries=downloader.retried)
        for plan in plans:
            result = plan['result']
            errors = []
            for row in plan['files']:
                got = outcome.get(row['sha256'])
                if got:
                    result['bytes_downloaded'] += got['bytes']
                    if got['error']:
                        errors.append('%s: %s' % (row['path'], got['error']))
            if errors:
                result.update(action='failed', error='; '.join(sorted(set(errors))) + ' - %s left as it was'
                              % plan['live_dir'])
                continue
            marker = {'format': MARKER_FORMAT, 'model': plan['name'], 'version': plan['version'],
                      'endpoint': plan['endpoint'], 'bucket': plan['bucket'], 'prefix': plan['prefix'],
                      'manifest_sha256': plan['manifest_sha256'], 'manifest_etag': plan['manifest_etag'],
                      'synced_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                      'files': [{'path': r['path'], 'size': r['size'], 'sha256': r['sha256']} for r in plan['files']]}
            keep = staging.replaced if plan['action'] == 'unmanaged' else None
            try:
                result['swap'] = place_model(plan, staging, marker, keep_replaced=keep)
                result['action'] = 'synced'
            except OSError as exc:
                result.update(action='failed', error='putting %s in place: %s' % (plan['live_dir'], exc))
        # The placed models hold the files now; staged copies of them are only extra links.
        for plan in plans:
            if plan['result']['action'] == 'synced':
                for row in plan['files']:
                    if row['source'] != 'live' and os.path.exists(staging.object_path(row['sha256'])):
                        os.unlink(staging.object_path(row['sha256']))
    if not check:
        for result, live in removals:
            if result['action'] == 'remove':
                remove_tree(live, staging)
                result['action'] = 'removed'
        if not any(r['action'] == 'failed' for r in results) and os.path.isdir(staging.root):
            # Nothing to resume: the staging area goes (replaced/ trees are kept).
            for sub in (staging.objects, staging.parts, staging.build, staging.trash):
                shutil.rmtree(sub, ignore_errors=True)

    changed = any(r['action'] in ('synced', 'would_sync', 'removed', 'would_remove') for r in results)
    out = {'changed': changed, 'destination': destination, 'models': clean(results), 'total': total}
    if progress is not None:
        out['status_file'] = p['status_file']
    if module._diff:
        before, after = [], []
        for r in results:
            before.append('%s: %s' % (r['name'], describe(r.get('before'))))
            if r['action'] in ('synced', 'would_sync', 'current'):
                wanted = {'version': r['version'], 'files': r['files'], 'bytes': r['bytes'],
                          'manifest_sha256': r['manifest_sha256']}
                after.append('%s: %s' % (r['name'], describe(wanted)))
            elif r['action'] in ('removed', 'would_remove', 'absent'):
                after.append('%s: absent' % r['name'])
            else:
                after.append('%s: %s' % (r['name'], describe(r.get('before'))))
        out['diff'] = {'before': '\n'.join(before) + '\n', 'after': '\n'.join(after) + '\n'}
    return out


def clean(results):
    return [dict((k, v) for k, v in r.items() if k not in ('before', 'pruned')) for r in results]


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        result = run(module)
    except Refusal as exc:
        module.fail_json(msg=exc.msg, **exc.extra)
    except S3Error as exc:
        module.fail_json(msg=exc.msg)
    failed = [r for r in result['models'] if r['action'] == 'failed']
    if failed:
        module.fail_json(msg='%d of %d model(s) failed, each left as it was: %s' % (
            len(failed), len(result['models']), ' | '.join('%s: %s' % (r['name'], r['error']) for r in failed)),
            **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
