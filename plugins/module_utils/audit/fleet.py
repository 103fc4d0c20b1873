# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet checks that no single host can make, over every host's reads and results:

* ``firmware(host_reads)`` - per drive model, the firmware revision most drives run; every drive on another
  revision is named (WARN).
* ``temperature(host_reads, delta_c)`` - drives warmer than the fleet's median of their model by more than
  ``delta_c`` (WARN).
* ``group_outliers(host_results, groups)`` - per inventory group, the status most of its hosts have for each
  check and subject; a host that differs is named (WARN).

``host_reads`` is ``{host: reads}`` (the info modules' results by name), ``host_results`` is ``{host: [result]}``.
"""

from __future__ import annotations

import statistics

from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check

__all__ = ['CHECKS_DOC', 'firmware', 'group_outliers', 'temperature']


FIRMWARE = Check('fleet.firmware', 'Drive firmware revision is the fleet majority of its model', 'major',
                 '/sys/class/nvme/<ctrl>/firmware_rev of every host', 'firmware update to the majority revision '
                 '(or pin it in audit_nvme_firmware)')
TEMPERATURE = Check('fleet.temperature', 'Drive temperature is not an outlier among drives of its model', 'minor',
                    'nvme smart-log -o json of every host', 'check the airflow of the named slot')
GROUP = Check('fleet.group', 'Host checks agree with the other hosts of its group', 'minor',
              'the audit results of the group\'s hosts', 'converge the host with its group\'s playbook')
CHECKS_DOC = [FIRMWARE, TEMPERATURE, GROUP]


def _drives(host_reads):
    """``[(host, controller)]`` of every host whose nvme_health_info ran."""
    out = []
    for host in sorted(host_reads):
        result = (host_reads[host] or {}).get('nvme_health_info') or {}
        if result.get('failed') or result.get('skipped'):
            continue
        for ctrl in result.get('controllers') or []:
            out.append((host, ctrl))
    return out


def _name(host, ctrl):
    return '%s:%s (%s)' % (host, ctrl.get('serial'), ctrl.get('name'))


def _by_model(host_reads):
    models = {}
    for host, ctrl in _drives(host_reads):
        models.setdefault((ctrl.get('model') or '').strip(), []).append((host, ctrl))
    return models


def firmware(host_reads):
    results = []
    for model, drives in sorted(_by_model(host_reads).items()):
        counts = {}
        for host, ctrl in drives:
            counts.setdefault((ctrl.get('firmware') or '').strip(), []).append(_name(host, ctrl))
        # Majority; a tie goes to the higher revision string so that the result does not depend on order.
        majority = max(counts, key=lambda rev: (len(counts[rev]), rev))
        observed = dict((rev, len(names)) for rev, names in counts.items())
        outliers = [(rev, names) for rev, names in sorted(counts.items()) if rev != majority]
        if len(counts) == 1:
            results.append(FIRMWARE.passed(model, majority, observed, '%d drive(s), one revision' % len(drives)))
            continue
        for rev, names in outliers:
            results.append(FIRMWARE.warn(model, majority, observed, '%d drive(s) on %s where %d of %d run %s: %s' % (
                len(names), rev, len(counts[majority]), len(drives), majority, ', '.join(names))))
    return results


def temperature(host_reads, delta_c):
    results = []
    for model, drives in sorted(_by_model(host_reads).items()):
        temps = [(host, ctrl, ctrl['temperature_c']) for host, ctrl in drives if ctrl.get('temperature_c') is not None]
        if len(temps) < 3:
            results.append(TEMPERATURE.skip('%d drive(s) of %s report a temperature: too few to compare'
                                            % (len(temps), model), subject=model))
            continue
        median = statistics.median([t for dummy, dummy, t in temps])
        wanted = '<= %s C (median %s C + audit_fleet_temp_delta_c %s)' % (median + delta_c, median, delta_c)
        hot = ['%s %d C' % (_name(host, ctrl), t) for host, ctrl, t in temps if t > median + delta_c]
        observed = dict((_name(host, ctrl), t) for host, ctrl, t in temps)
        if hot:
            results.append(TEMPERATURE.warn(model, wanted, observed, 'warmer than the fleet: %s' % ', '.join(hot)))
        else:
            results.append(TEMPERATURE.passed(model, wanted, observed))
    return results


def _key(result):
    return '%s %s' % (result['id'], result['subject'] or '')


def group_outliers(host_results, groups):
    """``groups``: ``{group: [hosts]}``; groups with fewer than three audited hosts have no majority to compare."""
    results = []
    for group in sorted(groups):
        hosts = [h for h in groups[group] if h in host_results]
        if len(hosts) < 3:
            continue
        table = dict((h, dict((_key(r), r['status']) for r in host_results[h])) for h in hosts)
        keys = sorted(set(k for statuses in table.values() for k in statuses))
        differing = {}
        for key in keys:
            seen = {}
            for host in hosts:
                seen.setdefault(table[host].get(key, 'absent'), []).append(host)
            majority = max(seen, key=lambda status: (len(seen[status]), status))
            for status, names in seen.items():
                if status != majority:
                    for host in names:
                        differing.setdefault(host, []).append('%s: %s where the group has %s' % (key, status, majority))
        for host in hosts:
            if host in differing:
                results.append(GROUP.warn('%s in %s' % (host, group), 'as the group', len(differing[host]),
                                          '; '.join(differing[host])))
            else:
                results.append(GROUP.passed('%s in %s' % (host, group), 'as the group', 0))
    return results
