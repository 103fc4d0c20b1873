# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node audit's catalogue and report: which checks run on a host, which variables they compare
with, and the one JSON document a run writes (schema ``schemas/audit_report.schema.json``).

* ``AUDIT_DEFAULTS`` - the audit's own thresholds (``audit_*``; an inventory overrides each).
* ``VARIABLES`` - the role variables the checks declare (``audit.Check(variables=...)``) and the node health
  check takes: the values the checks compare with are the roles' own variables (inventory over role defaults,
  role vars over both), so the audit and the converge cannot disagree. The action plugin ``audit_host``
  resolves them, and adds the host's ``group_names``: a role's variables have defaults on every host, its
  checks run on its site's group only (``audit.require_group``).
* ``HOST_CHECKS`` - every host check, in report order; ``FLEET_CHECKS`` - the fleet checks (audit/fleet.py);
  ``REACHABLE`` - the result of a host the audit could not read.
* ``evaluate_host(reads, expected)`` - the results of one host.
* ``build_report(hosts, groups, expected, meta)`` - the report: fleet checks over every host, summaries,
  hosts with failures first.
* ``summary_lines(report)`` - the human summary printed after the run.
"""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.audit import benchmark as audit_benchmark, check as audit, fabric as audit_fabric
from ansible_collections.inferops.node.plugins.module_utils.audit import fleet as audit_fleet, irq as audit_irq, kernel as audit_kernel, nvme as audit_nvme
from ansible_collections.inferops.node.plugins.module_utils.audit import platform as audit_platform, serving as audit_serving, storage as audit_storage
from ansible_collections.inferops.node.plugins.module_utils.health import node_health

__all__ = ['AUDIT_DEFAULTS', 'FLEET_CHECKS', 'HOST_CHECKS', 'INFO_MODULES', 'REACHABLE', 'VARIABLES', 'build_report',
           'catalogue', 'evaluate_host', 'summary_lines']

AUDIT_DEFAULTS = {
    # The releases the roles are proven on: the local-NVMe and fabric roles on 12, serving (docker_engine) on 13.
    'audit_os_releases': ['debian 12', 'debian 13'],
    'audit_kernel_min': None,
    'audit_numa_nodes': None,
    'audit_smt': None,
    'audit_cpufreq_governor': 'performance',
    'audit_cpuidle_max_latency_us': None,
    'audit_nvme_temp_warn_c': 70,
    'audit_nvme_temp_fail_c': 80,
    'audit_nvme_wear_warn_percent': 80,
    'audit_nvme_firmware': {},
    'audit_fleet_temp_delta_c': 10,
    # A model repository needs room for the next version beside the current one while it syncs.
    'audit_min_free_percent': 10,
}

HOST_CHECKS = (audit_platform.CHECKS + audit_kernel.CHECKS + audit_nvme.CHECKS + audit_storage.CHECKS
               + audit_fabric.CHECKS + audit_irq.CHECKS + audit_serving.CHECKS + audit_benchmark.CHECKS)
FLEET_CHECKS = audit_fleet.CHECKS_DOC

# The role variables audit_host resolves for a host: what the checks declare (audit.Check variables) and what the
# node health check's configuration takes besides (node_health.VARIABLES). Each is found in the one role that
# declares it (its defaults, vars or argument spec; ``__name`` in its vars for a computed form).
VARIABLES = tuple(sorted(set(name for check in HOST_CHECKS for name in check.variables) | set(node_health.VARIABLES)))

# A role that a site role includes with variables of its own: on the hosts of that site role's group, when its
# switch is on, the included role runs with those values, whatever the inventory says - and the audit must
# judge against them (roles/nvmeof_initiator/tasks/main.yml includes kernel_tuning with
# kernel_tuning_profile: nvmeof_initiator_kernel_tuning_profile). {included role: (group, including role,
# its switch, {included variable: including variable})}.
INCLUDED_WITH = {
    'kernel_tuning': ('nvmeof_initiators', 'nvmeof_initiator', 'nvmeof_initiator_kernel_tuning',
                      {'kernel_tuning_profile': 'nvmeof_initiator_kernel_tuning_profile'}),
}

# The info modules the checks read, as the playbook registers them; irq_pin runs with list_only (it matches the
# rules and plans the targets, writes nothing): the role's own plan, for irq.pins. triton_info reads the
# triton_compose role's endpoints and compose_project_info its containers against its definition (its entry
# point tasks/info.yml), on the hosts of the serving group only.
# storage_benchmark_info gives the report's benchmarks section and storage.benchmark_baseline (audit/benchmark.py).
INFO_MODULES = ('platform_info', 'nvme_info', 'nvme_health_info', 'md_info', 'sysctl_info', 'irq_info', 'irq_pin',
                'triton_info', 'compose_project_info', 'storage_benchmark_info')

# The result audit_report gives a host with no audit_host result (unreachable, or failed before the audit).
REACHABLE = audit.Check('audit.reachable', 'Host answered the audit', 'critical', 'the info modules of the audit play',
                        'bring the host back, then run the audit again')


def catalogue():
    """Every check: id, title, severity, evidence, fix (docs/audit.md lists the same)."""
    return [dict(id=c.id, title=c.title, severity=c.severity, evidence=c.evidence, fix=c.fix)
            for c in list(HOST_CHECKS) + list(FLEET_CHECKS) + [REACHABLE]]


def evaluate_host(reads, expected):
    merged = dict(AUDIT_DEFAULTS)
    merged.update(dict((k, v) for k, v in (expected or {}).items()))
    return audit.run(HOST_CHECKS, reads, merged)


def build_report(hosts, groups, expected=None, meta=None):
    """``hosts``: ``{host: {'results': [...], 'drives': nvme_health_info controllers or None, 'reachable': bool,
    'groups': [...], 'benchmarks': audit_benchmark.section(), None when unread}}``; ``groups``: ``{group: [hosts]}``;
    ``expected``: fleet thresholds (``audit_*``)."""
    settings = dict(AUDIT_DEFAULTS)
    settings.update(expected or {})
    host_reads = dict((host, {'nvme_health_info': {'controllers': data.get('drives') or []}})
                      for host, data in hosts.items() if data.get('drives') is not None)
    host_results = dict((host, data['results']) for host, data in hosts.items() if data.get('reachable', True))
    fleet = (audit_fleet.firmware(host_reads) + audit_fleet.temperature(host_reads, int(settings['audit_fleet_temp_delta_c']))
             + audit_fleet.group_outliers(host_results, groups))
    entries = []
    for host in sorted(hosts):
        data = hosts[host]
        results = audit.failures_first(data['results'])
        entries.append({'host': host, 'groups': data.get('groups') or [], 'reachable': data.get('reachable', True),
                        'status': audit.worst(results), 'summary': audit.summary(results), 'results': results,
                        'benchmarks': data.get('benchmarks') or dict(audit_benchmark.UNREAD)})
    entries.sort(key=lambda e: (audit.ORDER[e['status']], e['host']))
    every = [r for e in entries for r in e['results']] + fleet
    return {
        'schema_version': audit.SCHEMA_VERSION,
        'meta': dict(meta or {}),
        'status': audit.worst(every),
        'summary': dict(audit.summary(every), hosts=len(entries),
                        hosts_failed=len([e for e in entries if e['status'] == 'FAIL'])),
        'fleet': audit.failures_first(fleet),
        'hosts': entries,
    }


def summary_lines(report, limit=40):
    """The human summary: the fleet's counts, why each host that is not PASS is not, then every FAIL,
    NOT_CHECKED and WARN with its fix (at most ``limit``)."""
    s = report['summary']
    lines = ['node audit: %s - %d host(s), %d failed; %s' % (
        report['status'], s['hosts'], s['hosts_failed'],
        ', '.join('%d %s' % (s.get(status, 0), status) for status in audit.STATUSES))]
    lines.extend('%s %s: %s' % (e['status'], e['host'], audit.why(e['results']))
                 for e in report['hosts'] if e['status'] != 'PASS')
    shown = 0
    for where, results in [('fleet', report['fleet'])] + [(e['host'], e['results']) for e in report['hosts']]:
        for r in results:
            if r['status'] in ('FAIL', 'NOT_CHECKED', 'WARN'):
                if shown == limit:
                    lines.append('... more in the report')
                    return lines
                subject = ' [%s]' % r['subject'] if r['subject'] else ''
                lines.append('%s %s %s%s: %s (fix: %s)' % (r['status'], where, r['id'], subject, r['reason'], r['fix']))
                shown += 1
    return lines
