# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync's per-model endpoint against TWO real S3 APIs on loopback: the ``lab`` store and a second moto
server (``second_store``; both in conftest.py), each behind its own counting proxy. Both hold the same bucket
and key prefix with different files, so a model placed with the other store's bytes, or a request sent to the
wrong store, fails."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from s3_lab import MIB, model_files, tree, upload_model  # noqa: E402  pylint: disable=wrong-import-position

SLACK = 64 * 1024  # manifests, headers and XML around the files' bytes


def two_stores(lab, second_store):
    """Model a's files in the lab store, model b's in the second one - same bucket, same prefix."""
    other, other_proxy = second_store
    other.client().create_bucket(lab['bucket'])
    files = {'a': model_files(41, big=2 * MIB + 5), 'b': model_files(42, big=3 * MIB + 7)}
    upload_model(lab['client'], lab['bucket'], 'shared/1', files['a'])
    upload_model(other.client(), lab['bucket'], 'shared/1', files['b'])
    lab['proxy'].reset()
    other_proxy.reset()
    models = [{'name': 'a', 'version': '1', 'prefix': 'shared/1'},
              {'name': 'b', 'version': '1', 'prefix': 'shared/1', 'endpoint': other_proxy.endpoint}]
    return files, models, other_proxy


def size(files):
    return sum(len(data) for data in files.values())


def test_each_model_is_fetched_from_its_own_endpoint(lab, second_store):
    files, models, other_proxy = two_stores(lab, second_store)
    failed, result = lab['sync'](models)
    assert not failed, result
    by = dict((m['name'], m) for m in result['models'])
    assert (by['a']['action'], by['a']['endpoint']) == ('synced', lab['proxy'].endpoint)
    assert (by['b']['action'], by['b']['endpoint']) == ('synced', other_proxy.endpoint)
    for name in ('a', 'b'):
        placed = tree(lab['dest'] / name)
        marker = json.loads(placed.pop('.inferops-model-sync.json'))
        assert placed == files[name], name  # each model holds its own store's bytes
        assert marker['endpoint'] == by[name]['endpoint']
    # Each store served its model's manifest and files (1 MiB parts) and nothing of the other's.
    assert lab['proxy'].gets == 1 + 1 + 3 and other_proxy.gets == 1 + 1 + 4
    assert size(files['a']) <= lab['proxy'].served < size(files['a']) + SLACK
    assert size(files['b']) <= other_proxy.served < size(files['b']) + SLACK

    lab['proxy'].reset()
    other_proxy.reset()
    failed, result = lab['sync'](models)  # unchanged: one manifest GET per model, at its own endpoint
    assert not failed and not result['changed'], result
    assert (lab['proxy'].gets, other_proxy.gets) == (1, 1)


def test_check_mode_reads_each_manifest_from_its_endpoint_and_downloads_nothing(lab, second_store):
    files, models, other_proxy = two_stores(lab, second_store)
    failed, result = lab['sync'](models, check=True)
    assert not failed and result['changed'], result
    assert [(m['name'], m['action'], m['bytes_to_download']) for m in result['models']] == [
        ('a', 'would_sync', size(files['a'])), ('b', 'would_sync', size(files['b']))]
    assert (lab['proxy'].gets, other_proxy.gets) == (1, 1)
    assert os.listdir(str(lab['dest'])) == []


def test_a_model_endpoint_is_checked_as_the_call_endpoint_before_any_request(lab, second_store):
    _files, models, other_proxy = two_stores(lab, second_store)
    bad = dict(models[1], endpoint=other_proxy.endpoint.replace('http://', ''))
    failed, result = lab['sync']([models[0], bad])
    assert failed
    assert ('models[1] (name=b): endpoint = "%s" must be an http:// or https:// URL with a host'
            % bad['endpoint']) in result['msg'], result['msg']
    failed, call = lab['sync']([models[0]], endpoint=bad['endpoint'])
    assert failed
    assert ("endpoint = '%s': must be an http:// or https:// URL with a host" % bad['endpoint']) in call['msg']
    port = dict(models[1], endpoint='http://127.0.0.1:99999')
    failed, result = lab['sync']([models[0], port])
    assert failed and 'models[1] (name=b): endpoint = "http://127.0.0.1:99999"' in result['msg']
    assert (lab['proxy'].gets, other_proxy.gets) == (0, 0)
    assert os.listdir(str(lab['dest'])) == []
