# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real S3 API on loopback for the model_sync tests and benchmark: a moto server plus a counting proxy.

* ``MotoServer()`` - starts ``moto_server`` (PyPI ``moto[server]``, installed by requirements/test.txt into
  the project venv) on 127.0.0.1 and a random free port, with request authentication switched on after
  the first three actions, which create an IAM user with full access and its key pair (``access_key``,
  ``secret_key``): so wrong credentials are refused as a real store refuses them. ``stop()`` ends it.
  ``MotoServer(auth=False)`` takes any key pair: a second store for a call whose one pair of credentials
  is the first server's (moto makes a random pair per server). ``temporary_credentials()`` - an assumed
  role's key, secret and session token (STS), refused without that token.
* ``CountingProxy(port)`` - a TCP proxy on another free port that counts the bytes the store sent and
  the GET requests, and can cut every connection after ``limit`` bytes (an interrupted download);
  ``rate`` caps each connection's bytes per second (the per-stream limit of a remote store, for the
  benchmark).
* ``upload_model(client, bucket, prefix, files, part_size)`` - uploads files (multipart above part_size)
  and their manifest.
* ``blob(size, seed)``, ``model_files(seed, big)`` - a model's files ({path: bytes}, one of them ``big``);
  ``tree(path)`` - the files below a directory, {relative path: bytes}.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import hashlib
import json
import os
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import (
    FORMAT,
    MANIFEST_NAME,
    dump_manifest,
)
from ansible_collections.inferops.node.plugins.module_utils.model_sync.s3 import S3Client, sign

MIB = 1024 * 1024


def _die_with_parent():
    # The server must not outlive a test run that was killed (xdist worker, time-out): PR_SET_PDEATHSIG.
    libc = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6', use_errno=True)
    libc.prctl(1, signal.SIGTERM)


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def moto_command():
    """moto_server from PATH, next to this Python, or the checkout's .venv (ansible-test runs in its own venv)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [shutil.which('moto_server'), os.path.join(os.path.dirname(sys.executable), 'moto_server')]
    root = os.environ.get('INFEROPS_CHECKOUT')
    if root:
        candidates.append(os.path.join(root, '.venv', 'bin', 'moto_server'))
    candidates.append(os.path.join(here, '..', '..', '.venv', 'bin', 'moto_server'))
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    return None


class MotoServer(object):
    def __init__(self, region='us-east-1', detach=False, auth=True):
        command = moto_command()
        if not command:
            raise RuntimeError('moto_server not found: run tools/bootstrap.sh (requirements/test.txt has moto[server])')
        self.port = free_port()
        self.region = region
        self.endpoint = 'http://127.0.0.1:%d' % self.port
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT='3', MOTO_ALLOW_NONEXISTENT_REGION='true')
        if not auth:
            env.pop('INITIAL_NO_AUTH_ACTION_COUNT')  # moto's default: never
        if detach:  # a store that outlives this process (molecule/model_sync): stopped by its pid
            self.log = open(os.devnull, 'wb')
            self.proc = subprocess.Popen([command, '-H', '127.0.0.1', '-p', str(self.port)], stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env, start_new_session=True)
        else:
            self.proc = subprocess.Popen([command, '-H', '127.0.0.1', '-p', str(self.port)], stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
            atexit.register(self.stop)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError('moto_server did not start')
                time.sleep(0.1)
        self.access_key, self.secret_key = self._make_user()

    def _iam(self, params, service='iam', version='2010-05-08', key=('AKIAIOSFODNN7EXAMPLE', 'bootstrap')):
        body = urllib.parse.urlencode(dict(params, Version=version)).encode()
        headers = {'content-type': 'application/x-www-form-urlencoded'}
        signed = sign('POST', '127.0.0.1:%d' % self.port, '/', {}, headers, hashlib.sha256(body).hexdigest(),
                      key[0], key[1], self.region, service)
        import http.client
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=30)
        conn.request('POST', '/', body=body, headers=signed)
        response = conn.getresponse()
        data = response.read().decode()
        conn.close()
        if response.status != 200:
            raise RuntimeError('%s %s: %s' % (service.upper(), params['Action'], data))
        return data

    def temporary_credentials(self, name='sync-role'):
        """(access key, secret, session token) of a role with full access, assumed by the IAM user."""
        user = (self.access_key, self.secret_key)
        trust = json.dumps({'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': 'sts:AssumeRole',
                                                                    'Principal': {'AWS': '*'}}]})
        policy = json.dumps({'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*',
                                                                     'Resource': '*'}]})
        self._iam({'Action': 'CreateRole', 'RoleName': name, 'AssumeRolePolicyDocument': trust}, key=user)
        self._iam({'Action': 'PutRolePolicy', 'RoleName': name, 'PolicyName': 'all', 'PolicyDocument': policy},
                  key=user)
        data = self._iam({'Action': 'AssumeRole', 'RoleArn': 'arn:aws:iam::123456789012:role/%s' % name,
                          'RoleSessionName': 'model-sync'}, service='sts', version='2011-06-15', key=user)
        found = dict((el.tag.split('}')[-1], el.text) for el in ET.fromstring(data).iter())
        return found['AccessKeyId'], found['SecretAccessKey'], found['SessionToken']

    def _make_user(self):
        self._iam({'Action': 'CreateUser', 'UserName': 'sync'})
        policy = json.dumps({'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*',
                                                                     'Resource': '*'}]})
        self._iam({'Action': 'PutUserPolicy', 'UserName': 'sync', 'PolicyName': 'all', 'PolicyDocument': policy})
        data = self._iam({'Action': 'CreateAccessKey', 'UserName': 'sync'})
        key = data.split('<AccessKeyId>')[1].split('<')[0]
        secret = data.split('<SecretAccessKey>')[1].split('<')[0]
        return key, secret

    def client(self, endpoint=None, **kwargs):
        return S3Client(endpoint or self.endpoint, self.region, self.access_key, self.secret_key, **kwargs)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class CountingProxy(object):
    """Forwards 127.0.0.1:<port> to the store; counts bytes served, GET requests and connections open at
    once (``peak``); can cut the line and cap each connection's rate."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.endpoint = 'http://127.0.0.1:%d' % self.port
        self.lock = threading.Lock()
        self.limit = None
        self.generation = 0  # reset() starts a new one: connections it found open are not counted in peak
        self.open = 0  # connections opened since reset() and open now, and the most of them open at once
        self.reset()
        self.conns = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self, limit=None, rate=None):
        with self.lock:
            self.served = 0
            self.gets = 0
            self.limit = limit
            self.rate = rate
            self.generation += 1
            self.open = self.peak = 0

    def _accept(self):
        while not self.closed:
            try:
                client, _addr = self.sock.accept()
            except OSError:
                return
            with self.lock:
                cut = self.limit is not None and self.served >= self.limit
            if cut:
                client.close()
                continue
            try:
                upstream = socket.create_connection(('127.0.0.1', self.target_port))
            except OSError:
                client.close()
                continue
            self.conns.append((client, upstream))
            ended = []  # the first of the connection's two pipes to end counts it closed
            with self.lock:
                generation = self.generation
                self.open += 1
                self.peak = max(self.peak, self.open)
            threading.Thread(target=self._pipe, args=(client, upstream, False, ended, generation), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True, ended, generation), daemon=True).start()

    def _pipe(self, src, dst, from_store, ended, generation):
        started, sent = time.monotonic(), 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if from_store and self.rate:
                    sent += len(data)
                    ahead = sent / float(self.rate) - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
                with self.lock:
                    if from_store:
                        if self.limit is not None and self.served + len(data) > self.limit:
                            data = data[:max(self.limit - self.served, 0)]
                            self.served += len(data)
                            if data:
                                dst.sendall(data)
                            raise OSError('cut')
                        self.served += len(data)
                    else:
                        self.gets += data.count(b'GET /')
                dst.sendall(data)
        except OSError:
            pass
        # Counted closed before either socket closes: when the store ends a keep-alive connection, the client
        # sees EOF only after this, so its next connection cannot be counted beside the dead one.
        with self.lock:
            if not ended:
                ended.append(from_store)
                if generation == self.generation:
                    self.open -= 1
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def stop(self):
        self.closed = True
        self.sock.close()
        for a, b in self.conns:
            a.close()
            b.close()


def make_manifest(files, model=None, version=None):
    entries = [{'path': path, 'size': len(data), 'sha256': hashlib.sha256(data).hexdigest()}
               for path, data in sorted(files.items())]
    manifest = {'format': FORMAT, 'files': entries}
    if model:
        manifest['model'] = model
    if version:
        manifest['version'] = version
    return manifest


def upload_model(client, bucket, prefix, files, part_size=5 * 1024 * 1024, manifest=None, tmpdir=None):
    """Upload {path: bytes} under prefix (multipart above part_size) and the manifest; returns it."""
    tmpdir = tmpdir or tempfile.mkdtemp()
    for path, data in files.items():
        local = os.path.join(tmpdir, 'upload.bin')
        with open(local, 'wb') as handle:
            handle.write(data)
        client.upload_file(bucket, '%s/%s' % (prefix, path), local, part_size=part_size)
        os.unlink(local)
    manifest = manifest or make_manifest(files)
    client.put_object(bucket, '%s/%s' % (prefix, MANIFEST_NAME), dump_manifest(manifest))
    return manifest


def blob(size, seed):
    return (bytes([seed % 251]) + os.urandom(31)) * (size // 32) + b'x' * (size % 32)


def flip_last_byte(data):
    """``data`` with its last byte changed: a corruption whatever that byte was (blob()'s random bytes are
    b'!' one time in 256, which made a replaced last byte no change at all)."""
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def model_files(seed, big=6 * MIB + 17):
    return {'config.pbtxt': ('name: "m%d"\n' % seed).encode(), '1/model.onnx': blob(big, seed)}


def tree(path):
    out = {}
    for root, _dirs, names in os.walk(str(path)):
        for name in names:
            full = os.path.join(root, name)
            with open(full, 'rb') as handle:
                out[os.path.relpath(full, str(path))] = handle.read()
    return out
