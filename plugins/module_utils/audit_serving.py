# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of serving: the Triton servers of the triton_compose role, live and ready, and their models
(on ``triton_info``, which the audit runs on the hosts of the serving group only). The wanted values are the
roles' own: the endpoints of ``triton_compose.plan`` over the role's variables (the servers it deploys and
waits for), every model of the repository (the role waits for each; Triton's repository index lists them),
and the models model_sync puts into that repository (``model_sync_models``, when ``model_sync_destination``
is the repository: one missing from the index is named). ``triton_v2.not_serving`` and ``index_states`` word
what is wrong, as for triton_info and k8s_node_labels."""

from __future__ import annotations

import posixpath

from ansible_collections.inferops.node.plugins.module_utils import triton_compose, triton_v2
from ansible_collections.inferops.node.plugins.module_utils.audit import Check, Missing, read

__all__ = ['CHECKS']

FIX = 'role triton_compose (tag triton_compose)'


def _endpoints(check, reads, expected, results, answering=False):
    """``(url, endpoint)`` of every endpoint of the role's plan that triton_info read (that answered, when
    ``answering``), and the whole result; a SKIP in ``results`` for the others."""
    if expected.get('triton_compose_deploy') == 'never':
        raise Missing('triton_compose_deploy is never: the role renders the compose project, starts no server')
    params = expected.get('triton_compose_params')
    if not isinstance(params, dict):
        raise Missing('the triton_compose variables are unknown')
    plan = triton_compose.plan(params)
    if plan['errors']:
        raise Missing('the triton_compose variables are invalid (the role refuses them): %s'
                      % '; '.join(plan['errors']))
    result = (reads or {}).get('triton_info') or {}
    if result.get('skipped') and result.get('msg'):
        # The playbook's reason: the host is not in the serving group.
        raise Missing('triton_info was not run on this host: %s' % result['msg'])
    read_endpoints = dict((e.get('url'), e) for e in read(reads, 'triton_info', 'endpoints'))
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
       FIX + ' (a model that failed to load keeps the server not ready: serving.models names it)')
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
       'role model_sync (tag model_sync)')
def models(check, reads, expected):
    results = []
    synced = _synced(expected)
    endpoints, dummy = _endpoints(check, reads, expected, results, answering=True)
    for url, info in endpoints:
        evidence = 'POST %s/v2/repository/index' % url
        if info.get('index') is None:
            results.append(check.skip('%s: repository index not read (%s)' % (url, '; '.join(info.get('errors') or [])),
                                      subject=url))
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


CHECKS = [ready, models]
