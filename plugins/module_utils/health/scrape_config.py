# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus's scrape configuration of the serving nodes, from the inventory (playbooks/scrape_config.yml).

* ``targets(hosts, node_exporter_port)`` - the targets of the jobs ``node`` (node_exporter on every host that
  runs it) and ``triton`` (each ``metrics_port`` of ``triton_compose_instances`` on a serving host, at the
  address the servers are bound to: ``triton_compose_bind_address``, or the host's address when they listen on
  every address), and the problems that make one unreachable from another machine (bound to loopback).
* ``config(hosts, ...)`` - a whole ``prometheus.yml``: ``global``, ``rule_files`` and ``scrape_configs``. The job
  names are what the alert rules select (``up{job="triton"}``, monitoring/prometheus/inferops-alerts.yml).

``hosts``: ``[{'name': inventory name, 'address': where to reach it (ansible_host), 'node_exporter': bool,
'triton_compose_params': the triton_compose role's variables on it (audit_host's expected), or None}]``.
Every target carries the label ``node`` (the inventory name), so the two jobs of one node join on it.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose

__all__ = ['JOBS', 'config', 'targets']

JOBS = ('node', 'triton')


def _url_host(address):
    return '[%s]' % address if ':' in address else address


def _triton_address(params, address):
    """Where another machine reaches the servers: their bind address, or the host's when they listen on all."""
    bind = params.get('triton_compose_bind_address')
    if bind in ('0.0.0.0', '::', None):
        return address
    return bind


def targets(hosts, node_exporter_port=9100):
    """``{'node': [static_config], 'triton': [static_config], 'problems': [text]}``, hosts in the given order."""
    out = {'node': [], 'triton': [], 'problems': []}
    for host in hosts:
        labels = {'node': host['name']}
        if host.get('node_exporter'):
            out['node'].append({'targets': ['%s:%d' % (_url_host(host['address']), node_exporter_port)], 'labels': labels})
        params = host.get('triton_compose_params')
        if not params:
            continue
        plan = triton_compose.plan(params)
        if plan['errors']:
            out['problems'].append('%s: triton_compose variables invalid, no Triton target: %s'
                                   % (host['name'], '; '.join(plan['errors'])))
            continue
        address = _triton_address(params, host['address'])
        try:
            loopback = ipaddress.ip_address(address).is_loopback
        except ValueError:  # a host name
            loopback = address == 'localhost'
        if loopback:
            out['problems'].append('%s: Triton is bound to %s (triton_compose_bind_address): a Prometheus on another '
                                   'machine cannot scrape it' % (host['name'], address))
        out['triton'].append({'targets': ['%s:%s' % (_url_host(address), inst['metrics_port'])
                                          for inst in plan['instances']], 'labels': labels})
    return out


def config(hosts, rule_files=None, scrape_interval='30s', node_exporter_port=9100):
    """``prometheus.yml`` (a dict) scraping ``hosts``; ``problems`` aside: ``(document, problems)``."""
    found = targets(hosts, node_exporter_port)
    document = {
        'global': {'scrape_interval': scrape_interval, 'evaluation_interval': scrape_interval},
        'rule_files': list(rule_files or []),
        'scrape_configs': [{'job_name': job, 'static_configs': found[job]} for job in JOBS],
    }
    return document, found['problems']
