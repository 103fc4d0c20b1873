# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The S3 connection arguments that model_sync and model_manifest share, with the AWS environment
variables as fallbacks (documented once in the doc fragment ``inferops.node.s3_store``). Kept apart
from model_sync/s3.py, which must import nothing from Ansible (tools/model_manifest.py loads it)."""

from __future__ import annotations

from ansible.module_utils.basic import env_fallback

CONNECTION_ARGUMENT_SPEC = dict(
    region=dict(type='str', default='us-east-1', fallback=(env_fallback, ['AWS_REGION', 'AWS_DEFAULT_REGION'])),
    access_key=dict(type='str', no_log=True, fallback=(env_fallback, ['AWS_ACCESS_KEY_ID'])),
    secret_key=dict(type='str', no_log=True, fallback=(env_fallback, ['AWS_SECRET_ACCESS_KEY'])),
    session_token=dict(type='str', no_log=True, fallback=(env_fallback, ['AWS_SESSION_TOKEN'])),
    addressing_style=dict(type='str', choices=['path', 'virtual'], default='path'),
    validate_certs=dict(type='bool', default=True),
)
