# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``docker compose up`` would do to a project's containers, read without asking compose to do it.

``docker compose up --dry-run`` would say it, but Compose 2.26.1 (Debian 13's ``docker-compose``) panics in it
on a project that has no container yet (integer divide by zero, seen in the lab), and community.docker's
check mode uses it. The same decision is made here from what compose itself records on each container:

* ``com.docker.compose.config-hash`` - the hash of the service's configuration the container was created
  from; ``docker compose config --hash '*'`` prints the hash of each service of a definition (the same
  function computes both);
* ``com.docker.compose.image`` - the ID of the image it was created from; compose recreates a container
  whose image tag now names another image (a local rebuild);
* its state - compose starts a container that is not running;
* containers of the project whose service is no longer defined (orphans) - removed (``--remove-orphans``).
  One-off containers (``docker compose run``) are not the service's.

One decision is not compose's: a running server that started before a model of its repository was synced
(``models_synced``, from model_sync's markers) still serves the version it loaded - Triton's default model control
loads the repository once, at start. It is recreated (``recreate_always``: compose itself sees nothing changed).

``hash_args``/``parse_hashes`` read the wanted hashes, ``ps_args`` and ``containers(inspect)`` the
project's containers, ``image_ids(inspect)`` the local images, and ``pending(...)`` decides, per service:
V(create), V(recreate) (configuration or image changed), V(start), V(scale) (more containers than
replicas) or V(none); and which running servers to recreate one at a time, so that a project of several
servers never has all of them down at once.

Standard library only.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import time

__all__ = ['PROJECT_LABEL', 'containers', 'hash_args', 'image_ids', 'models_synced', 'parse_hashes', 'pending',
           'ps_args', 'replicas', 'started_epoch']

PROJECT_LABEL = 'com.docker.compose.project'
SERVICE_LABEL = 'com.docker.compose.service'
HASH_LABEL = 'com.docker.compose.config-hash'
IMAGE_LABEL = 'com.docker.compose.image'
ONEOFF_LABEL = 'com.docker.compose.oneoff'
# What compose up does to each service, and whether that stops or starts a server.
RESTARTS = ('create', 'recreate', 'start')


def hash_args(project_name):
    """``docker compose config --hash`` of every service of the definition read from stdin."""
    return ['docker', 'compose', '--project-name', project_name, '--file', '-', 'config', '--hash', '*']


def parse_hashes(text):
    """``{service: hash}`` from ``config --hash`` output (``<service> <hash>`` lines)."""
    hashes = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 2:
            hashes[fields[0]] = fields[1]
        elif fields:
            raise ValueError('unexpected line in docker compose config --hash output: %r' % line)
    return hashes


def ps_args(project_name):
    """IDs of every container of the project, running or not."""
    return ['docker', 'ps', '--all', '--quiet', '--no-trunc', '--filter', 'label=%s=%s' % (PROJECT_LABEL, project_name)]


def started_epoch(text):
    """Seconds since the epoch of docker's ``State.StartedAt`` (RFC 3339 in UTC, nanoseconds), None for a
    container that never started (``0001-01-01T00:00:00Z``) or a value that is not such a time."""
    match = re.match(r'^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$', text or '')
    if not match or match.group(1).startswith('0001-'):
        return None
    seconds = calendar.timegm(time.strptime(match.group(1), '%Y-%m-%dT%H:%M:%S'))
    return seconds + float('0.' + (match.group(2) or '0'))


def models_synced(repository, marker_name):
    """``{model: mtime}`` of the sync markers (``marker_name``) in the model directories of ``repository``: when
    model_sync last put each model in place (it writes the marker, then swaps the directory in). A model without a
    marker, or a repository that is not there, is left out."""
    synced = {}
    try:
        names = os.listdir(repository)
    except OSError:
        return synced
    for name in sorted(names):
        try:
            synced[name] = os.stat(os.path.join(repository, name, marker_name)).st_mtime
        except OSError:
            continue
    return synced


def containers(inspect):
    """The project's containers from ``docker inspect`` JSON: name, service, hash, image, state and mounts (one-offs
    left out)."""
    result = []
    for entry in json.loads(inspect) if inspect.strip() else []:
        labels = (entry.get('Config') or {}).get('Labels') or {}
        if labels.get(ONEOFF_LABEL, 'False') == 'True':
            continue
        state = entry.get('State') or {}
        result.append({
            'name': (entry.get('Name') or '').lstrip('/'),
            'id': entry.get('Id'),
            'service': labels.get(SERVICE_LABEL),
            'config_hash': labels.get(HASH_LABEL),
            'image_id': labels.get(IMAGE_LABEL),
            'state': state.get('Status'),
            'running': bool(state.get('Running')),
            'started': started_epoch(state.get('StartedAt')),
            # What the kernel mounted, as the engine reports it: a bind mount's RW is false for a read-only one.
            'mounts': [{'type': m.get('Type'), 'source': m.get('Source'), 'destination': m.get('Destination'),
                        'rw': bool(m.get('RW'))} for m in entry.get('Mounts') or []],
        })
    return sorted(result, key=lambda c: c['name'])


def image_ids(inspect):
    """``{reference: image ID}`` from ``docker image inspect`` JSON of the references asked for."""
    ids = {}
    for entry in json.loads(inspect) if inspect.strip() else []:
        for tag in entry.get('RepoTags') or []:
            ids[tag] = entry.get('Id')
    return ids


def replicas(service):
    """How many containers compose runs for a service definition (``deploy.replicas``, ``scale``, else 1)."""
    deploy = service.get('deploy') or {}
    for value in (deploy.get('replicas'), service.get('scale')):
        if value is not None:
            return int(value)
    return 1


def _image_of(service_image, images):
    # A reference without a tag is ``:latest`` for docker; compose labels the image ID it used.
    reference = service_image
    if reference and ':' not in reference.rsplit('/', 1)[-1] and '@' not in reference:
        reference += ':latest'
    return images.get(reference)


def _stale_models(mine, synced):
    """The models synced after a running container of the service started, sorted."""
    return sorted(model for model, when in synced.items()
                  if any(c['running'] and c.get('started') is not None and c['started'] < when for c in mine))


def pending(definition, hashes, current, images=None, synced=None):
    """``{services, orphans, restart, one_at_a_time, recreate_always, would_change, summary}``: what compose up
    would do to each service of ``definition``, and which running servers to replace one at a time (several
    services only).

    ``hashes`` - ``parse_hashes`` of the definition; ``current`` - ``containers`` of the project;
    ``images`` - ``image_ids`` of the services' images (an image not there yet: compose pulls or builds it,
    which recreates nothing by itself); ``synced`` - ``models_synced`` of the servers' model repository: a
    running server started before a model was synced is recreated (``recreate_always`` names those that compose
    up must force, the ones not replaced one at a time).
    """
    images = images or {}
    synced = synced or {}
    services = []
    defined = (definition.get('services') or {})
    for name in sorted(defined):
        service = defined[name] or {}
        mine = [c for c in current if c['service'] == name]
        want = replicas(service)
        image_id = _image_of(service.get('image'), images)
        stale = _stale_models(mine, synced)
        # Every reason to recreate is named (a changed setting and a model synced since the start, say): the
        # operator reads all of them, not the first one found.
        changed = []
        if any(c['config_hash'] != hashes.get(name) for c in mine):
            changed.append('its configuration changed (config hash %s, wanted %s)' % (
                ', '.join(sorted(set(str(c['config_hash']) for c in mine))), hashes.get(name)))
        if image_id and any(c['image_id'] != image_id for c in mine):
            changed.append('its image %s is now %s' % (service.get('image'), image_id))
        reasons = changed + ['model(s) %s synced after its server started (it serves what it loaded)'
                             % ', '.join(stale)] * bool(stale)
        stopped = [c for c in mine if not c['running']]
        if want and not mine:
            action, reason = 'create', 'no container yet'
        elif changed or (stale and not stopped):
            # A stopped server is started instead: starting loads the repository as it is now.
            action, reason = 'recreate', '; '.join(reasons)
        elif stopped:
            action, reason = 'start', ', '.join('%s is %s' % (c['name'], c['state']) for c in stopped)
        elif len(mine) < want:
            action, reason = 'create', '%d of %d replicas' % (len(mine), want)
        elif len(mine) > want:
            action, reason = 'scale', '%d containers, %d replicas wanted' % (len(mine), want)
        else:
            action, reason = 'none', 'running, created from this configuration and image'
        services.append({'name': name, 'action': action, 'reason': reason,
                         'containers': [c['name'] for c in mine], 'stale_models': stale})
    orphans = [c['name'] for c in current if c['service'] not in defined]
    restart = [s['name'] for s in services if s['action'] in RESTARTS]
    # compose up stops every server it recreates before their replacements are up: with several
    # servers, the running ones are replaced one at a time instead, so the others keep serving.
    running = set(c['service'] for c in current if c['running'])
    one_at_a_time = [s['name'] for s in services if s['action'] == 'recreate' and s['name'] in running] \
        if len(services) > 1 else []
    # compose sees no change in these: its up must be told to recreate them (--force-recreate).
    recreate_always = [s['name'] for s in services
                       if s['action'] == 'recreate' and s['stale_models'] and s['name'] not in one_at_a_time]
    would_change = bool(orphans) or any(s['action'] != 'none' for s in services)
    summary = (['%s: %s (%s)' % (s['name'], s['action'], s['reason']) for s in services if s['action'] != 'none']
               + ['%s: removed (orphan)' % orphan for orphan in orphans])
    return {'services': services, 'orphans': orphans, 'restart': restart, 'one_at_a_time': one_at_a_time,
            'recreate_always': recreate_always, 'would_change': would_change, 'summary': summary}
