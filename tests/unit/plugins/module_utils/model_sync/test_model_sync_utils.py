# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync rules without a store: signer, manifest, model list, planner, space check."""

from __future__ import annotations

import datetime
import hashlib
import json
import os

import pytest

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import (
    FORMAT,
    MARKER_FORMAT,
    MARKER_NAME,
    ManifestError,
    build_manifest,
    dump_manifest,
    model_errors,
    normalize_models,
    parse_manifest,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.plan import (
    Staging,
    partial_bytes,
    plan_model,
    space_problem,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import EMPTY_SHA256, sign

SHA_A = hashlib.sha256(b'a').hexdigest()


def test_sigv4_matches_the_documented_example():
    # docs.aws.amazon.com AmazonS3 "sig-v4-header-based-auth": GET Object with a Range header.
    headers = sign('GET', 'examplebucket.s3.amazonaws.com', '/test.txt', {}, {'range': 'bytes=0-9'}, EMPTY_SHA256,
                   'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'us-east-1', 's3',
                   now=datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc))
    assert headers['Authorization'] == (
        'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, '
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, '
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41')
    assert 'host' not in headers  # http.client sends it


def manifest(files):
    return {'format': FORMAT, 'files': files}


def test_parse_manifest_accepts_a_valid_one():
    data = dump_manifest(manifest([{'path': '1/model.onnx', 'size': 1, 'sha256': SHA_A}]))
    assert parse_manifest(data)['files'][0]['path'] == '1/model.onnx'


@pytest.mark.parametrize('files, text', [
    ([], 'files must be a non-empty list'),
    ([{'path': '../x', 'size': 1, 'sha256': SHA_A}], '"." or ".." segments'),
    ([{'path': '/abs', 'size': 1, 'sha256': SHA_A}], 'must be relative'),
    ([{'path': 'a', 'size': -1, 'sha256': SHA_A}], 'size must be an integer >= 0'),
    ([{'path': 'a', 'size': 1, 'sha256': 'ABC'}], 'sha256 must be 64 lower-case hex digits'),
    ([{'path': 'a', 'size': 1, 'sha256': SHA_A}, {'path': 'a', 'size': 1, 'sha256': SHA_A}], 'listed twice'),
    ([{'path': 'a', 'size': 1, 'sha256': SHA_A}, {'path': 'a/b', 'size': 1, 'sha256': SHA_A}],
     'both a file and a directory'),
    ([{'path': MARKER_NAME, 'size': 1, 'sha256': SHA_A}], 'sync marker'),
])
def test_parse_manifest_names_each_problem(files, text):
    with pytest.raises(ManifestError) as info:
        parse_manifest(json.dumps(manifest(files)).encode())
    assert text in info.value.msg


def test_parse_manifest_refuses_other_formats_and_bad_json():
    with pytest.raises(ManifestError, match='format'):
        parse_manifest(b'{"format": "x", "files": []}')
    with pytest.raises(ManifestError, match='not valid JSON'):
        parse_manifest(b'{')


def test_build_manifest_hashes_every_file_and_skips_manifest_and_marker(tmp_path):
    (tmp_path / '1').mkdir()
    (tmp_path / '1' / 'model.onnx').write_bytes(b'a')
    (tmp_path / 'config.pbtxt').write_bytes(b'')
    (tmp_path / 'inferops-manifest.json').write_text('{}')
    (tmp_path / MARKER_NAME).write_text('{}')
    result = build_manifest(str(tmp_path), model='m', version='1')
    assert [(f['path'], f['size'], f['sha256']) for f in result['files']] == [
        ('config.pbtxt', 0, EMPTY_SHA256), ('1/model.onnx', 1, SHA_A)]
    assert parse_manifest(dump_manifest(result))['model'] == 'm'
    os.symlink('config.pbtxt', str(tmp_path / 'link'))
    with pytest.raises(ManifestError, match='not a regular file'):
        build_manifest(str(tmp_path))


def test_model_errors_name_index_key_value_and_fix():
    problems = model_errors([
        {'name': 'ok', 'version': '1'},
        {'name': '.x', 'version': '1'},
        {'name': 'ok', 'version': 'a b'},
        {'name': 'y', 'version': '1', 'bucket': 'UPPER', 'prefix': 'a/../b', 'colour': 1},
        {'name': 'z', 'state': 'absent'},
        'text',
        {'name': 'e1', 'version': '1', 'endpoint': 'minio.lan:9000'},
        {'name': 'e2', 'version': '1', 'endpoint': 'http://minio.lan:99999'},
        {'name': 'e3', 'version': '1', 'endpoint': 9000},
        {'name': 'e4', 'version': '1', 'endpoint': 'https://s3.eu-central-1.amazonaws.com'},
    ], 'model_sync_models')
    text = '\n'.join(problems)
    assert 'model_sync_models[1] (name=.x): name = ".x" must be a Triton model directory name' in text
    assert 'model_sync_models[2] (name=ok): name ok is listed twice (also model_sync_models[0])' in text
    assert 'model_sync_models[2] (name=ok): version = "a b"' in text
    assert 'model_sync_models[3] (name=y): unknown key colour' in text
    assert 'model_sync_models[3] (name=y): bucket = "UPPER"' in text
    assert 'model_sync_models[3] (name=y): prefix = "a/../b"' in text
    assert 'model_sync_models[5] = "text": must be a dict' in text
    assert 'name=z' not in text  # absent needs no version
    assert 'model_sync_models[6] (name=e1): endpoint = "minio.lan:9000" must be an http:// or https:// URL' in text
    assert "or leave it out for the call's endpoint" in text
    assert 'model_sync_models[7] (name=e2): endpoint = "http://minio.lan:99999" must be an http:// or https:// ' \
        'URL (http://minio.lan:9000): Port out of range' in text
    assert 'model_sync_models[8] (name=e3): endpoint = 9000 must be an http:// or https:// URL' in text
    assert 'name=e4' not in text
    assert model_errors('x', 'm') == [
        'm = "x": must be a list of {name, version[, prefix, bucket, endpoint, state]}']
    assert model_errors([{'name': 'a', 'version': 3}]) == []


def test_normalize_models_fills_prefix_bucket_and_endpoint():
    assert normalize_models([{'name': 'a', 'version': 3}, {'name': 'b', 'version': '1', 'prefix': '/x/y/',
                                                           'bucket': 'other', 'endpoint': 'http://b:9000'}],
                            'models', endpoint='http://a:9000') == [
        {'name': 'a', 'version': '3', 'bucket': 'models', 'endpoint': 'http://a:9000', 'prefix': 'a/3',
         'state': 'present'},
        {'name': 'b', 'version': '1', 'bucket': 'other', 'endpoint': 'http://b:9000', 'prefix': 'x/y',
         'state': 'present'}]


def test_partial_bytes_counts_journalled_parts_of_a_matching_journal():
    header = {'size': 10, 'part_size': 4}
    assert partial_bytes(header, {0, 2}, 10, 4) == 4 + 2
    assert partial_bytes(header, {0, 2, 9}, 10, 4) == 6  # out of range index ignored
    assert partial_bytes({'size': 10, 'part_size': 8}, {0}, 10, 4) == 0  # other part size: start again
    assert partial_bytes(None, {0}, 10, 4) == 0


def _write_model(live, files, digest):
    os.makedirs(live)
    for path, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(live, path)), exist_ok=True)
        with open(os.path.join(live, path), 'wb') as handle:
            handle.write(data)
    marker = {'format': MARKER_FORMAT, 'manifest_sha256': digest, 'files': [
        {'path': p, 'size': len(d), 'sha256': hashlib.sha256(d).hexdigest()} for p, d in files.items()]}
    with open(os.path.join(live, MARKER_NAME), 'w') as handle:
        json.dump(marker, handle)


ENTRY = {'name': 'm', 'version': '2', 'bucket': 'b', 'prefix': 'm/2', 'state': 'present'}


def test_plan_current_when_marker_matches_and_sizes_match(tmp_path):
    files = {'config.pbtxt': b'c', '1/model.onnx': b'abc'}
    live = str(tmp_path / 'm')
    _write_model(live, files, 'd1')
    man = parse_manifest(dump_manifest(manifest([
        {'path': p, 'size': len(d), 'sha256': hashlib.sha256(d).hexdigest()} for p, d in files.items()])))
    staging = Staging(str(tmp_path / '.s'))
    assert plan_model(ENTRY, man, 'd1', live, staging, 4)['action'] == 'current'
    # A truncated file is noticed by its size, without reading it.
    with open(os.path.join(live, '1/model.onnx'), 'wb') as handle:
        handle.write(b'ab')
    plan = plan_model(ENTRY, man, 'd1', live, staging, 4)
    assert plan['action'] == 'sync'
    assert {r['path']: r['source'] for r in plan['files']} == {'config.pbtxt': 'live', '1/model.onnx': 'download'}
    assert plan['bytes_to_download'] == 3 and plan['bytes_reused'] == 1
    assert plan['files'][1]['key'] == 'm/2/1/model.onnx'


def test_plan_verify_existing_reads_files_and_catches_silent_corruption(tmp_path):
    files = {'w.bin': b'abcd'}
    live = str(tmp_path / 'm')
    _write_model(live, files, 'd1')
    man = manifest([{'path': 'w.bin', 'size': 4, 'sha256': hashlib.sha256(b'abcd').hexdigest()}])
    with open(os.path.join(live, 'w.bin'), 'wb') as handle:
        handle.write(b'abcX')  # same size, other bytes
    staging = Staging(str(tmp_path / '.s'))
    assert plan_model(ENTRY, man, 'd1', live, staging, 4)['action'] == 'current'
    assert plan_model(ENTRY, man, 'd1', live, staging, 4, verify_existing=True)['action'] == 'sync'


def test_plan_uses_staged_objects_and_journalled_parts(tmp_path):
    staging = Staging(str(tmp_path / '.s'))
    staging.create()
    done = hashlib.sha256(b'done').hexdigest()
    half = hashlib.sha256(b'x' * 10).hexdigest()
    with open(staging.object_path(done), 'wb') as handle:
        handle.write(b'done')
    with open(staging.part_path(half), 'wb') as handle:
        handle.write(b'x' * 10)
    with open(staging.journal_path(half), 'w') as handle:
        handle.write(json.dumps({'size': 10, 'part_size': 4}) + '\netag "e"\n0\n1\n2')  # "2" cut off: not counted
    man = manifest([{'path': 'a', 'size': 4, 'sha256': done}, {'path': 'b', 'size': 10, 'sha256': half}])
    plan = plan_model(ENTRY, man, 'd', str(tmp_path / 'm'), staging, 4)
    assert [(r['source'], r.get('have')) for r in plan['files']] == [('staged', None), ('partial', 8)]
    assert plan['bytes_staged'] == 12 and plan['bytes_to_download'] == 2
    assert plan['action'] == 'sync' and not plan['exists']


def test_plan_marks_an_existing_directory_without_marker_unmanaged(tmp_path):
    (tmp_path / 'm').mkdir()
    man = manifest([{'path': 'a', 'size': 1, 'sha256': SHA_A}])
    assert plan_model(ENTRY, man, 'd', str(tmp_path / 'm'), Staging(str(tmp_path / '.s')), 4)['action'] == 'unmanaged'


def test_space_problem_names_each_model_and_the_shortfall_and_counts_shared_content_once():
    row = {'source': 'download', 'sha256': SHA_A, 'size': 3 * 1024 ** 3}
    plans = [{'name': 'a', 'version': '1', 'files': [row]},
             {'name': 'b', 'version': '2', 'files': [dict(row), {'source': 'partial', 'sha256': 'f' * 64,
                                                                 'size': 2 * 1024 ** 3, 'have': 1024 ** 3}]}]
    assert space_problem(plans, '/data/models', 10 * 1024 ** 3, 1024 ** 3) is None
    msg = space_problem(plans, '/data/models', 4 * 1024 ** 3, 1024 ** 3)
    assert msg.startswith('not enough free space in /data/models: a (version 1) needs 3.0 GiB')
    assert 'b (version 2) needs 1.0 GiB' in msg
    assert 'short by 1.0 GiB (1073741824 bytes)' in msg
