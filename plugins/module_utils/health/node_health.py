# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check (role node_health): what its checker runs on the node, decided on the controller.

* ``errors(settings)`` - problems of the role's variables (``node_health_*``), each naming the variable, the
  value and the fix.
* ``read_arguments(expected)`` - the audit's info modules with the arguments ``playbooks/tasks/audit_host.yml``
  gives them on this host, from the values ``audit_host`` resolved for it (``expected``); a module the audit
  does not run on the host is left out, and its checks SKIP with "not run on this host", as in the audit.
* ``config(expected, settings)`` - the JSON document the checker reads (``/etc/inferops/node-health.json``).
* ``residency_ratio(path)`` - resident bytes / file bytes of the files under ``path`` (the page_cache module's
  measurement, reading nothing), or None when there is nothing to measure.
* ``warmup_success(path)`` - when the warmup role's traffic job last ended well (its status file's
  ``updated_epoch`` with ``state`` done), or None.

Runs on the controller (the filters ``node_health_errors`` and ``node_health_config``) and, for
``residency_ratio``, in the checker on the node.
"""

from __future__ import annotations

import json

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose
from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan, page_cache
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import as_int
from ansible_collections.inferops.node.plugins.module_utils.common.role_arguments import is_boolean

__all__ = ['DEFAULT_MDADM_CONF', 'INTERVAL_MINUTES', 'SYSSTAT_MINUTES', 'VARIABLES', 'config', 'errors', 'read_arguments',
           'residency_ratio', 'warmup_success']

# Every few minutes (issue 31); an hour at most: the alert InferopsHealthCheckStale counts three intervals.
INTERVAL_MINUTES = (1, 60)
# "A short collection interval": sysstat's own default is 10 minutes.
SYSSTAT_MINUTES = (1, 10)
NODE_EXPORTER = ('install', 'existing')
DEFAULT_MDADM_CONF = '/etc/mdadm/mdadm.conf'
# The role variables config() and read_arguments() take from audit_host's expected, beyond what the checks
# declare (audit.Check variables): audit_catalogue.VARIABLES adds them, so audit_host resolves them too.
VARIABLES = (
    'md_raid_xfs_mdadm_conf',
    'storage_benchmark_results_dir',
    'k8s_node_labels_file',
    'k8s_node_labels_prefix',
    'warmup_traffic_status_file',
)
_BOOLEANS = ('node_health_page_cache', 'node_health_k8s_label_gate', 'node_health_sysstat')


def _int_errors(settings, name, bounds):
    # -e node_health_interval_minutes=10 gives the string "10", which the role's argument spec accepts.
    value = as_int(settings.get(name))
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        return ['%s = %r: must be a whole number of minutes from %d to %d' % (name, value, bounds[0], bounds[1])]
    return []


def errors(settings):
    """Problems of the role's variables, one message each (empty: valid)."""
    out = _int_errors(settings, 'node_health_interval_minutes', INTERVAL_MINUTES)
    out += _int_errors(settings, 'node_health_sysstat_interval_minutes', SYSSTAT_MINUTES)
    if settings.get('node_health_node_exporter') not in NODE_EXPORTER:
        out.append('node_health_node_exporter = %r: must be one of %s (install: Debian\'s prometheus-node-exporter; '
                   'existing: one already running, the role only writes into its textfile directory)'
                   % (settings.get('node_health_node_exporter'), ', '.join(NODE_EXPORTER)))
    directory = settings.get('node_health_textfile_dir')
    if not isinstance(directory, str) or not directory.startswith('/') or directory.rstrip('/') in ('', '/'):
        out.append('node_health_textfile_dir = %r: must be an absolute directory path, the textfile collector\'s '
                   '(--collector.textfile.directory)' % (directory,))
    args = settings.get('node_health_node_exporter_args')
    if not isinstance(args, list) or not all(isinstance(a, str) and a.startswith('--') for a in args):
        out.append('node_health_node_exporter_args = %r: must be a list of node_exporter flags (--flag=value)' % (args,))
    elif any(a.startswith('--collector.textfile.directory') for a in args):
        out.append('node_health_node_exporter_args: --collector.textfile.directory is set by node_health_textfile_dir')
    for name in _BOOLEANS:
        if not is_boolean(settings.get(name)):
            out.append('%s = %r: must be true or false' % (name, settings.get(name)))
    return out


def _serving(expected):
    """The triton_compose role's plan on a host of the serving group that deploys it, else None (as the
    audit's conditions on its triton_compose reads)."""
    params = expected.get('triton_compose_params')
    if ('serving' not in (expected.get('group_names') or []) or not isinstance(params, dict)
            or expected.get('triton_compose_deploy') == 'never'):
        return None
    plan = triton_compose.plan(params)
    return plan if plan.get('endpoints') else None


def read_arguments(expected):
    """``{info module: arguments}`` of the audit's reads on this host (playbooks/tasks/audit_host.yml)."""
    arrays = md_raid_plan.want({'md_raid_xfs_arrays': expected.get('md_raid_xfs_arrays') or []})
    reads = {
        'platform_info': {},
        'nvme_info': {},
        'nvme_health_info': {},
        'md_info': {'arrays': [array['info'] for array in arrays],
                    'units': ['fstrim.timer', md_raid_plan.RESYNC_WINDOW_SERVICE],
                    'mdadm_conf': expected.get('md_raid_xfs_mdadm_conf') or DEFAULT_MDADM_CONF},
        'sysctl_info': {},
        'irq_info': {},
    }
    rules = expected.get('irq_affinity_rules') or []
    if rules:
        reads['irq_pin'] = {'rules': [irq.normalize_rule(rule) for rule in rules if isinstance(rule, dict)],
                            'list_only': True}
    if expected.get('storage_benchmark_results_dir'):
        reads['storage_benchmark_info'] = dict(
            {'path': expected['storage_benchmark_results_dir']},
            **({'baseline': expected['storage_benchmark_baseline']}
               if expected.get('storage_benchmark_baseline') is not None else {}))
    plan = _serving(expected)
    if plan is not None:
        reads['triton_info'] = {'endpoints': plan['endpoints']}
        reads['compose_project_info'] = {'project_name': expected['triton_compose_params']['triton_compose_project_name'],
                                         'definition': plan['definition']}
    return reads


def config(expected, settings):
    """The checker's configuration: ``expected``, ``reads``, ``textfile``, ``repository`` (the model repository
    whose page-cache residency is published, or None) and ``labels`` (the Kubernetes label gate, or None)."""
    plan = _serving(expected)
    groups = expected.get('group_names') or []
    gate = None
    if (boolean(settings['node_health_k8s_label_gate'], strict=False) and 'k8s_workers' in groups
            and expected.get('k8s_node_labels_file')):
        gate = {'file': expected['k8s_node_labels_file'], 'label': '%s/triton-ready' % expected['k8s_node_labels_prefix'],
                'held': settings['node_health_state_dir'].rstrip('/') + '/held-label.json'}
    return {
        'expected': expected,
        'reads': read_arguments(expected),
        'textfile': settings['node_health_textfile_dir'].rstrip('/') + '/inferops_health.prom',
        'repository': (expected['triton_compose_params']['triton_compose_model_repository']
                       if plan is not None and boolean(settings['node_health_page_cache'], strict=False) else None),
        'labels': gate,
        # The warmup role's traffic status file (in /run: gone after a reboot, until the next warm-up).
        'warmup_status': expected.get('warmup_traffic_status_file') if plan is not None else None,
    }


def residency_ratio(path):
    """Resident bytes / file bytes under ``path`` (page_cache's plan, which measures and reads nothing), or None
    when it holds no bytes."""
    files, dummy = page_cache.plan(page_cache.collect_files([path]), 8 * 1024 * 1024)
    size = sum(f['size'] for f in files)
    if not size:
        return None
    return sum(f['resident_before'] for f in files) / float(size)


def warmup_success(path):
    """``updated_epoch`` of the warmup role's traffic status file (module triton_warmup, status_file.StatusWriter)
    when its job ended ``done``; None without a file, while it runs, after a failure, or for a file not of that
    shape."""
    if not path:
        return None
    try:
        with open(path) as handle:
            status = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(status, dict) or status.get('state') != 'done':
        return None
    epoch = status.get('updated_epoch')
    return float(epoch) if isinstance(epoch, (int, float)) and not isinstance(epoch, bool) else None
