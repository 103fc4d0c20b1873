#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: docker_engine_info
short_description: Read a host's container engine - packages, the docker CLI, the daemon and its Compose v2 plugin
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads, in one call, what a serving node's container engine is made of - what apt has of the named
    packages (installed and candidate versions), the C(docker) client, whether the daemon answers and with
    which version, the Compose v2 plugin, and the daemon's settings as C(docker info) reports them
    (log driver, live-restore, cgroup driver, data root, runtimes).
  - Runs C(apt-cache policy) (only for O(packages)), C(docker version), C(docker compose version) and
    C(docker info), each in the C locale and with JSON output where the tool has it; never changes anything.
  - A host without the C(docker) CLI, a daemon that does not answer or a missing Compose plugin are
    reported (RV(cli), RV(server), RV(compose)), not failed; the roles decide what they need.
options:
  packages:
    description:
      - Packages to ask apt about (C(apt-cache policy)); empty - apt is not asked.
    type: list
    elements: str
    default: []
  engine:
    description:
      - Read the docker CLI, the daemon and the Compose plugin. V(false) reads only O(packages), before the
        engine is installed.
    type: bool
    default: true
  service:
    description:
      - A systemd unit whose state to read as well (C(systemctl show)), the engine's service -
        RV(service) says whether it is enabled and running. Empty - not read.
    type: str
    default: ''
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux hosts; Debian-family for O(packages).
    support: full
    platforms: posix
notes:
  - The parsers are C(plugins/module_utils/serving/docker_cli.py) (the docker CLI) and C(parse_apt_policy) in
    C(plugins/module_utils/common/apt_policy.py); the rules that judge what is read are the role
    C(inferops.node.docker_engine)'s (P(inferops.node.docker_engine_package_errors#filter),
    P(inferops.node.docker_engine_verify_errors#filter)).
seealso:
  - module: inferops.node.compose_project_info
  - module: community.docker.docker_host_info
'''

EXAMPLES = r'''
- name: Can apt install the engine and Compose v2 here?
  inferops.node.docker_engine_info:
    packages: [docker.io, docker-cli, docker-compose]
    engine: false
  register: engine_packages

- name: Read the engine before deploying
  inferops.node.docker_engine_info:
  register: engine

- name: Refuse a host without a running engine and Compose v2
  ansible.builtin.assert:
    that:
      - engine.server.running
      - engine.compose.v2
    fail_msg: "docker: {{ engine.server.error }}; compose: {{ engine.compose.error }}"
'''

RETURN = r'''
packages:
  description: Per package of O(packages), its versions (C(installed) and C(candidate), null for none); null
    for a package apt does not know.
  returned: always
  type: dict
  sample: {docker.io: {installed: null, candidate: 26.1.5+dfsg1-9+deb13u1+b1}, docker-cli: null}
missing:
  description: The packages of O(packages) not installed, in the order given (what C(apt) would install).
  returned: always
  type: list
  elements: str
  sample: [docker.io]
cli:
  description: The C(docker) client.
  returned: when O(engine=true)
  type: dict
  contains:
    installed:
      description: Whether the host has the C(docker) CLI in its PATH.
      type: bool
    version:
      description: The client's version (null without the CLI).
      type: str
    api_version:
      description: The API version the client speaks.
      type: str
  sample: {installed: true, version: 26.1.5+dfsg1, api_version: '1.45'}
server:
  description: The daemon, as C(docker version) finds it.
  returned: when O(engine=true)
  type: dict
  contains:
    running:
      description: Whether the daemon answered.
      type: bool
    version:
      description: The engine's version.
      type: str
    api_version:
      description: The engine's API version.
      type: str
    error:
      description: Why the daemon did not answer (the CLI's own words), null when it did.
      type: str
  sample:
    running: false
    version: null
    api_version: null
    error: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
compose:
  description: The Compose plugin (C(docker compose version)).
  returned: when O(engine=true)
  type: dict
  contains:
    installed:
      description: Whether C(docker compose) answers.
      type: bool
    version:
      description: Its version as it prints it.
      type: str
    v2:
      description: Whether it is Compose v2 (what C(community.docker.docker_compose_v2) needs).
      type: bool
    error:
      description: Why there is none (the CLI's words), null when there is.
      type: str
  sample: {installed: true, version: 2.26.1-4, v2: true, error: null}
info:
  description:
    - C(docker info) as the CLI prints it as JSON (C(LoggingDriver), C(LiveRestoreEnabled), C(CgroupDriver),
      C(DockerRootDir), C(Driver), C(Runtimes), C(Warnings), ...); with only C(ServerErrors) filled when the
      daemon does not answer; empty when nothing was read.
  returned: when O(engine=true)
  type: dict
info_error:
  description: Why RV(info) holds no daemon's settings, null when it does.
  returned: when O(engine=true)
  type: str
service:
  description: What systemd says of O(service) - C(enabled) (its UnitFileState, V(not-found) for a unit it
    does not know), C(active) (ActiveState) and C(load) (LoadState).
  returned: when O(service) is set
  type: dict
  sample: {enabled: enabled, active: active, load: loaded}
command_log:
  description: Every command run, C({argv, rc, ran}).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.serving import docker_cli
from ansible_collections.inferops.node.plugins.module_utils.common.apt_policy import read_packages
from ansible_collections.inferops.node.plugins.module_utils.common.systemd_units import read_units


def read_engine(runner):
    """cli, server, compose, info and info_error; nothing runs on a host without the docker CLI."""
    no_cli = 'no docker CLI on the host'
    result = {'cli': {'installed': False, 'version': None, 'api_version': None},
              'server': {'running': False, 'version': None, 'api_version': None, 'error': no_cli},
              'compose': {'installed': False, 'version': None, 'v2': False, 'error': no_cli},
              'info': {}, 'info_error': no_cli}
    if runner.find('docker') is None:
        return result
    client, result['server'] = docker_cli.parse_version(*runner.run(docker_cli.VERSION_ARGS))
    result['cli'] = dict(client, installed=True)
    result['compose'] = docker_cli.parse_compose_version(*runner.run(docker_cli.COMPOSE_VERSION_ARGS))
    result['info'], result['info_error'] = docker_cli.parse_info(*runner.run(docker_cli.INFO_ARGS))
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            packages=dict(type='list', elements='str', default=[]),
            engine=dict(type='bool', default=True),
            service=dict(type='str', default=''),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    result = {'packages': read_packages(runner, module.params['packages'], 'docker_engine_info')}
    result['missing'] = [name for name in module.params['packages'] if not (result['packages'].get(name) or {}).get('installed')]
    if module.params['engine']:
        result.update(read_engine(runner))
    if module.params['service']:
        result['service'] = read_units(runner, [module.params['service']], 'docker_engine_info')[module.params['service']]
    module.exit_json(changed=False, command_log=runner.log, **result)


if __name__ == '__main__':
    main()
