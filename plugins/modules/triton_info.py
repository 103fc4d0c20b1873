#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: triton_info
short_description: Report whether Triton servers are live and ready, what they serve and which models are ready
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads each Triton (KServe v2) HTTP endpoint once, without waiting - C(GET /v2/health/live) and
    C(/v2/health/ready), the server metadata (C(GET /v2)), the repository index (C(POST /v2/repository/index))
    and, for each model of O(models), its ready endpoint (C(GET /v2/models/<name>[/versions/<version>]/ready)).
  - An endpoint that does not answer is reported (RV(endpoints[].reachable) false, the error in
    RV(endpoints[].errors)), not a failure, unless O(fail_on_unreachable).
  - Changes nothing - the repository index is a read, although the protocol makes it a POST. Uses only the
    Python standard library (C(http.client)) on the target.
  - To wait for readiness, or to warm models up, use M(inferops.node.triton_warmup).
options:
  endpoints:
    description:
      - Base URLs of the Triton HTTP endpoints, for example V(http://127.0.0.1:8000), read one after the other.
    type: list
    elements: str
    required: true
  models:
    description:
      - Models whose readiness to read on every endpoint. Empty - no model is asked (the repository index is
        read all the same).
    type: list
    elements: str
    default: []
  model_version:
    description:
      - The version of O(models) to ask for. Empty - the one the model's version policy serves.
    type: str
    default: ''
  request_timeout:
    description:
      - Seconds to wait for one HTTP answer (the connection included).
    type: float
    default: 5
  fail_on_unreachable:
    description:
      - Fail when an endpoint does not answer HTTP at all (refused, timed out, cut). The result is returned all
        the same. A server that answers but is not ready never fails the module.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Any POSIX target with Python; only the standard library is used.
    support: full
    platforms: posix
notes:
  - Triton answers HTTP 400 C(Model version not ready) for a model that failed to load, one never loaded and
    one it does not know alike; RV(endpoints[].models[].reason) tells them apart from the repository index
    (the load error, V(in the repository, never loaded), V(not in the repository index)).
  - With Triton's default strict readiness, one model that failed to load makes the server not ready
    (RV(endpoints[].ready) false) while the other models serve.
  - The code (C(plugins/module_utils/serving/triton_v2.py), C(endpoint_info)) gives the role
    C(inferops.node.k8s_node_labels) its C(triton_ready) check.
seealso:
  - module: inferops.node.triton_warmup
  - name: KServe v2 inference protocol
    description: The health, metadata and model ready endpoints.
    link: https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/
  - name: Triton model repository extension
    description: The repository index.
    link: https://github.com/triton-inference-server/server/blob/main/docs/protocol/extension_model_repository.md
'''

EXAMPLES = r'''
- name: Read two instances and whether they serve resnet50
  inferops.node.triton_info:
    endpoints:
      - http://127.0.0.1:8000
      - http://127.0.0.1:8100
    models: [resnet50]
  register: triton

- name: Show the models that failed to load, and why
  ansible.builtin.debug:
    msg: "{{ triton.endpoints | map(attribute='index') | select | flatten
             | selectattr('state', 'eq', 'UNAVAILABLE') | items2dict(key_name='name', value_name='reason') }}"

- name: Fail when a server does not answer at all
  inferops.node.triton_info:
    endpoints: [http://127.0.0.1:8000]
    fail_on_unreachable: true
'''

RETURN = r'''
endpoints:
  description: One entry per endpoint, in the order of O(endpoints).
  returned: always
  type: list
  elements: dict
  contains:
    url:
      description: The endpoint as given.
      type: str
      returned: always
      sample: http://127.0.0.1:8000
    reachable:
      description: Whether it answered HTTP at all (to C(GET /v2/health/live)). When not, nothing else was read.
      type: bool
      returned: always
      sample: true
    errors:
      description: Why it could not be reached, or which reads failed after it answered (their parts are null).
      type: list
      elements: str
      returned: always
      sample: ["GET /v2/health/live: ConnectionRefusedError: [Errno 111] Connection refused"]
    live:
      description: C(GET /v2/health/live) answered 200.
      type: bool
      returned: always
      sample: true
    ready:
      description: C(GET /v2/health/ready) answered 200.
      type: bool
      returned: always
      sample: false
    server:
      description: C(name), C(version) and C(extensions) of the server metadata (C(GET /v2)); null when not read.
      type: dict
      returned: always
      sample: {"name": "triton", "version": "2.51.0", "extensions": ["classification", "model_repository"]}
    index:
      description:
        - The repository index - C(name), C(version), C(state) (V(READY), V(UNAVAILABLE), V(LOADING),
          V(UNLOADING)) and C(reason) (why it is not ready) of each model version; null where Triton leaves one
          out (a model never loaded is listed by name only). Null when not read.
      type: list
      elements: dict
      returned: always
      sample: [{"name": "broken", "version": "1", "state": "UNAVAILABLE",
                "reason": "Internal: RuntimeError: weights.bin: no such file"},
               {"name": "identity", "version": "1", "state": "READY", "reason": null}]
    models:
      description: One entry per model of O(models).
      type: list
      elements: dict
      returned: always
      contains:
        name:
          description: The model.
          type: str
        version:
          description: O(model_version).
          type: str
        ready:
          description: Its ready endpoint answered 200.
          type: bool
        in_repository:
          description: Whether the repository index lists it (null when the index was not read).
          type: bool
        state:
          description: Its state in the index (the READY version's, if one is); null when not listed or never loaded.
          type: str
        reason:
          description: Why it is not ready (null when ready) - the index's reason, V(not in the repository index),
            V(in the repository, never loaded), V(the endpoint did not answer), or the server's answer.
          type: str
      sample: [{"name": "identity", "version": "", "ready": true, "in_repository": true, "state": "READY",
                "reason": null}]
not_answering:
  description:
    - The endpoints that did not answer HTTP at all.
    - Not named C(unreachable) - Ansible takes a result with a true C(unreachable) for an unreachable host.
  returned: always
  type: list
  elements: str
  sample: ["http://127.0.0.1:8100"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import TritonHTTP, endpoint_info, url_errors


def run(params):
    """Read every endpoint: ``{endpoints, not_answering}``."""
    endpoints = []
    for url in params['endpoints']:
        client = TritonHTTP(url, timeout=params['request_timeout'])
        try:
            endpoints.append(endpoint_info(client, params['models'], params['model_version']))
        finally:
            client.close()
    return {'endpoints': endpoints, 'not_answering': [e['url'] for e in endpoints if not e['reachable']]}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            endpoints=dict(type='list', elements='str', required=True),
            models=dict(type='list', elements='str', default=[]),
            model_version=dict(type='str', default=''),
            request_timeout=dict(type='float', default=5),
            fail_on_unreachable=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    problems = ['endpoints: %s' % p for url in params['endpoints'] for p in url_errors(url)]
    if not params['endpoints']:
        problems.append('endpoints must not be empty')
    if params['request_timeout'] <= 0:
        problems.append('request_timeout must be greater than 0 (got %s)' % params['request_timeout'])
    if problems:
        module.fail_json(msg='; '.join(problems))
    result = run(params)
    if params['fail_on_unreachable'] and result['not_answering']:
        module.fail_json(msg='not answering: %s' % '; '.join(
            '%s (%s)' % (e['url'], '; '.join(e['errors'])) for e in result['endpoints'] if not e['reachable']),
            changed=False, **result)
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
