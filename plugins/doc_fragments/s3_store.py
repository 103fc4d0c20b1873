# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The S3 connection options that model_sync and model_manifest share (each module documents its
own O(endpoint) and O(bucket): one requires them, the other only when it uploads). Their argument
spec is ``CONNECTION_ARGUMENT_SPEC`` of module_utils ``model_sync/s3.py``."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  region:
    description:
      - Region used in the request signature. Falls back to C(AWS_REGION), then C(AWS_DEFAULT_REGION).
    type: str
    default: us-east-1
  access_key:
    description:
      - Access key id. Falls back to C(AWS_ACCESS_KEY_ID). Never logged.
    type: str
  secret_key:
    description:
      - Secret access key. Falls back to C(AWS_SECRET_ACCESS_KEY). Never logged.
    type: str
  session_token:
    description:
      - Session token of temporary credentials. Falls back to C(AWS_SESSION_TOKEN). Never logged.
    type: str
  addressing_style:
    description:
      - V(path) sends C(<endpoint>/<bucket>/<key>) (MinIO, Ceph RGW, most gateways); V(virtual) sends
        C(<bucket>.<endpoint host>/<key>).
    type: str
    choices: [path, virtual]
    default: path
  validate_certs:
    description:
      - Verify the endpoint's TLS certificate.
    type: bool
    default: true
'''
