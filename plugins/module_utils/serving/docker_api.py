# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Docker Engine API on its unix socket, for what the CLI does silently: loading an image archive and
pulling an image, with the bytes moved as they move (module container_image).

The CLI prints nothing of a load until it ends and, without a terminal, no byte counts of a pull; the API
streams JSON objects (``{"status": ..., "id": <layer>, "progressDetail": {"current": n, "total": n}}``,
``{"stream": "Loaded image: ..."}``, ``{"errorDetail": {"message": ...}}``), and a load's request body is the
archive itself, so the bytes sent are the load's progress. Standard library only.

* ``Engine(socket_path)`` - ``image(name)``: the image's inspect JSON or None; ``load(handle, sent, streamed)``:
  POST the archive (a file object), ``sent(n)`` per chunk sent, ``streamed(object)`` per object of the layers'
  unpacking, returns the engine's lines; ``pull(name, streamed)``: ``streamed(object)`` per streamed object
  (``PullProgress.update`` sums them), returns the last status.
* ``PullProgress`` - bytes downloaded and to download over the layers the engine reported so far.
* ``archive_image(path)`` - the image ID and tags a ``docker save`` archive holds (its manifest.json).
* ``EngineError`` - what the engine refused, in its own words.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import tarfile
import urllib.parse

__all__ = ['Engine', 'EngineError', 'PullProgress', 'archive_image', 'split_reference']

CHUNK = 1024 * 1024


class EngineError(Exception):
    pass


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__('localhost', timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def split_reference(name):
    """``repository[:tag]`` -> (repository, tag); a ':' inside a registry's host:port is not a tag."""
    last = name.rsplit('/', 1)[-1]
    if ':' in last and '@' not in name:
        repository, tag = name.rsplit(':', 1)
        return repository, tag
    return name, 'latest' if '@' not in name else ''


def _objects(response):
    """The JSON objects of a streamed answer (one per line; the engine ends each with CRLF)."""
    for line in response:
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line.decode('utf-8', 'replace'))
        except ValueError:
            continue
        if isinstance(value, dict):
            if value.get('errorDetail') or value.get('error'):
                raise EngineError((value.get('errorDetail') or {}).get('message') or value.get('error'))
            yield value


class PullProgress(object):
    """Bytes of the layers the engine has reported: ``done`` of ``total`` (a layer's total is known once it
    starts downloading; an already present layer counts as done with no bytes)."""

    def __init__(self):
        self.layers = {}

    def update(self, value):
        layer = value.get('id')
        if not layer or layer == value.get('status'):
            return
        detail = value.get('progressDetail') or {}
        done, total = self.layers.get(layer, (0, 0))
        status = value.get('status') or ''
        if status == 'Downloading' and detail.get('total'):
            done, total = detail.get('current') or 0, detail['total']
        elif status in ('Download complete', 'Verifying Checksum', 'Extracting', 'Pull complete'):
            done = total
        self.layers[layer] = (done, total)

    @property
    def done(self):
        return sum(done for done, dummy in self.layers.values())

    @property
    def total(self):
        return sum(total for dummy, total in self.layers.values())


class Engine(object):
    def __init__(self, socket_path='/var/run/docker.sock', timeout=60):
        self.socket_path = socket_path
        self.timeout = timeout

    def _request(self, method, path, body=None, headers=None, timeout=None):
        connection = _UnixConnection(self.socket_path, timeout or self.timeout)
        # The answer is read inside the same guard: an engine that restarts between accepting the connection and
        # answering resets it (ConnectionResetError), which is the same failure as one that never answered.
        try:
            connection.request(method, path, body=body, headers=headers or {})
            return connection, connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise EngineError('the docker engine at %s does not answer: %s' % (self.socket_path, exc))

    @contextlib.contextmanager
    def _answer(self, connection):
        """Reading an answer: a connection the engine drops mid-answer is an EngineError; always closed."""
        try:
            yield
        except (OSError, http.client.HTTPException) as exc:
            raise EngineError('the docker engine at %s dropped its answer: %s' % (self.socket_path, exc))
        finally:
            connection.close()

    def image(self, name):
        """The image's inspect JSON (``Id``, ``RepoTags``, ``Size``), or None when the engine has no such image."""
        connection, response = self._request('GET', '/images/%s/json' % urllib.parse.quote(name, safe=''))
        with self._answer(connection):
            body = response.read()
        if response.status == 404:
            return None
        if response.status != 200:
            raise EngineError(_message(body, response.status))
        return json.loads(body.decode('utf-8'))

    def load(self, handle, sent, streamed=None):
        """POST /images/load with the archive ``handle`` as the body, chunked; ``sent(n)`` per chunk. The engine
        takes the whole archive first, then unpacks its layers and streams ``Loading layer`` objects (with
        ``progressDetail``): ``streamed(object)`` for each. Returns the engine's lines (``Loaded image: ...``)."""
        def chunks():
            while True:
                data = handle.read(CHUNK)
                if not data:
                    return
                sent(len(data))
                yield data

        # The engine reads the whole archive before it answers: no socket time-out while it unpacks.
        connection, response = self._request('POST', '/images/load?quiet=0', body=chunks(),
                                             headers={'Content-Type': 'application/x-tar'}, timeout=None)
        with self._answer(connection):
            if response.status != 200:
                raise EngineError(_message(response.read(), response.status))
            lines = []
            for value in _objects(response):
                if value.get('stream', '').strip():
                    lines.append(value['stream'].strip())
                elif streamed is not None:
                    streamed(value)
            return lines

    def pull(self, name, streamed):
        """POST /images/create for ``name``; ``streamed(object)`` per streamed object. Returns the last status."""
        repository, tag = split_reference(name)
        query = urllib.parse.urlencode(dict(fromImage=repository, **({'tag': tag} if tag else {})))
        connection, response = self._request('POST', '/images/create?' + query, timeout=None)
        with self._answer(connection):
            if response.status != 200:
                raise EngineError(_message(response.read(), response.status))
            status = None
            for value in _objects(response):
                streamed(value)
                status = value.get('status') or status
            return status


def _message(body, status):
    try:
        return json.loads(body.decode('utf-8')).get('message') or 'HTTP %d' % status
    except (ValueError, AttributeError):
        return 'HTTP %d: %s' % (status, body[:200].decode('utf-8', 'replace'))


def archive_image(path):
    """``{'id': 'sha256:...', 'tags': [...]}`` of the (first) image of a ``docker save`` archive, from its
    manifest.json (the config's digest is the image ID). Reads the tar's headers and that one member."""
    with tarfile.open(path, 'r:') as archive:
        member = archive.getmember('manifest.json')
        manifest = json.load(archive.extractfile(member))
    if not isinstance(manifest, list) or not manifest or not isinstance(manifest[0], dict):
        raise ValueError('%s: manifest.json is not a docker save manifest' % path)
    config = manifest[0].get('Config') or ''
    digest = config.rsplit('/', 1)[-1].replace('.json', '')
    return {'id': 'sha256:' + digest.split(':')[-1], 'tags': list(manifest[0].get('RepoTags') or [])}
