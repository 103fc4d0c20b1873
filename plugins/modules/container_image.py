#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: container_image
short_description: Put an image on the docker engine - from a docker save archive or a registry - with progress
version_added: 0.3.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Makes the engine hold O(name). With O(archive) (a C(docker save) tar on the host - an air-gapped site's way),
    the archive is loaded unless the engine has the archive's image ID under O(name) already; a different image
    under that tag is replaced by the archive's. Without it, a missing image is pulled when O(pull=missing).
  - Talks to the Docker Engine API on its unix socket (O(socket)), because the CLI is silent - C(docker load)
    prints nothing until it ends, and C(docker pull) prints no byte counts without a terminal. A load's progress
    is the bytes of the archive sent to the engine (state C(loading)), then the bytes of its layers the engine has
    unpacked (C(unpacking)); a pull's, the bytes of the layers the engine reports (C(pulling)).
    Both go to O(status_file) for M(inferops.node.job_progress) when the module runs as an C(async) job.
extends_documentation_fragment:
  - inferops.node.status_file
options:
  name:
    description: The image, C(repository:tag) as the compose file names it.
    type: str
    required: true
  archive:
    description:
      - Path on the host of a C(docker save) archive (uncompressed tar) that holds O(name). Refused before
        anything is loaded when the archive does not tag its image O(name).
    type: path
  pull:
    description:
      - V(missing) - pull O(name) when the engine does not have it (and no O(archive) is given);
        V(never) - fail instead, naming the image.
    type: str
    choices: [missing, never]
    default: missing
  socket:
    description: The engine's API socket.
    type: path
    default: /var/run/docker.sock
  status_file:
    description:
      - Path of a JSON progress file, rewritten atomically every O(status_interval) seconds while a load or pull
        runs - C(state) (C(loading), C(unpacking), C(pulling), then C(done) or C(failed)), C(image),
        C(bytes_done), C(bytes_total), C(percent), C(mb_per_s), C(eta_seconds), C(elapsed_seconds) and a C(line).
    type: path
attributes:
  check_mode:
    description: Reads the engine (and the archive's manifest) and reports what it would do; loads and pulls nothing.
    support: full
  diff_mode:
    description: Returns no diff.
    support: none
  platform:
    description: Hosts running the docker engine.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.job_progress
    description: Prints the status file's line while the load or pull runs.
'''

EXAMPLES = r'''
- name: Load the Triton image from the archive shipped with the release, if the engine lacks it
  inferops.node.container_image:
    name: inferops/tritonserver:2.51.0-cpu
    archive: /var/lib/inferops/images/tritonserver-2.51.0-cpu.tar
    status_file: /run/inferops-image.json
  async: 1800
  poll: 0
  register: image_job
'''

RETURN = r'''
action:
  description: V(present) (nothing to do), V(loaded), V(pulled); in check mode V(would_load) or V(would_pull).
  returned: always
  type: str
  sample: loaded
image_id:
  description: The image ID the engine holds under O(name) afterwards (before, in check mode; null if none).
  returned: always
  type: str
  sample: sha256:5b0c2c1e0a8c4d9b1b4e0b1d2c4f6a8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a
bytes:
  description: Bytes of the archive sent to the engine, or of the layers pulled.
  returned: always
  type: int
seconds:
  description: How long the load or pull took.
  returned: always
  type: float
engine_lines:
  description: What the engine answered to a load (C(Loaded image ...)), or a pull's last status.
  returned: always
  type: list
  elements: str
'''

import os
import threading
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common import status_file
from ansible_collections.inferops.node.plugins.module_utils.serving.docker_api import Engine, EngineError, PullProgress, archive_image
from ansible_collections.inferops.node.plugins.module_utils.model_sync.plan import human


class Progress(object):
    """The snapshot the status file is written from: bytes moved of a total, rate, ETA and a line."""

    def __init__(self, action, name):
        self.lock = threading.Lock()
        self.state = action
        self.name = name
        self.done = 0
        self.total = 0
        self.began = self.started = time.monotonic()

    def set(self, done, total):
        with self.lock:
            self.done, self.total = done, total

    def set_state(self, state):
        with self.lock:
            if state != self.state and state == 'unpacking':
                # A new phase counts its own bytes: its rate and ETA from its own start.
                self.started = time.monotonic()
            self.state = state

    def snapshot(self):
        with self.lock:
            done, total, state = self.done, self.total, self.state
        now = time.monotonic()
        elapsed, phase = now - self.began, now - self.started
        rate = done / phase if phase > 0 else 0.0
        eta = status_file.eta_seconds(total - done, rate) if total else None
        percent = round(100.0 * done / total, 1) if total else 0.0
        return {'state': state, 'image': self.name, 'bytes_done': done, 'bytes_total': total, 'percent': percent,
                'mb_per_s': round(rate / 1e6, 1), 'eta_seconds': eta, 'elapsed_seconds': round(elapsed, 1),
                'line': '%s %s: %s %% (%s of %s, %.1f MB/s, eta %s, %.0f s elapsed)' % (
                    state, self.name, percent, human(done), human(total) if total else '?', rate / 1e6,
                    '?' if eta is None else '%s s' % eta, elapsed)}


def run(module):
    p = module.params
    engine = Engine(p['socket'])
    result = {'changed': False, 'action': 'present', 'image_id': None, 'bytes': 0, 'seconds': 0.0, 'engine_lines': []}
    wanted = None
    if p['archive']:
        if not os.path.isfile(p['archive']):
            module.fail_json(msg='archive %s: no such file on the host' % p['archive'], **result)
        try:
            wanted = archive_image(p['archive'])
        except (OSError, ValueError, KeyError) as exc:
            module.fail_json(msg='archive %s is not a docker save archive: %s' % (p['archive'], exc), **result)
        if p['name'] not in wanted['tags']:
            module.fail_json(msg='archive %s tags its image %s, not %s: name the image as the archive does, or ship '
                                 'the archive of %s' % (p['archive'], ', '.join(wanted['tags']) or 'nothing', p['name'],
                                                        p['name']), **result)
    try:
        found = engine.image(p['name'])
    except EngineError as exc:
        module.fail_json(msg=str(exc), **result)
    result['image_id'] = found and found.get('Id')
    if wanted is not None:
        if result['image_id'] == wanted['id']:
            return result
        action = 'load'
    elif found is not None:
        return result
    elif p['pull'] == 'never':
        module.fail_json(msg='the engine has no image %s, and pull is never: load it (archive) or allow the pull'
                             % p['name'], **result)
    else:
        action = 'pull'
    result.update(changed=True, action='would_' + action)
    if module.check_mode:
        return result

    progress = Progress('loading' if action == 'load' else 'pulling', p['name'])
    writer = None
    if p['status_file']:
        writer = status_file.StatusWriter(p['status_file'], progress, p['status_interval'])
        writer.start()
    started = time.monotonic()
    try:
        if action == 'load':
            size = os.path.getsize(p['archive'])
            progress.set(0, size)
            sent = [0]

            def count(n):
                sent[0] += n
                progress.set(sent[0], size)

            def unpacking(value):
                # After the archive is in, the engine unpacks its layers: that is the rest of the wait.
                detail = value.get('progressDetail') or {}
                if value.get('status') == 'Loading layer' and detail.get('total'):
                    progress.set_state('unpacking')
                    progress.set(detail.get('current') or 0, detail['total'])

            with open(p['archive'], 'rb') as handle:
                result['engine_lines'] = engine.load(handle, count, unpacking)
            result['bytes'] = sent[0]
        else:
            pulled = PullProgress()

            def pulling(value):
                pulled.update(value)
                progress.set(pulled.done, pulled.total)

            last = engine.pull(p['name'], pulling)
            result['engine_lines'] = [last] if last else []
            result['bytes'] = pulled.total
    except (EngineError, OSError) as exc:
        if writer:
            writer.stop(state='failed')
        module.fail_json(msg='%s of %s failed: %s' % (action, p['name'], exc), **result)
    result['seconds'] = round(time.monotonic() - started, 1)
    # Done only once the engine shows the image under its name (the archive's, for a load).
    problem = None
    try:
        found = engine.image(p['name'])
    except EngineError as exc:
        found, problem = None, 'the %s ended, but the image could not be read back: %s' % (action, exc)
    result.update(action='loaded' if action == 'load' else 'pulled', image_id=found and found.get('Id'))
    if problem is None and wanted is not None and result['image_id'] != wanted['id']:
        problem = 'after the load the engine has %s as %s, the archive holds %s' % (
            p['name'], result['image_id'], wanted['id'])
    elif problem is None and found is None:
        problem = 'after the pull the engine has no image %s' % p['name']
    if writer:
        writer.stop(state='failed' if problem else 'done')
    if problem:
        module.fail_json(msg=problem, **result)
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            archive=dict(type='path'),
            pull=dict(type='str', choices=['missing', 'never'], default='missing'),
            socket=dict(type='path', default='/var/run/docker.sock'),
            **status_file.ARGUMENT_SPEC
        ),
        supports_check_mode=True,
    )
    for option, message in status_file.option_problems(module.params):
        module.fail_json(msg=message, option=option)
    module.exit_json(**run(module))


if __name__ == '__main__':
    main()
