# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync never puts a credential into its result or messages - synced, in check mode, and refused with
wrong credentials - against a real S3 API (``lab``: conftest.py), with temporary credentials (an assumed
role's key, secret and session token). ``run_module`` hands back what the module passed to exit_json/fail_json,
before Ansible's no_log masking: a secret found there is the module's own leak. The masking itself is checked
on the module run as Ansible runs it (a process reading its arguments file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from s3_lab import model_files, upload_model  # noqa: E402  pylint: disable=wrong-import-position

import ansible  # noqa: E402  pylint: disable=wrong-import-position,wrong-import-order
from ansible.module_utils.ansible_release import __version__ as ansible_core  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.inferops.node.plugins.modules import model_sync  # noqa: E402

SECRETS = ('access_key', 'secret_key', 'session_token')
NO_LOG_MARK = 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


def assert_clean(result, *secrets):
    text = json.dumps(result)
    for secret in secrets:
        assert secret not in text, 'a credential is in the result: %s' % text
    assert '********' not in text  # nothing the module wrote needed Ansible's masking either


def test_argument_spec_marks_every_credential_no_log():
    for name in SECRETS:
        assert model_sync.ARGUMENT_SPEC[name].get('no_log') is True, name
    credentials = [name for name in model_sync.ARGUMENT_SPEC if any(w in name for w in ('key', 'token', 'secret'))]
    assert sorted(credentials) == sorted(SECRETS)
    assert model_sync.ARGUMENT_SPEC['models']['options']['endpoint'].get('no_log') is None


def test_temporary_credentials_are_used_and_never_returned(lab, store):
    server, _proxy = store
    key, secret, token = server.temporary_credentials()
    upload_model(lab['client'], lab['bucket'], 'tc/1', model_files(61, big=2000))
    models = [{'name': 'tc', 'version': '1'}]
    for check in (True, False):
        failed, result = lab['sync'](models, access_key=key, secret_key=secret, session_token=token, check=check,
                                     diff=True)
        assert not failed, result
        assert result['models'][0]['action'] == ('would_sync' if check else 'synced')
        assert_clean(result, key, secret, token)
    marker = (lab['dest'] / 'tc' / '.inferops-model-sync.json').read_text()
    for value in (key, secret, token):
        assert value not in marker
    # Without its token the assumed role's key is refused: the token was sent, and it is what made it valid.
    failed, result = lab['sync'](models, access_key=key, secret_key=secret, session_token=None, verify_existing=True)
    assert failed and 'InvalidAccessKeyId' in result['msg'], result
    assert_clean(result, key, secret, token)


def test_wrong_credentials_are_refused_without_showing_them(lab, store, monkeypatch):
    server, _proxy = store
    key, secret, token = server.temporary_credentials('wrong-creds')
    upload_model(lab['client'], lab['bucket'], 'wc/1', model_files(62, big=2000))
    models = [{'name': 'wc', 'version': '1'}]
    wrong_secret = 'wrong-' + os.urandom(12).hex()
    wrong_token = 'IQoJb3JpZ2luX2VjE' + os.urandom(24).hex()
    unknown_key = 'AKIA' + os.urandom(8).hex().upper()
    cases = [
        (dict(access_key=key, secret_key=wrong_secret, session_token=token), 'SignatureDoesNotMatch'),
        (dict(access_key=key, secret_key=secret, session_token=wrong_token), 'InvalidToken'),
        (dict(access_key=unknown_key, secret_key=secret, session_token=token), 'InvalidAccessKeyId'),
        (dict(access_key=server.access_key, secret_key=wrong_secret), 'SignatureDoesNotMatch'),
    ]
    for options, code in cases:
        for check in (True, False):
            failed, result = lab['sync'](models, check=check, **options)
            assert failed and code in result['msg'], (code, result)
            assert_clean(result, key, secret, token, wrong_secret, wrong_token, unknown_key, server.secret_key)
    # The same from the task's environment (the role's way when its variables are empty).
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', key)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', wrong_secret)
    monkeypatch.setenv('AWS_SESSION_TOKEN', token)
    failed, result = lab['sync'](models, access_key=None, secret_key=None)
    assert failed and 'SignatureDoesNotMatch' in result['msg'], result
    assert_clean(result, key, token, wrong_secret)
    assert os.listdir(str(lab['dest'])) == []


def test_ansible_masks_the_credentials_in_the_module_output(lab, store):
    server, proxy = store
    wrong_secret = 'wrong-' + os.urandom(12).hex()
    token = 'token-' + os.urandom(12).hex()
    args = {'ANSIBLE_MODULE_ARGS': {
        'endpoint': proxy.endpoint, 'bucket': lab['bucket'], 'access_key': server.access_key,
        'secret_key': wrong_secret, 'session_token': token, 'destination': str(lab['dest']), 'require_mount': False,
        'models': [{'name': 'mask', 'version': '1'}]}}
    # ansible-core 2.21 returns the module's arguments only when the controller asks (INJECT_INVOCATION); older
    # releases always, and refuse the key as an unsupported parameter.
    if tuple(int(part) for part in ansible_core.split('.')[:2]) >= (2, 21):
        args['ANSIBLE_MODULE_ARGS']['_ansible_inject_invocation'] = True
    path = lab['tmp'] / 'args.json'
    path.write_text(json.dumps(args))
    collections = os.path.abspath(os.path.join(os.path.dirname(model_sync.__file__), '..', '..', '..', '..', '..'))
    # ansible-test units puts ansible itself on PYTHONPATH (it is not installed in its venv): keep it.
    ansible_lib = os.path.dirname(os.path.dirname(ansible.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [collections, ansible_lib] + ([os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])))
    run = subprocess.run([sys.executable, '-m', 'ansible_collections.inferops.node.plugins.modules.model_sync',
                          str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120, check=False)
    out = run.stdout.decode()
    assert out.strip(), run.stderr.decode()[-2000:]
    result = json.loads(out)
    # moto checks the token first: the IAM user's key with a token it did not issue.
    assert run.returncode == 1 and result['failed'] and 'InvalidToken' in result['msg'], out
    assert 'check the session token' in result['msg']
    for value in (server.access_key, wrong_secret, token):
        assert value not in out + run.stderr.decode()
    module_args = result['invocation']['module_args']
    assert [module_args[name] for name in SECRETS] == [NO_LOG_MARK] * 3
