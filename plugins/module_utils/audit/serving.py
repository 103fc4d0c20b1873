# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of serving: the Triton servers of the triton_compose role, live and ready, and their models (on
``triton_info``, which the audit runs on the hosts of the serving group only), and their containers (on
``compose_project_info``: what docker compose up would do to each service of the role's definition). The wanted
values are the roles' own: the endpoints and the compose definition of ``triton_compose.plan`` over the role's
variables (the servers it deploys and waits for, the project it writes), every model of the repository (the role
waits for each; Triton's repository index lists them), and the models model_sync puts into that repository
(``model_sync_models``, when ``model_sync_destination`` is the repository: one missing from the index is named).
``triton_v2.not_serving`` and ``index_states`` word what is wrong, as for triton_info and k8s_node_labels."""

from __future__ import annotations

import posixpath

from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose, triton_v2
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, Missing, read

# What the checks compare with: the triton_compose role's plan input (its vars/main.yml
# __triton_compose_params) and switch, and model_sync's models and destination (the models Triton must serve).
SERVING_VARIABLES = (
    'triton_compose_deploy',
    'triton_compose_params',
    'model_sync_destination',
    'model_sync_models',
)

__all__ = ['CHECKS']

FIX = 'role triton_compose (tag triton_compose)'


def _plan(expected):
    """The role's plan over its variables; raise ``Missing`` when the role starts no server or refuses them."""
    if expected.get('triton_compose_deploy') == 'never':
        raise Missing('triton_compose_deploy is never: the role renders the compose project, starts no server')
    params = expected.get('triton_compose_params')
    if not isinstance(params, dict):
        raise Missing('the triton_compose variables are unknown')
    plan = triton_compose.plan(params)
    if plan['errors']:
        raise Missing('the triton_compose variables are invalid (the role refuses them): %s'
                      % '; '.join(plan['errors']))
    return plan


def _read(reads, name, key):
    """``read`` with the playbook's reason for a read it skipped (the host is not in the serving group, the role
    deployed no server)."""
    result = (reads or {}).get(name) or {}
    if result.get('skipped') and result.get('msg'):
        raise Missing('%s was not run on this host: %s' % (name, result['msg']))
    return result, read(reads, name, key)


def _endpoints(check, reads, expected, results, answering=False):
    """``(url, endpoint)`` of every endpoint of the role's plan that triton_info read (that answered, when
    ``answering``), and the whole result; a SKIP in ``results`` for the others."""
    plan = _plan(expected)
    result, endpoints = _read(reads, 'triton_info', 'endpoints')
    read_endpoints = dict((e.get('url'), e) for e in endpoints)
    found = []
    for url in plan['endpoints']:
        info = read_endpoints.get(url)
        if info is None:
            results.append(check.skip('triton_info did not read %s' % url, subject=url))
        elif answering and not info.get('reachable'):
            results.append(check.skip('%s does not answer (serving.ready)' % url, subject=url))
        else:
            found.append((url, info))
    return found, result


@Check('serving.ready', 'Every Triton instance of triton_compose live and ready', 'critical',
       'GET <endpoint>/v2/health/live, /v2/health/ready',
       FIX + ' (a model that failed to load keeps the server not ready: serving.models names it)', variables=SERVING_VARIABLES)
def ready(check, reads, expected):
    results = []
    endpoints, result = _endpoints(check, reads, expected, results)
    for url, info in endpoints:
        observed = dict((key, info.get(key)) for key in ('reachable', 'live', 'ready'))
        observed['version'] = (info.get('server') or {}).get('version')
        evidence = 'GET %s/v2/health/live, %s/v2/health/ready' % (url, url)
        problems = triton_v2.not_serving(result, [url])
        if problems:
            results.append(check.fail(url, 'live and ready', observed, '; '.join(problems), evidence))
        else:
            results.append(check.passed(url, 'live and ready', observed, evidence=evidence))
    return results


def _synced(expected):
    """The models model_sync keeps in the triton_compose repository (none when it syncs elsewhere)."""
    params = expected.get('triton_compose_params') or {}
    destination = expected.get('model_sync_destination')
    repository = params.get('triton_compose_model_repository')
    if not isinstance(destination, str) or not isinstance(repository, str) or (
            posixpath.normpath(destination) != posixpath.normpath(repository)):
        return []
    return [m['name'] for m in expected.get('model_sync_models') or []
            if isinstance(m, dict) and m.get('name') and m.get('state', 'present') != 'absent']


@Check('serving.models', 'Every model of the repository and of model_sync_models READY on every instance', 'critical',
       'POST <endpoint>/v2/repository/index',
       FIX + ' (the load error is in the reason and in docker compose logs); a model missing from the repository: '
       'role model_sync (tag model_sync)', variables=SERVING_VARIABLES)
def models(check, reads, expected):
    results = []
    synced = _synced(expected)
    endpoints, dummy = _endpoints(check, reads, expected, results, answering=True)
    for url, info in endpoints:
        evidence = 'POST %s/v2/repository/index' % url
        if info.get('index') is None:
            results.append(check.not_checked('%s: repository index not read (%s)'
                                             % (url, '; '.join(info.get('errors') or [])), subject=url))
            continue
        for model in triton_v2.index_states(info['index'], synced):
            subject = '%s/v2/models/%s' % (url, model['name'])
            observed = dict((key, model[key]) for key in ('state', 'version'))
            reason = '%s: model %s %s' % (url, model['name'], model['reason'])
            if model['reason'] is None:
                results.append(check.passed(subject, 'READY', observed, evidence=evidence))
            elif model['reason'] == triton_v2.NEVER_LOADED and model['name'] not in synced:
                # Triton loads the whole repository at start: one added since waits for a restart (or explicit
                # model control in triton_compose_extra_args leaves it out on purpose).
                results.append(check.warn(subject, 'READY', observed, reason + ' (added after the server started?)',
                                          evidence))
            else:
                results.append(check.fail(subject, 'READY', observed, reason, evidence))
    return results


@Check('serving.containers',
       "Every server container of triton_compose running, created from the role's configuration and image", 'critical',
       'docker compose config --hash, docker inspect (compose_project_info)',
       FIX + ' (a FAIL: docker compose up would create, recreate or start the container - the running one is not '
       'what the role renders now: compose.yaml edited by hand, an inventory change not applied yet, or a container '
       'created or stopped by hand; an orphan: a service the role no longer defines, removed by the role)', variables=SERVING_VARIABLES)
def containers(check, reads, expected):
    # The hashes compose gives the plan's definition against those on the containers: a container PASSes only
    # if it was created from exactly what the role renders now (its read-only model mount, its flags, its
    # limits); the check does not compare those settings one by one (serving.model_mount reads the mount).
    plan = _plan(expected)
    result, services = _read(reads, 'compose_project_info', 'services')
    services = dict((s.get('name'), s) for s in services)
    wanted = 'running, created from the configuration and image the role renders'
    results = []
    for name in plan['definition']['services']:
        service = services.get(name)
        if service is None:
            results.append(check.skip('compose_project_info did not read service %s' % name, subject=name))
            continue
        observed = {'containers': service.get('containers'), 'action': service.get('action')}
        if service.get('action') == 'none':
            results.append(check.passed(name, wanted, observed))
        else:
            results.append(check.fail(name, wanted, observed, '%s (docker compose up would %s it)'
                                      % (service.get('reason'), service.get('action'))))
    for orphan in result.get('orphans') or []:
        # A container of the project whose service the role no longer renders: it still holds its ports and
        # memory until the role's next compose up (remove_orphans) removes it.
        results.append(check.warn(orphan, 'no container outside the services the role renders', {'container': orphan},
                                  'container %s of project %s belongs to no service of the role (an orphan: the '
                                  "role's compose up removes it)" % (orphan, plan['definition']['name'])))
    return results


@Check('serving.model_mount', 'The model repository mounted read-only in every server container', 'critical',
       'docker inspect (compose_project_info): Mounts',
       FIX + ' (docker compose up mounts the repository as the role renders it: read-only, at '
       'triton_compose_model_repository_target; a read-write mount lets a server or a shell in its container change '
       'the models every instance loads)', variables=SERVING_VARIABLES)
def model_mount(check, reads, expected):
    # Read from the mounts the engine reports (the kernel's), not from the compose file: serving.containers proves
    # the container matches the role's configuration through compose's hash; this says what the mount is.
    plan = _plan(expected)
    dummy, read_containers = _read(reads, 'compose_project_info', 'containers')
    results = []
    for name, service in sorted(plan['definition']['services'].items()):
        wanted = [v for v in service.get('volumes') or [] if v.get('read_only')]
        found = [c for c in read_containers or [] if c.get('service') == name]
        if not found:
            results.append(check.skip('service %s has no container (serving.containers)' % name, subject=name))
        for container in found:
            for volume in wanted:
                results.append(_mount_result(check, container, volume))
    return results


def _mount_result(check, container, volume):
    subject = '%s:%s' % (container['name'], volume['target'])
    expected = {'source': volume['source'], 'rw': False}
    mounted = [m for m in container.get('mounts') or [] if m.get('destination') == volume['target']]
    if not mounted:
        return check.fail(subject, expected, None, '%s has nothing mounted at %s' % (container['name'], volume['target']))
    observed = {'source': mounted[0]['source'], 'rw': mounted[0]['rw']}
    if observed['source'] != volume['source']:
        return check.fail(subject, expected, observed, '%s mounts %s at %s, not %s' % (
            container['name'], observed['source'], volume['target'], volume['source']))
    if observed['rw']:
        return check.fail(subject, expected, observed, '%s mounts %s read-write at %s' % (
            container['name'], volume['source'], volume['target']))
    return check.passed(subject, expected, observed)


CHECKS = [ready, models, containers, model_mount]
