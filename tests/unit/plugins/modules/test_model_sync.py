# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync against a real S3 API: a moto server on loopback behind a proxy that counts what it serves
(fixtures ``store`` and ``lab``: conftest.py beside this file)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from module_harness import run_module  # noqa: E402  pylint: disable=wrong-import-position
from s3_lab import MIB, blob, flip_last_byte, make_manifest, model_files, tree, upload_model  # noqa: E402  pylint: disable=wrong-import-position
from status_file_reader import read_status_while  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import MANIFEST_NAME  # noqa: E402
from ansible_collections.inferops.node.plugins.modules import model_sync  # noqa: E402


def test_sync_multipart_objects_then_unchanged_is_skipped_without_reading(lab):
    files = model_files(1)
    upload_model(lab['client'], lab['bucket'], 'resnet/3', files, part_size=5 * MIB)  # 2 multipart parts
    assert lab['client'].head_object(lab['bucket'], 'resnet/3/1/model.onnx')['etag'].endswith('-2"')

    failed, result = lab['sync']([{'name': 'resnet', 'version': '3'}], diff=True)
    assert not failed, result
    assert result['changed'] is True
    model = result['models'][0]
    assert model['action'] == 'synced' and model['swap'] == 'create'
    assert model['bytes_downloaded'] == sum(len(d) for d in files.values())
    assert result['total']['requests'] == 1 + 7  # config + 7 ranged parts of 1 MiB
    assert result['total']['mb_per_s'] > 0
    placed = tree(lab['dest'] / 'resnet')
    marker = json.loads(placed.pop('.inferops-model-sync.json'))
    assert placed == files
    assert marker['manifest_sha256'] == model['manifest_sha256'] and marker['version'] == '3'
    assert not (lab['dest'] / '.inferops-model-sync').exists()  # nothing to resume: Triton never meets it
    assert 'resnet: absent' in result['diff']['before'] and 'version 3' in result['diff']['after']

    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'resnet', 'version': '3'}])
    assert not failed and result['changed'] is False
    assert result['models'][0]['action'] == 'current'
    assert lab['proxy'].gets == 1  # the manifest only
    assert result['total']['bytes_downloaded'] == 0

    # A file gone from the live tree: synced again under the same manifest, and the diff says why.
    (lab['dest'] / 'resnet' / 'config.pbtxt').unlink()
    failed, result = lab['sync']([{'name': 'resnet', 'version': '3'}], check=True, diff=True)
    assert not failed and result['changed'] is True and result['models'][0]['action'] == 'would_sync'
    assert result['diff']['before'] == result['diff']['after'].replace('\n', '; 1 missing or changed: config.pbtxt\n')


def test_check_mode_reports_and_downloads_nothing(lab):
    files = model_files(2)
    upload_model(lab['client'], lab['bucket'], 'bert/1', files)
    failed, result = lab['sync']([{'name': 'bert', 'version': '1'}], check=True, diff=True)
    assert not failed and result['changed'] is True
    model = result['models'][0]
    assert model['action'] == 'would_sync'
    assert model['bytes_to_download'] == sum(len(d) for d in files.values())
    assert os.listdir(str(lab['dest'])) == []
    assert lab['proxy'].gets == 1
    assert 'bert: absent' in result['diff']['before']


def test_corrupted_object_is_refused_and_nothing_is_put_in_place(lab):
    good = model_files(3)
    upload_model(lab['client'], lab['bucket'], 'gpt/1', good)
    assert not lab['sync']([{'name': 'gpt', 'version': '1'}])[0]
    # Version 2: the manifest describes one content, the store holds another (bit rot, a bad upload).
    new = model_files(4)
    manifest = make_manifest(new)
    corrupt = dict(new)
    corrupt['1/model.onnx'] = flip_last_byte(new['1/model.onnx'])
    upload_model(lab['client'], lab['bucket'], 'gpt/2', corrupt, manifest=manifest)
    failed, result = lab['sync']([{'name': 'gpt', 'version': '2'}])
    assert failed
    assert 'sha256 mismatch' in result['msg'] and 'gpt/2/1/model.onnx' in result['msg']
    assert result['models'][0]['action'] == 'failed'
    placed = tree(lab['dest'] / 'gpt')
    assert json.loads(placed.pop('.inferops-model-sync.json'))['version'] == '1'
    assert placed == good  # version 1 untouched
    staging = lab['dest'] / '.inferops-model-sync'
    assert not list(staging.glob('parts/*'))  # the bad download was discarded


def test_interrupted_download_resumes_without_downloading_verified_parts_again(lab):
    files = {'config.pbtxt': b'name: "llm"\n', 'a.bin': blob(5 * MIB, 5), 'b.bin': blob(5 * MIB, 6)}
    total = sum(len(d) for d in files.values())
    upload_model(lab['client'], lab['bucket'], 'llm/1', files)
    lab['proxy'].reset(limit=6 * MIB)  # the line drops after 6 MiB of the 10 MiB
    failed, result = lab['sync']([{'name': 'llm', 'version': '1'}], retries=0, connections=2)
    assert failed, result
    assert not (lab['dest'] / 'llm').exists()  # Triton never sees a half-written model

    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'llm', 'version': '1'}], connections=2)
    assert not failed, result
    model = result['models'][0]
    assert model['bytes_resumed'] >= 3 * MIB
    assert model['bytes_downloaded'] == total - model['bytes_resumed']
    # What the store served this time: the missing parts and the manifest, not the whole model again.
    assert lab['proxy'].served < total - model['bytes_resumed'] + 64 * 1024
    placed = tree(lab['dest'] / 'llm')
    placed.pop('.inferops-model-sync.json')
    assert placed == files


def test_changed_model_only_it_is_downloaded_and_unchanged_files_are_reused(lab):
    a, b = model_files(7), model_files(8)
    upload_model(lab['client'], lab['bucket'], 'a/1', a)
    upload_model(lab['client'], lab['bucket'], 'b/1', b)
    models = [{'name': 'a', 'version': '1'}, {'name': 'b', 'version': '1'}]
    assert not lab['sync'](models)[0]
    inode = os.stat(str(lab['dest'] / 'b' / '1' / 'model.onnx')).st_ino
    b2 = dict(b, **{'config.pbtxt': b'name: "b"\nmax_batch_size: 8\n'})
    upload_model(lab['client'], lab['bucket'], 'b/2', b2)
    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'a', 'version': '1'}, {'name': 'b', 'version': '2'}])
    assert not failed, result
    by = {m['name']: m for m in result['models']}
    assert by['a']['action'] == 'current'
    assert by['b']['action'] == 'synced' and by['b']['swap'] == 'exchange'
    assert by['b']['bytes_downloaded'] == len(b2['config.pbtxt'])
    assert by['b']['bytes_reused'] == len(b['1/model.onnx'])
    assert lab['proxy'].gets == 3  # two manifests, one changed file
    assert os.stat(str(lab['dest'] / 'b' / '1' / 'model.onnx')).st_ino == inode  # hard link, not a copy
    assert (lab['dest'] / 'b' / 'config.pbtxt').read_bytes() == b2['config.pbtxt']


def test_parts_download_in_parallel_on_at_most_connections_connections(lab):
    files = {'config.pbtxt': b'name: "p"\n', 'a.bin': blob(4 * MIB, 19), 'b.bin': blob(4 * MIB, 20)}
    upload_model(lab['client'], lab['bucket'], 'par/1', files)
    # Each connection capped at 8 MiB/s: a 1 MiB part takes about 125 ms, so the workers overlap for sure.
    lab['proxy'].reset(rate=8 * MIB)
    failed, result = lab['sync']([{'name': 'par', 'version': '1'}], connections=3)
    assert not failed, result
    assert result['total']['requests'] == 1 + 8  # config + 8 ranged parts of 1 MiB
    # Three workers at once, each on its own connection, plus at most the keep-alive one that read the
    # manifest (open while they run here): never more.
    assert lab['proxy'].peak in (3, 3 + 1), lab['proxy'].peak
    assert result['total']['mb_per_s'] > 8 * MIB / 1e6  # more than one capped connection could give


def test_status_file_says_bytes_files_rate_and_eta_while_it_downloads(lab):
    files = {'config.pbtxt': b'name: "s"\n', 'a.bin': blob(3 * MIB, 31), 'b.bin': blob(3 * MIB + 5, 32)}
    upload_model(lab['client'], lab['bucket'], 's/1', files)
    # Capped at 4 MiB/s per connection, two connections: about a second of download, several status writes.
    lab['proxy'].reset(rate=4 * MIB)
    status = str(lab['tmp'] / 'sync-status.json')
    (failed, result), seen = read_status_while(status, lambda: lab['sync'](
        [{'name': 's', 'version': '1'}], connections=2, status_file=status, status_interval=0.1))
    assert not failed, result.get('msg')
    assert result['status_file'] == status
    total = sum(len(data) for data in files.values())
    downloading = [s for s in seen if s['state'] == 'downloading' and 0 < s['bytes_done'] < total]
    assert downloading, [s['line'] for s in seen]
    middle = downloading[len(downloading) // 2]
    assert middle['bytes_total'] == total and middle['files_total'] == 3
    assert middle['mb_per_s'] > 0 and middle['eta_seconds'] > 0
    assert middle['line'].startswith('downloading %s %% (' % middle['percent']) and ' MB/s, eta ' in middle['line']
    with open(status) as handle:  # the last write, after the reader stopped
        last = json.load(handle)
    assert last['state'] == 'done' and last['bytes_done'] == total and last['files_done'] == 3
    assert last['percent'] == 100.0 and last['eta_seconds'] == 0.0


def test_status_file_of_a_run_with_nothing_to_fetch_and_of_a_check_run(lab):
    upload_model(lab['client'], lab['bucket'], 'n/1', model_files(33, big=1000))
    status = lab['tmp'] / 'nothing.json'
    failed, result = lab['sync']([{'name': 'n', 'version': '1'}], check=True, status_file=str(status))
    assert not failed and not status.exists() and 'status_file' not in result  # check mode writes nothing
    assert not lab['sync']([{'name': 'n', 'version': '1'}])[0]
    failed, result = lab['sync']([{'name': 'n', 'version': '1'}], status_file=str(status))
    assert not failed and not result['changed']
    written = json.loads(status.read_text())
    assert written['state'] == 'done' and written['bytes_total'] == 0 and written['line'].startswith('done 100.0 % (0 B')


def test_each_model_names_its_own_bucket_and_prefix_or_gets_the_template(lab):
    other = lab['bucket'][:-2] + '-b'
    lab['client'].create_bucket(other)
    upload_model(lab['client'], other, 'llm/llama/7', model_files(22, big=1000))
    upload_model(lab['client'], lab['bucket'], 'zoo/bert-2', model_files(23, big=1000))
    failed, result = lab['sync']([{'name': 'llama', 'version': '7', 'bucket': other, 'prefix': 'llm/llama/7'},
                                  {'name': 'bert', 'version': '2'}], prefix_template='zoo/{name}-{version}')
    assert not failed, result
    assert [(m['name'], m['action'], m['source']) for m in result['models']] == [
        ('llama', 'synced', 's3://%s/llm/llama/7' % other), ('bert', 'synced', 's3://%s/zoo/bert-2' % lab['bucket'])]
    assert (lab['dest'] / 'llama' / 'config.pbtxt').read_bytes() == model_files(22)['config.pbtxt']


def test_bad_credentials_are_refused_clearly(lab):
    upload_model(lab['client'], lab['bucket'], 'm/1', model_files(9))
    failed, result = lab['sync']([{'name': 'm', 'version': '1'}], secret_key='wrong')
    assert failed
    assert 'SignatureDoesNotMatch' in result['msg'] and 'secret key' in result['msg']
    failed, result = lab['sync']([{'name': 'm', 'version': '1'}], access_key='AKIANOTKNOWN000000')
    assert failed and 'InvalidAccessKeyId' in result['msg']
    assert os.listdir(str(lab['dest'])) == []
    assert not (lab['dest'] / 'm').exists()


def test_missing_bucket_and_manifest_are_named(lab):
    failed, result = lab['sync']([{'name': 'm', 'version': '1', 'bucket': 'no-such-bucket'},
                                  {'name': 'n', 'version': '1'}])
    assert failed
    assert 'NoSuchBucket' in result['msg'] and 'm: ' in result['msg']
    assert 'inferops-manifest.json not found' in result['msg'] and 'tools/model_manifest.py' in result['msg']


def test_free_space_refusal_names_model_and_shortfall(lab):
    files = model_files(10)
    upload_model(lab['client'], lab['bucket'], 'big/1', files)
    vfs = os.statvfs(str(lab['dest']))
    free = vfs.f_bavail * vfs.f_frsize
    failed, result = lab['sync']([{'name': 'big', 'version': '1'}], min_free=free - MIB)
    assert failed
    assert 'not enough free space' in result['msg'] and 'big (version 1) needs' in result['msg']
    assert 'short by' in result['msg'] and 'Nothing was downloaded' in result['msg']
    assert lab['proxy'].gets == 1
    assert not (lab['dest'] / 'big').exists()


def test_absent_and_prune_remove_only_what_model_sync_put_there(lab):
    upload_model(lab['client'], lab['bucket'], 'keep/1', model_files(11, big=1000))
    upload_model(lab['client'], lab['bucket'], 'old/1', model_files(12, big=1000))
    upload_model(lab['client'], lab['bucket'], 'gone/1', model_files(13, big=1000))
    assert not lab['sync']([{'name': n, 'version': '1'} for n in ('keep', 'old', 'gone')])[0]
    (lab['dest'] / 'mine').mkdir()
    (lab['dest'] / 'mine' / 'config.pbtxt').write_text('hand made')
    failed, result = lab['sync']([{'name': 'keep', 'version': '1'}, {'name': 'gone', 'state': 'absent'}],
                                 prune=True, check=True)
    assert not failed and {m['name']: m['action'] for m in result['models']} == {
        'keep': 'current', 'gone': 'would_remove', 'old': 'would_remove'}
    assert (lab['dest'] / 'old').exists()
    failed, result = lab['sync']([{'name': 'keep', 'version': '1'}, {'name': 'gone', 'state': 'absent'}],
                                 prune=True)
    assert not failed and result['changed']
    assert sorted(os.listdir(str(lab['dest']))) == ['keep', 'mine']
    failed, result = lab['sync']([{'name': 'mine', 'state': 'absent'}])
    assert failed and 'not put there by model_sync' in result['msg']
    assert (lab['dest'] / 'mine' / 'config.pbtxt').exists()


def test_unmanaged_directory_is_refused_unless_replace_unmanaged(lab):
    files = model_files(14, big=1000)
    upload_model(lab['client'], lab['bucket'], 'hand/1', files)
    (lab['dest'] / 'hand').mkdir()
    (lab['dest'] / 'hand' / 'config.pbtxt').write_text('hand made')
    failed, result = lab['sync']([{'name': 'hand', 'version': '1'}])
    assert failed and 'replace_unmanaged' in result['msg']
    assert (lab['dest'] / 'hand' / 'config.pbtxt').read_text() == 'hand made'
    failed, result = lab['sync']([{'name': 'hand', 'version': '1'}], replace_unmanaged=True)
    assert not failed, result
    assert (lab['dest'] / 'hand' / 'config.pbtxt').read_bytes() == files['config.pbtxt']
    kept = os.listdir(str(lab['dest'] / '.inferops-model-sync' / 'replaced'))
    assert len(kept) == 1 and kept[0].startswith('hand.')


def test_invalid_input_is_refused_before_any_request(lab):
    failed, result = lab['sync']([{'name': '.hidden', 'version': '1'}, {'name': 'x'}], connections=0,
                                 part_size='1K')
    assert failed
    for text in ('models[0] (name=.hidden): name', 'models[1] (name=x): version', 'connections = 0',
                 "part_size = '1K'"):
        assert text in result['msg']
    assert lab['proxy'].gets == 0
    failed, result = lab['sync']([{'name': 'x', 'version': '1'}], destination=str(lab['tmp'] / 'not-mounted'))
    assert failed and 'mount the models array first' in result['msg']


def test_destination_on_the_root_filesystem_is_refused_before_any_request_or_write(lab, monkeypatch):
    # The build host's recorded mount table (fixtures/model_sync): only /proc, /sys, /dev and /mnt/sandboxing
    # are mounted below /, so a real directory in /var/tmp is on the root filesystem in it. (tmp_path may
    # be on a tmpfs - /dev/shm here - a mount of its own, which the rule lets pass.)
    table = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'model_sync', 'mountinfo_host.txt')
    monkeypatch.setattr(model_sync, 'MOUNTINFO', table)
    dest = tempfile.mkdtemp(prefix='model-sync-unmounted-', dir='/var/tmp')
    try:
        upload_model(lab['client'], lab['bucket'], 'resnet/1', model_files(9, big=MIB))
        lab['proxy'].reset()
        for check in (True, False):
            failed, result = lab['sync']([{'name': 'resnet', 'version': '1'}], check=check, destination=dest,
                                         require_mount=None)  # None: the default
            assert failed and result['msg'].startswith('destination %s is not a mount point'
                                                       % os.path.realpath(dest)), result
            assert '(/dev/vda, ext4, mounted on /)' in result['msg']
        assert lab['proxy'].gets == 0 and os.listdir(dest) == []
        failed, result = lab['sync']([{'name': 'resnet', 'version': '1'}], destination=dest, require_mount=False)
        assert not failed and result['models'][0]['action'] == 'synced'
    finally:
        shutil.rmtree(dest)


def test_manifest_name_constant():
    assert MANIFEST_NAME == 'inferops-manifest.json'


def load_helper():
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'tools', 'model_manifest.py')
    spec = importlib.util.spec_from_file_location('model_manifest', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_helper_uploads_a_directory_that_model_sync_then_syncs(lab, store, monkeypatch, capsys):
    server, _proxy = store
    helper = load_helper()
    src = lab['tmp'] / 'src'
    (src / '1').mkdir(parents=True)
    (src / 'config.pbtxt').write_bytes(b'name: "h"\n')
    (src / '1' / 'model.onnx').write_bytes(blob(11 * MIB, 15))
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', server.access_key)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', server.secret_key)
    rc = helper.main(['upload', str(src), '--endpoint', server.endpoint, '--bucket', lab['bucket'], '--prefix',
                      'h/1', '--part-size', '5M', '--model', 'h', '--version', '1'])
    assert rc == 0
    assert lab['client'].head_object(lab['bucket'], 'h/1/1/model.onnx')['etag'].endswith('-3"')
    # Credentials from the environment, as the role passes them.
    failed, result = lab['sync']([{'name': 'h', 'version': '1'}], access_key=None, secret_key=None)
    assert not failed, result
    placed = lab['dest'] / 'h'
    manifest = lab['tmp'] / 'manifest.json'
    data, _headers = lab['client'].get_object(lab['bucket'], 'h/1/' + MANIFEST_NAME)
    manifest.write_bytes(data)
    capsys.readouterr()
    assert helper.main(['verify', str(placed), str(manifest)]) == 0, capsys.readouterr()  # the marker is not counted
    (placed / 'config.pbtxt').write_bytes(b'name: "x"\n')
    assert helper.main(['verify', str(placed), str(manifest)]) == 1
    assert 'config.pbtxt: sha256 differs' in capsys.readouterr().out


def test_a_second_sync_into_the_same_repository_is_refused(lab):
    upload_model(lab['client'], lab['bucket'], 'l/1', model_files(16, big=1000))
    with open(model_sync.lock_file(str(lab['dest'])), 'a+') as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        failed, result = lab['sync']([{'name': 'l', 'version': '1'}])
    assert failed and 'another model_sync is running' in result['msg']
    assert lab['proxy'].gets == 0 and not (lab['dest'] / 'l').exists()
    assert not lab['sync']([{'name': 'l', 'version': '1'}])[0]


def test_object_replaced_between_runs_is_fetched_again_not_mixed(lab):
    data = blob(10 * MIB, 17)
    files = {'config.pbtxt': b'name: "r"\n', 'w.bin': data}
    upload_model(lab['client'], lab['bucket'], 'r/1', files)  # w.bin: multipart, ETag "...-2"
    lab['proxy'].reset(limit=4 * MIB)
    assert lab['sync']([{'name': 'r', 'version': '1'}], retries=0, connections=1)[0]
    # The same bytes uploaded again in one PUT: a different ETag, so the parts fetched so far may
    # belong to another object; If-Match refuses the resumed ranges and the file starts over.
    lab['client'].put_object(lab['bucket'], 'r/1/w.bin', data)
    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'r', 'version': '1'}], connections=4)
    assert not failed, result
    model = result['models'][0]
    assert model['bytes_resumed'] > 0  # planned as a resume ...
    assert model['bytes_downloaded'] == len(data)  # ... but w.bin was fetched whole again, once
    assert (lab['dest'] / 'r' / 'w.bin').read_bytes() == data


def test_model_manifest_module_publishes_once_and_model_sync_syncs_it(lab, store):
    from ansible_collections.inferops.node.plugins.modules import model_manifest
    server, _proxy = store
    src = lab['tmp'] / 'pub'
    (src / '1').mkdir(parents=True)
    (src / 'config.pbtxt').write_bytes(b'name: "p"\n')
    (src / '1' / 'model.onnx').write_bytes(blob(6 * MIB, 18))
    args = dict(path=str(src), model='p', version='1', upload=True, endpoint=server.endpoint, bucket=lab['bucket'],
                prefix='p/1', access_key=server.access_key, secret_key=server.secret_key, part_size='5M')
    failed, result = run_module(model_manifest.main, args, check_mode=True, diff=True)
    assert not failed and result['changed'] and result['uploaded_bytes'] == 0
    assert result['diff']['before'] == 'absent\n' and '1/model.onnx %d ' % (6 * MIB) in result['diff']['after']
    failed, result = run_module(model_manifest.main, args)
    assert not failed and result['changed'] and result['uploaded_bytes'] == 6 * MIB + 10
    digest = result['manifest_sha256']
    failed, result = run_module(model_manifest.main, args)  # same files: nothing uploaded again
    assert not failed and not result['changed'] and result['manifest_sha256'] == digest
    failed, result = lab['sync']([{'name': 'p', 'version': '1'}])
    assert not failed and result['models'][0]['manifest_sha256'] == digest
    failed, result = run_module(model_manifest.main, dict(path=str(lab['tmp'] / 'nothing')))
    assert failed and 'nothing' in result['msg']


def test_a_model_with_an_empty_file_is_published_synced_and_then_current(lab, store, monkeypatch):
    # Python-backend models often carry an empty __init__.py: a zero-byte object has no byte range to fetch.
    server, _proxy = store
    src = lab['tmp'] / 'empty-src'
    (src / '1').mkdir(parents=True)
    (src / 'config.pbtxt').write_bytes(b'name: "empty"\nbackend: "python"\n')
    (src / '1' / 'model.py').write_bytes(b'class TritonPythonModel: pass\n')
    (src / '1' / '__init__.py').write_bytes(b'')
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', server.access_key)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', server.secret_key)
    assert load_helper().main(['upload', str(src), '--endpoint', server.endpoint, '--bucket', lab['bucket'],
                               '--prefix', 'empty/1', '--model', 'empty', '--version', '1']) == 0
    failed, result = lab['sync']([{'name': 'empty', 'version': '1'}], access_key=None, secret_key=None)
    assert not failed, result
    assert result['models'][0]['action'] == 'synced'
    placed = tree(lab['dest'] / 'empty')
    placed.pop('.inferops-model-sync.json')
    assert placed == tree(src)
    failed, result = lab['sync']([{'name': 'empty', 'version': '1'}], access_key=None, secret_key=None)
    assert not failed and result['changed'] is False and result['models'][0]['action'] == 'current'


def test_a_corrupted_single_part_file_is_refused_by_its_streamed_hash(lab):
    # The files are smaller than part_size: each is one GET, hashed as it arrives, never journalled.
    files = {'config.pbtxt': b'name: "small"\n', 'tokenizer.json': blob(300 * 1024, 7)}
    corrupt = dict(files, **{'tokenizer.json': flip_last_byte(files['tokenizer.json'])})
    upload_model(lab['client'], lab['bucket'], 'small/1', corrupt, manifest=make_manifest(files))
    failed, result = lab['sync']([{'name': 'small', 'version': '1'}])
    assert failed
    assert 'sha256 mismatch' in result['msg'] and 'small/1/tokenizer.json' in result['msg']
    assert not (lab['dest'] / 'small').exists()
    staging = lab['dest'] / '.inferops-model-sync'
    assert not list(staging.glob('parts/*'))  # the bad download was discarded
    # Only the verified config is kept for the next run, under its own sha256.
    assert sorted(path.name for path in staging.glob('objects/*')) == [hashlib.sha256(files['config.pbtxt']).hexdigest()]


def test_single_part_files_keep_no_journal_and_an_interrupted_one_is_fetched_again_whole(lab):
    files = {'config.pbtxt': b'name: "few"\n', 'a.bin': blob(700 * 1024, 8), 'b.bin': blob(700 * 1024, 9)}
    total = sum(len(d) for d in files.values())
    upload_model(lab['client'], lab['bucket'], 'few/1', files)
    lab['proxy'].reset(limit=1024 * 1024)  # the line drops inside the second file
    failed, result = lab['sync']([{'name': 'few', 'version': '1'}], retries=0, connections=1)
    assert failed, result
    staging = lab['dest'] / '.inferops-model-sync'
    # No journal for a one-part file; objects/ holds only what was verified (and synced) before the drop.
    assert not list(staging.glob('parts/*.journal'))
    kept = {path.name: path.read_bytes() for path in staging.glob('objects/*')}
    assert len(kept) < len(files)
    assert all(hashlib.sha256(data).hexdigest() == name for name, data in kept.items())

    lab['proxy'].reset()
    failed, result = lab['sync']([{'name': 'few', 'version': '1'}])
    assert not failed, result
    model = result['models'][0]
    # The cut file came again whole: a one-part file has no parts to resume from.
    assert model['bytes_downloaded'] == total - sum(len(data) for data in kept.values())
    placed = tree(lab['dest'] / 'few')
    placed.pop('.inferops-model-sync.json')
    assert placed == files
