# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model_sync tests' store (test_model_sync*.py): a real S3 API on loopback, never a mock.

* ``store`` - ``(server, proxy)``: one moto server per pytest process (tests/unit/s3_lab.py), made before
  ansible-test forks the worker for a test (tests/unit/before_fork.py) and stopped when that process exits,
  behind a ``CountingProxy`` that counts what it serves.
* ``second_store`` - the same with another moto server that takes any key pair (``MotoServer(auth=False)``):
  a call has one pair of credentials, ``store``'s IAM user's, and moto makes a random pair per server.
* ``lab`` - per test: its own bucket, an empty destination ``dest`` below ``tmp_path``, and
  ``sync(models, check=False, diff=False, **options)`` - model_sync run against the proxy with the IAM
  user's credentials (an option set to None is left out: the environment then applies), returning
  ``(failed, result)``.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from module_harness import run_module  # noqa: E402  pylint: disable=wrong-import-position
from s3_lab import CountingProxy, MotoServer  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.inferops.node.plugins.modules import model_sync  # noqa: E402
from ansible_collections.inferops.node.tests.unit import before_fork  # noqa: E402


@before_fork.shared('store')
def moto_server():
    return MotoServer()


@before_fork.shared('second_store')
def second_moto_server():
    return MotoServer(auth=False)


def proxied(fixture):
    server = before_fork.value(fixture)
    proxy = CountingProxy(server.port)
    yield server, proxy
    proxy.stop()


@pytest.fixture(scope='module')
def store():
    yield from proxied('store')


@pytest.fixture(scope='module')
def second_store():
    yield from proxied('second_store')


@pytest.fixture
def lab(store, tmp_path, request):  # pylint: disable=redefined-outer-name
    server, proxy = store
    bucket = 't-' + request.node.name.replace('_', '-').lower()[:40]
    client = server.client()
    client.create_bucket(bucket)
    dest = tmp_path / 'models'
    dest.mkdir()
    proxy.reset()

    def sync(models, check=False, diff=False, **extra):
        # tmp_path is not a mount point of its own: the mount rule is off here, and tested in
        # test_model_sync.py and on recorded mount tables (test_model_sync_mount.py).
        args = dict(endpoint=proxy.endpoint, region=server.region, bucket=bucket, access_key=server.access_key,
                    secret_key=server.secret_key, destination=str(dest), models=models, part_size='1M',
                    connections=4, require_mount=False)
        args.update(extra)
        args = dict((k, v) for k, v in args.items() if v is not None)  # None: leave it to the environment
        return run_module(model_sync.main, args, check_mode=check, diff=diff)

    return {'client': client, 'bucket': bucket, 'dest': dest, 'proxy': proxy, 'sync': sync, 'tmp': tmp_path}
