# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""container_image against the Docker Engine API answers recorded on a lab guest (fixtures/docker_api), replayed
by a unix socket server that reads each request whole (headers and chunked body) before it answers."""

from __future__ import annotations

import io
import json
import os
import socket
import tarfile
import tempfile
import threading

import pytest

from ansible_collections.inferops.node.plugins.modules import container_image
from ansible_collections.inferops.node.tests.unit.module_harness import run_module

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures', 'docker_api')
NAME = 'inferops/tritonserver:2.51.0-cpu'
IMAGE_ID = 'sha256:7b952ec0537c7e2a0b6cf0c677ad89e1f725cae3dc59aefc9ba762dea53af93e'


def recorded(name):
    with open(os.path.join(FIXTURES, name), 'rb') as handle:
        return handle.read()


def answer(name):
    """The recorded answer as the engine sent it: the fixtures keep LF line endings and a chunked body as its JSON
    lines (fixtures/docker_api/README.md); the engine ends header lines and each streamed object with CRLF and
    sends one object per chunk."""
    head, body = recorded(name).split(b'\n\n', 1)
    lines = head.split(b'\n')
    if b'Transfer-Encoding: chunked' in lines:
        body = b''.join(b'%x\r\n%s\r\n\r\n' % (len(line) + 2, line) for line in body.split(b'\n') if line) + b'0\r\n\r\n'
    else:
        lines.append(b'Content-Length: %d' % len(body))
    return b'\r\n'.join(lines) + b'\r\n\r\n' + body


class Engine(object):
    """Answers each request with the next recorded answer of its route; keeps what it was sent."""

    def __init__(self, routes, gone_after=None):
        self.routes = dict((route, list(answers)) for route, answers in routes.items())
        # The engine stops answering after it answered this route (a daemon restarted during the run).
        self.gone_after = gone_after
        self.requests = []
        self.path = os.path.join(tempfile.mkdtemp(), 'docker.sock')
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, dummy = self.sock.accept()
            except OSError:
                return
            # The file object holds the socket open: both close here, so a dropped connection reaches the client.
            with conn, conn.makefile('rb') as stream:
                request = stream.readline().decode().split()
                headers = {}
                while True:
                    line = stream.readline().decode().strip()
                    if not line:
                        break
                    key, value = line.split(':', 1)
                    headers[key.strip().lower()] = value.strip()
                body = 0
                if headers.get('transfer-encoding') == 'chunked':
                    while True:
                        size = int(stream.readline().strip(), 16)
                        body += len(stream.read(size))
                        stream.readline()
                        if size == 0:
                            break
                route = '%s %s' % (request[0], request[1])
                self.requests.append((route, body))
                answers = self.routes.get(route)
                if not answers:
                    conn.sendall(b'HTTP/1.1 501 Not Implemented\r\n\r\n')
                elif answers[0] is None:  # the engine drops the connection unanswered (it restarted)
                    answers.pop(0)
                else:
                    conn.sendall(answer(answers.pop(0)))
            if route == self.gone_after:
                self.sock.close()
                os.unlink(self.path)
                return

    def close(self):
        self.sock.close()


INSPECT = 'GET /images/inferops%2Ftritonserver%3A2.51.0-cpu/json'
LOAD = 'POST /images/load?quiet=0'
PULL = 'POST /images/create?fromImage=inferops%2Ftritonserver&tag=2.51.0-cpu'


@pytest.fixture
def archive(tmp_path):
    """A docker save archive with the recorded archive's manifest.json and a 3 MiB stand-in for its layer (the
    replayed engine reads the body and answers from the recording)."""
    path = tmp_path / 'triton.tar'
    with tarfile.open(path, 'w') as tar:
        for name, data in (('manifest.json', recorded('manifest.json')),
                           ('237eb66dca25b325e7ad72bdaf51ea39b9d38102cbfb172cf9fa9d77c2bcbdd5/layer.tar', b'\0' * (3 << 20))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def run(engine, check_mode=False, **args):
    return run_module(container_image.main, dict(dict(name=NAME, socket=engine.path), **args), check_mode=check_mode)


def test_a_missing_image_is_loaded_from_the_archive_with_progress(archive, tmp_path):
    engine = Engine({INSPECT: ['inspect-missing.http', 'inspect.http'], LOAD: ['load.http']})
    status = tmp_path / 'status.json'
    failed, result = run(engine, archive=archive, status_file=str(status), status_interval=0.05)
    assert not failed, result
    assert result['changed'] and result['action'] == 'loaded' and result['image_id'] == IMAGE_ID
    assert result['bytes'] == os.path.getsize(archive)
    assert result['engine_lines'] == ['Loaded image: inferops/tritonserver:2.51.0-cpu']
    # The whole archive went to the engine, in one load.
    assert engine.requests == [(INSPECT, 0), (LOAD, os.path.getsize(archive)), (INSPECT, 0)]
    final = json.loads(status.read_text())
    # The last progress the engine streamed: every byte of the layer unpacked.
    assert final['state'] == 'done' and final['bytes_done'] == final['bytes_total'] == 347299840
    assert final['line'].startswith('done %s: 100.0 %%' % NAME)


def test_an_engine_gone_after_the_load_fails_the_run_and_the_status_file_says_so(archive, tmp_path):
    engine = Engine({INSPECT: ['inspect-missing.http'], LOAD: ['load.http']}, gone_after=LOAD)
    status = tmp_path / 'status.json'
    failed, result = run(engine, archive=archive, status_file=str(status), status_interval=0.05)
    assert failed and result['action'] == 'loaded' and result['image_id'] is None
    assert result['msg'].startswith('the load ended, but the image could not be read back: the docker engine at %s '
                                    'does not answer' % engine.path)
    assert json.loads(status.read_text())['state'] == 'failed'


def test_an_engine_that_drops_the_read_back_unanswered_fails_the_run_without_a_traceback(archive, tmp_path):
    # The request was accepted and the connection reset before any answer: what a restarting daemon does.
    engine = Engine({INSPECT: ['inspect-missing.http', None], LOAD: ['load.http']})
    failed, result = run(engine, archive=archive, status_file=str(tmp_path / 'status.json'), status_interval=0.05)
    assert failed and result['action'] == 'loaded' and result['image_id'] is None
    assert result['msg'].startswith('the load ended, but the image could not be read back: the docker engine at %s '
                                    'does not answer' % engine.path)


def test_the_archive_image_already_on_the_engine_is_not_loaded_again(archive):
    engine = Engine({INSPECT: ['inspect.http']})
    failed, result = run(engine, archive=archive)
    assert not failed and not result['changed'] and result['action'] == 'present'
    assert [route for route, dummy in engine.requests] == [INSPECT]


def test_check_mode_says_it_would_load_and_sends_nothing(archive):
    engine = Engine({INSPECT: ['inspect-missing.http']})
    failed, result = run(engine, check_mode=True, archive=archive)
    assert not failed and result['changed'] and result['action'] == 'would_load' and result['image_id'] is None
    assert [route for route, dummy in engine.requests] == [INSPECT]


def test_an_archive_of_another_image_is_refused_before_any_request(archive):
    engine = Engine({})
    failed, result = run(engine, archive=archive, name='inferops/tritonserver:2.52.0-cpu')
    assert failed
    assert result['msg'] == ('archive %s tags its image inferops/tritonserver:2.51.0-cpu, not inferops/tritonserver:'
                             '2.52.0-cpu: name the image as the archive does, or ship the archive of '
                             'inferops/tritonserver:2.52.0-cpu' % archive)
    assert engine.requests == []


def test_a_broken_archive_fails_with_the_engine_s_words(archive):
    engine = Engine({INSPECT: ['inspect-missing.http'], LOAD: ['load-truncated.http']})
    failed, result = run(engine, archive=archive)
    assert failed and result['msg'] == 'load of %s failed: unexpected EOF' % NAME


def test_a_missing_image_without_archive_is_pulled_and_an_unreachable_registry_named():
    engine = Engine({INSPECT: ['inspect-missing.http'], PULL: ['pull-unreachable.http']})
    failed, result = run(engine)
    assert failed
    assert result['msg'].startswith('pull of %s failed: Get "https://registry-1.docker.io/v2/": dial tcp' % NAME)
    assert [route for route, dummy in engine.requests] == [INSPECT, PULL]


def test_pull_never_refuses_a_missing_image():
    engine = Engine({INSPECT: ['inspect-missing.http']})
    failed, result = run(engine, pull='never')
    assert failed and 'the engine has no image %s, and pull is never' % NAME in result['msg']


def test_an_engine_that_does_not_answer_is_named(tmp_path):
    failed, result = run_module(container_image.main, dict(name=NAME, socket=str(tmp_path / 'none.sock')))
    assert failed and result['msg'].startswith('the docker engine at %s does not answer' % (tmp_path / 'none.sock'))
