# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small S3 client for model_sync: AWS Signature Version 4 over http.client, standard library only.

Why not botocore: the managed nodes then need no extra package (python3-boto3 pulls ~80 MB of
botocore data onto every serving node), and the few calls model_sync makes (GET with a byte range,
HEAD, PUT, multipart upload for the manifest helper) are plain REST requests whose signing is short
and fully specified (docs.aws.amazon.com, "Signature Version 4 signing process"). Tests run every
call against a real S3 API (a moto server), so the signer is checked end to end, not against itself.

* ``endpoint_problem(endpoint)`` - None, or why a value is not an endpoint URL (the module's O(endpoint) and
  every O(models[].endpoint), the role's preflight and the client itself apply it).
* ``sign(...)`` - the SigV4 Authorization header for one request (any service: tests also sign IAM).
* ``S3Client`` - path-style (default) or virtual-host-style requests, one keep-alive connection per
  thread, S3 error documents turned into ``S3Error`` with a message an operator can act on.

No Ansible imports: tools/model_manifest.py loads this file directly.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import re
import socket
import ssl
import threading
import xml.etree.ElementTree as ET
from urllib.parse import quote, urlsplit

__all__ = ['EMPTY_SHA256', 'UNSIGNED', 'S3Client', 'S3Error', 'endpoint_problem', 'sign']

EMPTY_SHA256 = hashlib.sha256(b'').hexdigest()
UNSIGNED = 'UNSIGNED-PAYLOAD'
ALGORITHM = 'AWS4-HMAC-SHA256'

# What to tell the operator for the S3 error codes a sync meets in practice.
HINTS = {
    'InvalidAccessKeyId': 'the access key is not known to the endpoint: check the access key (module option '
                          'access_key or AWS_ACCESS_KEY_ID)',
    'SignatureDoesNotMatch': 'the endpoint refused the request signature: check the secret key (secret_key or '
                             'AWS_SECRET_ACCESS_KEY) and the region',
    'AccessDenied': 'the credentials are valid but not allowed to read this bucket or object',
    'NoSuchBucket': 'the bucket does not exist at this endpoint: check bucket and endpoint',
    'NoSuchKey': 'no such object',
    'InvalidRange': 'the object is shorter than the manifest says',
    'ExpiredToken': 'the session token has expired',
    'InvalidToken': 'the endpoint refused the session token: check the session token (session_token or '
                    'AWS_SESSION_TOKEN) - it must be the one issued with the access key, or none for a long-term key',
    'AuthorizationHeaderMalformed': 'the region does not match the bucket\'s region: check region',
    'PermanentRedirect': 'the bucket is in another region or needs another endpoint',
}


class S3Error(Exception):
    """An S3 request that failed: HTTP status, S3 error code, and a message naming bucket/key and the fix."""

    def __init__(self, msg, status=None, code=None, retryable=False):
        super().__init__(msg)
        self.msg = msg
        self.status = status
        self.code = code
        self.retryable = retryable


def endpoint_problem(endpoint):
    """None when ``endpoint`` is an http:// or https:// URL with a host, else what is wrong and the fix."""
    if not isinstance(endpoint, str):
        return 'must be an http:// or https:// URL (http://minio.lan:9000), not %s' % type(endpoint).__name__
    try:
        parts = urlsplit(endpoint)
        port = parts.port  # ValueError for a port that is not a number 0-65535
    except ValueError as exc:
        return 'must be an http:// or https:// URL (http://minio.lan:9000): %s' % exc
    if parts.scheme not in ('http', 'https') or not parts.hostname or port == 0:
        return 'must be an http:// or https:// URL with a host (http://minio.lan:9000)'
    return None


def _hmac(key, text):
    return hmac.new(key, text.encode('utf-8'), hashlib.sha256).digest()


def _uri_encode(text, keep_slash):
    # RFC 3986 unreserved characters stay; S3 encodes a key once (no double encoding).
    return quote(text, safe='/~' if keep_slash else '~')


def sign(method, host, path, query, headers, payload_hash, access_key, secret_key, region, service,
         now=None, session_token=None):
    """Return ``headers`` plus x-amz-date, x-amz-content-sha256 (s3), the token and Authorization.

    ``path`` is the unencoded path, ``query`` a dict of unencoded names and values. Every header
    given is signed (lower-cased names), with host.
    """
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime('%Y%m%dT%H%M%SZ')
    day = amz_date[:8]
    out = dict(headers)
    out['host'] = host
    out['x-amz-date'] = amz_date
    if service == 's3':
        out['x-amz-content-sha256'] = payload_hash
    if session_token:
        out['x-amz-security-token'] = session_token
    canonical_headers = {k.lower(): re.sub(r'\s+', ' ', str(v).strip()) for k, v in out.items()}
    signed = ';'.join(sorted(canonical_headers))
    canonical_query = '&'.join('%s=%s' % (_uri_encode(k, False), _uri_encode(str(v), False))
                               for k, v in sorted((query or {}).items()))
    canonical = '\n'.join([
        method,
        _uri_encode(path, True) or '/',
        canonical_query,
        ''.join('%s:%s\n' % (k, canonical_headers[k]) for k in sorted(canonical_headers)),
        signed,
        payload_hash,
    ])
    scope = '%s/%s/%s/aws4_request' % (day, region, service)
    to_sign = '\n'.join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode('utf-8')).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(('AWS4' + secret_key).encode('utf-8'), day), region), service), 'aws4_request')
    signature = hmac.new(key, to_sign.encode('utf-8'), hashlib.sha256).hexdigest()
    out['Authorization'] = '%s Credential=%s/%s, SignedHeaders=%s, Signature=%s' % (
        ALGORITHM, access_key, scope, signed, signature)
    del out['host']  # http.client sends Host itself
    return out


def _error_fields(body):
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None, None
    return root.findtext('Code'), root.findtext('Message')


class S3Client(object):
    """Requests to one S3-compatible endpoint; thread-safe (one connection per thread)."""

    def __init__(self, endpoint, region, access_key, secret_key, session_token=None, addressing_style='path',
                 timeout=60.0, validate_certs=True, ca_path=None):
        problem = endpoint_problem(endpoint)
        if problem:
            raise S3Error('endpoint %r: %s' % (endpoint, problem))
        parts = urlsplit(endpoint)
        self.endpoint = endpoint
        self.scheme = parts.scheme
        self.hostname = parts.hostname
        self.port = parts.port
        self.base_path = parts.path.rstrip('/')
        self.region = region
        self.access_key = access_key
        self.secret_key = secret_key
        self.session_token = session_token
        self.addressing_style = addressing_style
        self.timeout = timeout
        self._local = threading.local()
        self._ssl = None
        if self.scheme == 'https':
            self._ssl = ssl.create_default_context(cafile=ca_path)
            if not validate_certs:
                self._ssl.check_hostname = False
                self._ssl.verify_mode = ssl.CERT_NONE

    # -- connection handling -------------------------------------------------------------------
    def _host(self, bucket):
        host = self.hostname if ':' not in self.hostname else '[%s]' % self.hostname
        if self.addressing_style == 'virtual' and bucket:
            host = '%s.%s' % (bucket, host)
        default = 443 if self.scheme == 'https' else 80
        return host if self.port in (None, default) else '%s:%d' % (host, self.port)

    def _connection(self, host):
        conns = getattr(self._local, 'conns', None)
        if conns is None:
            conns = self._local.conns = {}
        conn = conns.get(host)
        if conn is None:
            # host is the Host header: [bucket.]hostname[:port]; connect to the same name.
            name = host[:-len(':%s' % self.port)] if self.port and host.endswith(':%s' % self.port) else host
            name = name.strip('[]')
            if self.scheme == 'https':
                conn = http.client.HTTPSConnection(name, self.port, timeout=self.timeout, context=self._ssl)
            else:
                conn = http.client.HTTPConnection(name, self.port, timeout=self.timeout)
            conns[host] = conn
        return conn

    def close(self):
        for conn in (getattr(self._local, 'conns', None) or {}).values():
            conn.close()
        self._local.conns = {}

    def _drop(self, host):
        conns = getattr(self._local, 'conns', None) or {}
        conn = conns.pop(host, None)
        if conn is not None:
            conn.close()

    def _path(self, bucket, key):
        if self.addressing_style == 'virtual':
            path = '/' + (key or '')
        else:
            path = '/' + bucket + ('/' + key if key is not None else '')
        return self.base_path + path

    # -- requests ------------------------------------------------------------------------------
    def request(self, method, bucket, key=None, query=None, headers=None, body=b'', payload_hash=None,
                stream=False, service='s3'):
        """Send one signed request; returns the response (open when ``stream``) or (status, headers, body).

        Raises S3Error for an error status (with the S3 code), and with retryable=True for connection
        errors, 5xx and throttling.
        """
        host = self._host(bucket)
        path = self._path(bucket, key)
        if payload_hash is None:
            payload_hash = hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256
        signed = sign(method, host, path, query, headers or {}, payload_hash, self.access_key, self.secret_key,
                      self.region, service, session_token=self.session_token)
        url = _uri_encode(path, True)
        if query:
            url += '?' + '&'.join('%s=%s' % (_uri_encode(k, False), _uri_encode(str(v), False)) if v != '' else
                                  _uri_encode(k, False) for k, v in sorted(query.items()))
        what = 's3://%s/%s' % (bucket, key) if key is not None else 's3://%s' % bucket
        conn = self._connection(host)
        try:
            conn.request(method, url, body=body or None, headers=signed)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            self._drop(host)
            raise S3Error('%s %s at %s: %s' % (method, what, self.endpoint, _describe(exc)), retryable=True)
        if response.status >= 300:
            try:
                data = response.read()
            except (OSError, http.client.HTTPException):
                data = b''
                self._drop(host)
            code, message = _error_fields(data) if data else (None, None)
            if code is None and response.status == 404:
                code = 'NoSuchKey' if key is not None else 'NoSuchBucket'
            if code is None and response.status == 403:
                code = 'AccessDenied'
            hint = HINTS.get(code, '')
            retry = response.status >= 500 or code in ('SlowDown', 'RequestTimeout', 'InternalError')
            raise S3Error('%s %s at %s: HTTP %d %s%s%s' % (
                method, what, self.endpoint, response.status, code or response.reason,
                ' (%s)' % message if message and message != code else '', ' - ' + hint if hint else ''),
                status=response.status, code=code, retryable=retry)
        if stream:
            return response
        try:
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop(host)
            raise S3Error('%s %s at %s: %s' % (method, what, self.endpoint, _describe(exc)), retryable=True)
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), data

    def get_object(self, bucket, key):
        """(body, headers) of a small object (the manifest)."""
        _status, headers, body = self.request('GET', bucket, key, payload_hash=UNSIGNED)
        return body, headers

    def head_object(self, bucket, key):
        _status, headers, _body = self.request('HEAD', bucket, key, payload_hash=UNSIGNED)
        return headers

    def get_range(self, bucket, key, start, end, sink, if_match=None):
        """Stream bytes start..end (inclusive) into ``sink(offset, data)``; returns the object's ETag.

        ``if_match`` (an ETag) makes the store refuse the read when the object changed since
        the parts already downloaded were fetched (HTTP 412).
        """
        headers = {'range': 'bytes=%d-%d' % (start, end)}
        if if_match:
            headers['if-match'] = if_match
        response = self.request('GET', bucket, key, headers=headers, payload_hash=UNSIGNED, stream=True)
        host = self._host(bucket)
        offset = start
        try:
            while True:
                data = response.read(1024 * 1024)
                if not data:
                    break
                sink(offset, data)
                offset += len(data)
        except (OSError, http.client.HTTPException) as exc:
            self._drop(host)
            raise S3Error('GET s3://%s/%s bytes %d-%d at %s: %s after %d bytes' % (
                bucket, key, start, end, self.endpoint, _describe(exc), offset - start), retryable=True)
        if offset != end + 1:
            self._drop(host)
            raise S3Error('GET s3://%s/%s bytes %d-%d at %s: got %d bytes, expected %d' % (
                bucket, key, start, end, self.endpoint, offset - start, end + 1 - start), retryable=True)
        return response.getheader('ETag')

    def put_object(self, bucket, key, body):
        _status, headers, _body = self.request('PUT', bucket, key, body=body)
        return headers.get('etag')

    def create_bucket(self, bucket):
        body = b''
        if self.region and self.region != 'us-east-1':
            body = ('<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                    '<LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>' % self.region).encode()
        self.request('PUT', bucket, body=body)

    def upload_file(self, bucket, key, path, part_size=64 * 1024 * 1024):
        """PUT a file, as a multipart upload when it is larger than ``part_size``; returns the ETag."""
        import os
        size = os.path.getsize(path)
        with open(path, 'rb') as handle:
            if size <= part_size:
                return self.put_object(bucket, key, handle.read())
            _s, _h, data = self.request('POST', bucket, key, query={'uploads': ''})
            upload_id = _xml_text(data, 'UploadId')
            etags = []
            number = 0
            try:
                while True:
                    chunk = handle.read(part_size)
                    if not chunk:
                        break
                    number += 1
                    _s, headers, _b = self.request('PUT', bucket, key, query={'partNumber': number,
                                                                              'uploadId': upload_id}, body=chunk)
                    etags.append(headers.get('etag'))
                parts = ''.join('<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>' % (i + 1, etag)
                                for i, etag in enumerate(etags))
                body = ('<CompleteMultipartUpload>%s</CompleteMultipartUpload>' % parts).encode()
                _s, _h, data = self.request('POST', bucket, key, query={'uploadId': upload_id}, body=body)
            except S3Error:
                try:
                    self.request('DELETE', bucket, key, query={'uploadId': upload_id})
                except S3Error:
                    pass
                raise
            return _xml_text(data, 'ETag')


def _xml_text(data, tag):
    root = ET.fromstring(data)
    for element in root.iter():
        if element.tag == tag or element.tag.endswith('}' + tag):
            return element.text
    raise S3Error('response has no %s: %r' % (tag, data[:200]))


def _describe(exc):
    if isinstance(exc, socket.timeout):
        return 'timed out'
    if isinstance(exc, ConnectionRefusedError):
        return 'connection refused (is the endpoint right and the store up?)'
    return '%s: %s' % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
