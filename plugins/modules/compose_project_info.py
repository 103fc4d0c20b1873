#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: compose_project_info
short_description: Tell what docker compose up would do to a project's containers, without doing it
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Compares a wanted compose project (O(definition)) with the containers of project O(project_name) on the
    host, the way C(docker compose up) decides, and reports per service whether it would create, recreate,
    start or scale its containers, or leave them - and which containers of the project are orphans.
  - The wanted configuration is the hash that C(docker compose config --hash) prints for each service
    (the definition goes to compose on standard input, as JSON); the running one is the
    C(com.docker.compose.config-hash) label compose put on each container. A container created from
    another image than the one the service's tag names now (C(com.docker.compose.image)) is recreated too.
  - Used instead of C(docker compose up --dry-run), which Compose 2.26.1 (Debian 13) aborts with a panic on
    a project that has no container yet.
  - Runs the C(docker) CLI (C(compose config), C(ps), C(inspect), C(image inspect)) in the C locale; never
    changes anything.
options:
  project_name:
    description: The compose project's name (C(docker compose --project-name)).
    type: str
    required: true
  definition:
    description:
      - The wanted project, as C(compose.yaml) would hold it (a mapping with C(services)).
      - Paths in it are taken as they are; relative paths would be resolved against the module's working
        directory, not the project's, so give absolute ones.
    type: dict
    required: true
  model_repository:
    description:
      - The servers' model repository on the host. A running server that started before model_sync last put a model
        there (the mtime of the model's sync marker, C(.inferops-model-sync.json)) still serves the version it
        loaded - Triton loads the repository at start - and is reported as V(recreate), which compose up itself
        would not do (RV(recreate_always)).
      - Unset, models are not looked at.
    type: path
    version_added: 0.3.0
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Hosts with the C(docker) CLI, its Compose v2 plugin and a running engine.
    support: full
    platforms: posix
notes:
  - The decision is made in C(plugins/module_utils/serving/compose_state.py); the role C(inferops.node.triton_compose)
    uses it to know, before anything changes, whether its servers would be stopped and started.
seealso:
  - module: community.docker.docker_compose_v2
'''

EXAMPLES = r'''
- name: Would compose up stop and start the servers?
  inferops.node.compose_project_info:
    project_name: triton
    definition: "{{ lookup('ansible.builtin.file', 'compose.yaml') | from_yaml }}"
  register: compose

- name: Say which services would be (re)started and why
  ansible.builtin.debug:
    msg: "{{ compose.summary }}"
  when: compose.would_change
'''

RETURN = r'''
services:
  description: One entry per service of O(definition), sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The service.
      type: str
    action:
      description: What compose up would do - V(create), V(recreate), V(start), V(scale) or V(none).
      type: str
    reason:
      description: Why, in words.
      type: str
    containers:
      description: The service's containers now.
      type: list
      elements: str
    stale_models:
      description: The models synced after the service's running server started (with O(model_repository)).
      type: list
      elements: str
  sample:
    - {name: triton-a, action: recreate, containers: [triton-triton-a-1],
       reason: "its configuration changed (config hash 5c0e..., wanted 9a41...)"}
    - {name: triton-b, action: none, containers: [triton-triton-b-1],
       reason: running, created from this configuration and image}
orphans:
  description: Containers of the project whose service O(definition) no longer has (C(--remove-orphans) removes them).
  returned: always
  type: list
  elements: str
restart:
  description: The services whose server compose up would stop or start (actions V(create), V(recreate), V(start)).
  returned: always
  type: list
  elements: str
  sample: [triton-a]
one_at_a_time:
  description:
    - The services compose up would recreate while their server runs, when the project has more than one
      service; the role C(inferops.node.triton_compose) replaces them one at a time, each ready before the next.
  returned: always
  type: list
  elements: str
  sample: [triton-a, triton-b]
recreate_always:
  description:
    - The services to recreate for their models only and not in RV(one_at_a_time) - compose up sees no change in
      them, so it must be told (C(--force-recreate); the role passes C(recreate=always)).
  returned: always
  type: list
  elements: str
would_change:
  description: Whether compose up would change anything (a service not V(none), or an orphan).
  returned: always
  type: bool
summary:
  description: "One line per service compose up would change and per orphan: C(<name>: <action> (<reason>))."
  returned: always
  type: list
  elements: str
  sample: ["triton-a: recreate (its configuration changed (config hash 5c0e..., wanted 9a41...))"]
containers:
  description:
    - The project's containers (one-off ones left out) - name, id, service, config_hash, image_id, state, running,
      started (seconds since the epoch, null if it never started).
    - C(mounts), each C({type, source, destination, rw}) as C(docker inspect) reports it (C(rw) false
      for a read-only bind mount).
  returned: always
  type: list
  elements: dict
command_log:
  description: Every command run, C({argv, rc, ran}).
  returned: always
  type: list
  elements: dict
'''

import json

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.serving import compose_state
from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import MARKER_NAME


def _inspect(runner, args, parse, what):
    """``parse`` of a docker inspect's JSON. It prints what it found and exits 1 for a name it did not find (an
    image not built yet, a container removed meanwhile): that output is still read; only unreadable JSON fails."""
    rc, out, err = runner.run(args)
    try:
        return parse(out)
    except ValueError:
        runner.module.fail_json(msg='%s: %s' % (what, (err or out).strip() or 'rc %d' % rc), command_log=runner.log)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            project_name=dict(type='str', required=True),
            definition=dict(type='dict', required=True),
            model_repository=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    name = module.params['project_name']
    definition = module.params['definition']
    if not isinstance(definition.get('services'), dict) or not definition['services']:
        module.fail_json(msg='definition must be a compose project with a services mapping, got keys %s'
                         % sorted(definition))
    runner = CommandRunner(module)
    rc, out, err = runner.run(compose_state.hash_args(name), data=json.dumps(definition))
    if rc != 0:
        error = (err or out).strip()
        # Without the Compose v2 plugin the docker CLI reads "compose" as a command it lacks.
        if 'unknown flag: --project-name' in error or "'compose' is not a docker command" in error:
            module.fail_json(msg='the docker CLI has no Compose v2 plugin (docker compose): %s' % error,
                             command_log=runner.log)
        module.fail_json(msg='docker compose config refused the definition: %s' % error, command_log=runner.log)
    try:
        hashes = compose_state.parse_hashes(out)
    except ValueError as exc:
        module.fail_json(msg=str(exc), command_log=runner.log)
    rc, out, err = runner.run(compose_state.ps_args(name))
    if rc != 0:
        module.fail_json(msg='docker ps failed: %s' % (err or out).strip(), command_log=runner.log)
    ids = out.split()
    current = _inspect(runner, ['docker', 'inspect', '--type', 'container'] + ids, compose_state.containers,
                       'docker inspect') if ids else []
    wanted_images = sorted(set(s.get('image') for s in definition['services'].values() if s and s.get('image')))
    images = _inspect(runner, ['docker', 'image', 'inspect'] + wanted_images, compose_state.image_ids,
                      'docker image inspect') if wanted_images else {}
    repository = module.params['model_repository']
    synced = compose_state.models_synced(repository, MARKER_NAME) if repository else {}
    result = compose_state.pending(definition, hashes, current, images, synced)
    module.exit_json(changed=False, containers=current, command_log=runner.log, **result)


if __name__ == '__main__':
    main()
