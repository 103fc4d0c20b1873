# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real HTTP server on 127.0.0.1 that answers with what tritonserver answered (fixtures/triton).

``RecordedTriton(state)`` serves ``fixtures/triton/<state>.json`` - status, Content-Type and body of each
recorded ``(method, path)``, byte for byte - until ``stop()``. A request that was not recorded is answered
599 and kept in ``unrecorded``, so a test can fail on a read the recording does not cover; ``requests``
lists every ``(method, path)`` asked, in order. ``serve(handler)`` / ``stop(server)`` - any handler on 127.0.0.1
(test_triton_warmup's stand-in too); ``closed_port()`` - a loopback port nothing listens on.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ansible_collections.inferops.node.tests.unit.module_harness import fixture

__all__ = ['RecordedTriton', 'closed_port', 'serve', 'stop']


class RecordedTriton(object):

    def __init__(self, state):
        self.answers = dict(((a['method'], a['path']), a) for a in json.loads(fixture('triton', state + '.json')))
        self.requests = []
        self.unrecorded = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get('Content-Length') or 0)
                if length:
                    self.rfile.read(length)
                key = (self.command, self.path)
                replay.requests.append(key)
                answer = replay.answers.get(key)
                if answer is None:
                    replay.unrecorded.append(key)
                    answer = {'status': 599, 'content_type': 'text/plain', 'body': 'not recorded'}
                body = answer['body'].encode('utf-8')
                self.send_response(answer['status'])
                self.send_header('Content-Type', answer['content_type'])
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.server, self.url = serve(Handler)

    def stop(self):
        stop(self.server)


def serve(handler, port=0):
    """``handler`` served on 127.0.0.1:``port`` (0: a free one) from a daemon thread: ``(server, url)``."""
    server = ThreadingHTTPServer(('127.0.0.1', port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d' % server.server_address[1]


def stop(server):
    server.shutdown()
    server.server_close()


def closed_port():
    """A loopback port that was free a moment ago: connecting to it is refused."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port
