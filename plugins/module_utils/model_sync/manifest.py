# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Model manifests and model lists for model_sync: the one rule for what is valid.

A manifest lists every file of one model version with its size and sha256; it is stored next to the
files in the object store (``<prefix>/inferops-manifest.json``) and is what a sync verifies against
(an ETag is never a digest: multipart ETags are an MD5 of part MD5s). Format::

    {"format": "inferops-model-manifest/1", "model": "resnet50", "version": "2026-11-30",
     "created": "2026-11-30T12:00:00Z",
     "files": [{"path": "config.pbtxt", "size": 312, "sha256": "<64 hex>"},
               {"path": "1/model.onnx", "size": 102502400, "sha256": "<64 hex>"}]}

* ``parse_manifest(data)`` - the manifest as a dict, or ManifestError naming what is wrong.
* ``build_manifest(directory, model, version)`` - the manifest of a local directory (the helper).
* ``model_errors(models, name)`` - problems of a ``models`` list (module and role filter share it).
* ``normalize_models(models, defaults)`` - entries with their defaults filled in.
* ``publish(client, bucket, prefix, directory, manifest, ...)`` - upload the files, then the manifest last
  (the helper tools/model_manifest.py and the module model_manifest).

No Ansible imports: tools/model_manifest.py loads this file directly (after model_sync/s3.py, whose
endpoint rule it imports, registered under its collection name).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re

from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import endpoint_problem

__all__ = ['FORMAT', 'MANIFEST_NAME', 'MARKER_NAME', 'ManifestError', 'build_manifest', 'dump_manifest',
           'file_sha256', 'manifest_digest', 'model_errors', 'normalize_models', 'parse_manifest', 'path_errors',
           'publish', 'same_files']

FORMAT = 'inferops-model-manifest/1'
MANIFEST_NAME = 'inferops-manifest.json'
# Written into each model directory model_sync put in place: what it holds and from which manifest.
MARKER_NAME = '.inferops-model-sync.json'
MARKER_FORMAT = 'inferops-model-sync-marker/1'

_HEX64 = re.compile(r'^[0-9a-f]{64}$')
# Triton model names become directory names; a leading dot would hide the model (and clash with the
# staging directory), a slash would nest it.
_MODEL_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$')
_VERSION = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$')
_MODEL_KEYS = ('name', 'version', 'prefix', 'bucket', 'endpoint', 'state')


class ManifestError(Exception):
    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


def path_errors(path):
    """Problems of a relative file path inside a model (empty = valid)."""
    if not isinstance(path, str) or not path:
        return ['must be a non-empty string']
    problems = []
    if path.startswith('/'):
        problems.append('must be relative (no leading /)')
    parts = path.split('/')
    if any(part in ('', '.', '..') for part in parts):
        problems.append('must not contain empty, "." or ".." segments')
    if '\\' in path or '\x00' in path:
        problems.append('must not contain backslashes or NUL')
    if path == MARKER_NAME:
        problems.append('%s is the sync marker\'s name' % MARKER_NAME)
    return problems


def parse_manifest(data):
    """Parse and check manifest bytes; return the dict."""
    try:
        manifest = json.loads(data.decode('utf-8') if isinstance(data, bytes) else data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError('not valid JSON (%s)' % exc)
    if not isinstance(manifest, dict):
        raise ManifestError('must be a JSON object')
    if manifest.get('format') != FORMAT:
        raise ManifestError('format is %r, expected %r' % (manifest.get('format'), FORMAT))
    files = manifest.get('files')
    if not isinstance(files, list) or not files:
        raise ManifestError('files must be a non-empty list')
    seen = set()
    problems = []
    for index, entry in enumerate(files):
        if not isinstance(entry, dict):
            problems.append('files[%d]: must be an object' % index)
            continue
        path = entry.get('path')
        for problem in path_errors(path):
            problems.append('files[%d] (path=%s): %s' % (index, json.dumps(path), problem))
        if isinstance(path, str):
            if path in seen:
                problems.append('files[%d] (path=%s): listed twice' % (index, json.dumps(path)))
            seen.add(path)
        size = entry.get('size')
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            problems.append('files[%d] (path=%s): size must be an integer >= 0, got %r' % (index, json.dumps(path), size))
        digest = entry.get('sha256')
        if not isinstance(digest, str) or not _HEX64.match(digest):
            problems.append('files[%d] (path=%s): sha256 must be 64 lower-case hex digits' % (index, json.dumps(path)))
    # A path that is also the directory of another path cannot be laid out.
    for path in seen:
        parts = path.split('/')
        for cut in range(1, len(parts)):
            if '/'.join(parts[:cut]) in seen:
                problems.append('path %s is both a file and a directory' % json.dumps('/'.join(parts[:cut])))
    if problems:
        raise ManifestError('; '.join(sorted(set(problems))))
    return manifest


def manifest_digest(data):
    """sha256 of the manifest bytes as stored: what the marker records."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path, bufsize=8 * 1024 * 1024):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        while True:
            block = handle.read(bufsize)
            if not block:
                break
            digest.update(block)
    return digest.hexdigest()


def build_manifest(directory, model=None, version=None, exclude=(MANIFEST_NAME, MARKER_NAME)):
    """Manifest of every regular file under ``directory`` (sorted paths; symlinks refused)."""
    files = []
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, directory).replace(os.sep, '/')
            if rel in exclude:
                continue
            if os.path.islink(full) or not os.path.isfile(full):
                raise ManifestError('%s: not a regular file (symlinks and special files cannot be synced)' % full)
            files.append({'path': rel, 'size': os.path.getsize(full), 'sha256': file_sha256(full)})
    if not files:
        raise ManifestError('%s: no files' % directory)
    manifest = {'format': FORMAT, 'files': files,
                'created': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}
    if model:
        manifest['model'] = model
    if version:
        manifest['version'] = version
    return manifest


def same_files(a, b):
    """Two manifests list the same files with the same sizes and digests (``created`` aside)."""
    def key(manifest):
        return sorted((f['path'], f['size'], f['sha256']) for f in manifest['files'])
    return key(a) == key(b)


def publish(client, bucket, prefix, directory, manifest, part_size, manifest_only=False, report=None):
    """Upload every file of ``manifest`` from ``directory`` under ``prefix``, then the manifest itself.

    The manifest goes last, so a sync never reads a manifest whose files are not all in the store yet.
    ``client`` is a model_sync_s3.S3Client. Returns (manifest key, bytes uploaded).
    """
    prefix = prefix.strip('/')
    sent = 0
    if not manifest_only:
        for entry in manifest['files']:
            client.upload_file(bucket, '%s/%s' % (prefix, entry['path']), os.path.join(directory, entry['path']),
                               part_size=part_size)
            sent += entry['size']
            if report:
                report(entry)
    key = '%s/%s' % (prefix, MANIFEST_NAME)
    client.put_object(bucket, key, dump_manifest(manifest))
    return key, sent


def dump_manifest(manifest):
    return (json.dumps(manifest, indent=1, sort_keys=True) + '\n').encode('utf-8')


def model_errors(models, name='models'):
    """Problems of a models list, each naming the entry, key, value and the fix (empty = valid)."""
    if models is None:
        return []
    if not isinstance(models, list):
        return ['%s = %s: must be a list of {name, version[, prefix, bucket, endpoint, state]}' % (name, _show(models))]
    problems = []
    names = {}
    for index, entry in enumerate(models):
        if not isinstance(entry, dict):
            problems.append('%s[%d] = %s: must be a dict with name and version' % (name, index, _show(entry)))
            continue
        label = '%s[%d] (name=%s)' % (name, index, entry.get('name'))
        for key in sorted(set(entry) - set(_MODEL_KEYS)):
            problems.append('%s: unknown key %s; known keys: %s' % (label, key, ', '.join(_MODEL_KEYS)))
        model = entry.get('name')
        if not isinstance(model, str) or not _MODEL_NAME.match(model):
            problems.append('%s: name = %s must be a Triton model directory name (letters, digits, _ . -; not '
                            'starting with a dot; at most 128 characters)' % (label, _show(model)))
        elif model in names:
            problems.append('%s: name %s is listed twice (also %s[%d])' % (label, model, name, names[model]))
        else:
            names[model] = index
        state = entry.get('state', 'present')
        if state not in ('present', 'absent'):
            problems.append('%s: state = %s must be present or absent' % (label, _show(state)))
        version = entry.get('version')
        if state != 'absent' or version is not None:
            if isinstance(version, (int, float)) and not isinstance(version, bool):
                version = str(version)
            if not isinstance(version, str) or not _VERSION.match(version):
                problems.append('%s: version = %s must be a version string (letters, digits, _ . + -), e.g. '
                                '"2026-11-30" or "3"' % (label, _show(entry.get('version'))))
        prefix = entry.get('prefix')
        if prefix is not None:
            if not isinstance(prefix, str) or not prefix.strip('/') or path_errors(prefix.strip('/')):
                problems.append('%s: prefix = %s must be a key prefix like "models/resnet50/3" (no empty, "." '
                                'or ".." segments)' % (label, _show(prefix)))
        bucket = entry.get('bucket')
        bucket_ok = isinstance(bucket, str) and re.match(r'^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$', bucket)
        if bucket is not None and not bucket_ok:
            problems.append('%s: bucket = %s must be an S3 bucket name (3-63 of a-z 0-9 . -)' % (label, _show(bucket)))
        endpoint = entry.get('endpoint')
        problem = endpoint_problem(endpoint) if endpoint is not None else None
        if problem:
            problems.append('%s: endpoint = %s %s, or leave it out for the call\'s endpoint'
                            % (label, _show(endpoint), problem))
    return problems


def normalize_models(models, bucket, prefix_template='{name}/{version}', endpoint=None):
    """Entries with endpoint and bucket (the model's own or the defaults), prefix (template filled in, no
    slashes at the ends), state, version as str."""
    out = []
    for entry in models or []:
        version = entry.get('version')
        version = None if version is None else str(version)
        prefix = entry.get('prefix')
        if prefix is None and version is not None:
            prefix = prefix_template.format(name=entry['name'], version=version)
        out.append({'name': entry['name'], 'version': version, 'bucket': entry.get('bucket') or bucket,
                    'endpoint': entry.get('endpoint') or endpoint,
                    'prefix': (prefix or '').strip('/'), 'state': entry.get('state', 'present')})
    return out


def _show(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
