#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: triton_command_check
short_description: Try Triton server command lines in throwaway containers before they replace running servers
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - C(docker compose up) stops a service's running container before it starts the new one, so a wrong
    server flag would leave the node without a server. This module starts each command of O(commands) first,
    from O(image), in a container of its own - no network (C(--network none)), the O(volumes) (the model
    repository, read-only), the O(environment), runtime and GPUs of the service - with
    C(--model-control-mode=explicit) appended, so that no model is loaded and the server is up in seconds.
  - A command passes when tritonserver says it started one of its services (gRPC, HTTP or metrics) - its
    options, repository path and caches were taken; it fails when the server exits first or starts nothing
    within O(timeout). The container is removed either way (C(docker rm --force)); it carries the label
    C(org.inferops.probe=triton_compose).
  - Models are not loaded; a model that fails to load is found by the readiness wait after the deploy.
  - Runs the C(docker) CLI in the C locale.
options:
  image:
    description: The image the services run.
    type: str
    required: true
  commands:
    description: The commands to try, all in one call.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The service's name, for the results and the messages.
        type: str
        required: true
      command:
        description: The service's command (C(tritonserver) and its arguments), as in the compose file.
        type: list
        elements: str
        required: true
  volumes:
    description: C(docker run --volume) values, for example V(/data/models:/models:ro).
    type: list
    elements: str
    default: []
  environment:
    description: Environment of the containers.
    type: dict
    default: {}
  runtime:
    description: C(docker run --runtime), for example V(nvidia). Omitted - the engine's default.
    type: str
  gpus:
    description: C(docker run --gpus), for example V(all). Omitted - none.
    type: str
  timeout:
    description: Seconds to wait for one server to start a service.
    type: int
    default: 120
attributes:
  check_mode:
    description: Runs in check mode too - it starts and removes throwaway containers, changing no configuration -
      so that C(--check) finds a wrong flag as the real run would.
    support: full
  diff_mode:
    description: Returns no diff.
    support: none
  platform:
    description: Hosts with the C(docker) CLI and a running engine.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.triton_warmup
    description: The readiness wait after the deploy, which finds a model that fails to load.
'''

EXAMPLES = r'''
- name: Try the new command lines before compose up replaces the servers
  inferops.node.triton_command_check:
    image: nvcr.io/nvidia/tritonserver:24.05-py3
    commands:
      - name: triton-a
        command: [tritonserver, --model-repository=/models, --http-port=8000, --grpc-port=8001, --metrics-port=8002]
    volumes: [/data/models:/models:ro]
    runtime: nvidia
    environment: {NVIDIA_VISIBLE_DEVICES: all}
'''

RETURN = r'''
results:
  description: One entry per command, in the order of O(commands).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The service's name.
      type: str
    ok:
      description: Whether the server started a service.
      type: bool
    seconds:
      description: From C(docker run) to the verdict.
      type: float
    exit_code:
      description: The server's exit code when it exited first, else null.
      type: int
    server_errors:
      description: The error lines of the server's output (at most 20).
      type: list
      elements: str
    log_tail:
      description: The last 40 lines of the server's output.
      type: list
      elements: str
    error:
      description: Why the command failed, null when it passed.
      type: str
  sample:
    - name: triton-a
      ok: false
      seconds: 1.9
      exit_code: 1
      server_errors: ["/opt/tritonserver/bin/tritonserver: unrecognized option '--bogus-flag=1'"]
      log_tail: ["..."]
      error: the server exited (code 1) before it started a service
command_log:
  description: Every command run, C({argv, rc, ran}).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.serving import triton_probe


def main():
    module = AnsibleModule(
        argument_spec=dict(
            image=dict(type='str', required=True),
            commands=dict(type='list', elements='dict', required=True, options=dict(
                name=dict(type='str', required=True),
                command=dict(type='list', elements='str', required=True),
            )),
            volumes=dict(type='list', elements='str', default=[]),
            environment=dict(type='dict', default={}),
            runtime=dict(type='str'),
            gpus=dict(type='str'),
            timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p['timeout'] < 1:
        module.fail_json(msg='timeout must be at least 1 second, got %d' % p['timeout'])
    runner = CommandRunner(module)
    results = []
    for entry in p['commands']:
        args = triton_probe.probe_args(p['image'], entry['command'], p['volumes'], p['environment'],
                                       p['runtime'], p['gpus'])
        results.append(triton_probe.probe(runner, entry['name'], args, p['timeout']))
    failed = [r for r in results if not r['ok']]
    if failed:
        reasons = ['%s: %s%s' % (r['name'], r['error'], ': ' + r['server_errors'][-1] if r['server_errors'] else '')
                   for r in failed]
        module.fail_json(msg='; '.join(reasons) + ' - the running servers were left as they were',
                         results=results, command_log=runner.log)
    module.exit_json(changed=False, results=results, command_log=runner.log)


if __name__ == '__main__':
    main()
