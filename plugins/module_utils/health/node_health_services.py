# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the node_health role installs, enables and starts, decided from one reading of the host.

The role reads its packages and units once (module service_info), writes its files in one managed_files run,
and then runs apt, debconf and systemd only for what this plan lists - on a converged node nothing.

* ``services(settings)`` - ``{'packages': [...], 'units': [...]}`` the role reads (by its variables).
* ``install(settings, read)`` - ``{'apt': [packages to install], 'debconf': bool}``: sysstat's debconf answer is
  set when sysstat is installed by this run or one of its units is not enabled (its package scripts enable or
  disable the units after that answer, also on every upgrade).
* ``unit_actions(settings, read, changed_files, package_changed, check_mode)`` - the systemd_service calls, in
  order: a daemon reload when a unit file or drop-in changed; each unit enabled and started when it is not,
  restarted when its configuration changed under it; then the check itself when its package, configuration or
  service changed.
"""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean

__all__ = ['EXPORTER_DEFAULTS', 'SYSSTAT_DROPIN', 'services', 'install', 'unit_actions']

EXPORTER_PACKAGE = 'prometheus-node-exporter'
EXPORTER_UNIT = 'prometheus-node-exporter.service'
# Debian's unit runs `prometheus-node-exporter $ARGS` with this file as its EnvironmentFile.
EXPORTER_DEFAULTS = '/etc/default/prometheus-node-exporter'
CHECK_SERVICE = 'inferops-node-health.service'
CHECK_TIMER = 'inferops-node-health.timer'
SYSSTAT_PACKAGE = 'sysstat'
SYSSTAT_UNITS = ('sysstat.service', 'sysstat-collect.timer', 'sysstat-summary.timer')
SYSSTAT_DROPIN = '/etc/systemd/system/sysstat-collect.timer.d/inferops.conf'
UNIT_FILES = ('/etc/systemd/system/%s' % CHECK_SERVICE, '/etc/systemd/system/%s' % CHECK_TIMER, SYSSTAT_DROPIN)
# What the check runs with: a change to one runs the check at once (the role's vars name the same paths).
CHECK_FILES = ('/etc/inferops/node-health.json', UNIT_FILES[0])
# A changed file restarts the unit that reads it.
RESTARTED_BY = {EXPORTER_UNIT: EXPORTER_DEFAULTS, CHECK_TIMER: UNIT_FILES[1], 'sysstat-collect.timer': SYSSTAT_DROPIN}


def _exporter(settings):
    return settings['node_health_node_exporter'] == 'install'


def _sysstat(settings):
    return boolean(settings['node_health_sysstat'], strict=False)


def services(settings):
    packages = ([EXPORTER_PACKAGE] if _exporter(settings) else []) + ([SYSSTAT_PACKAGE] if _sysstat(settings) else [])
    units = (([EXPORTER_UNIT] if _exporter(settings) else []) + [CHECK_TIMER]
             + (list(SYSSTAT_UNITS) if _sysstat(settings) else []))
    return {'packages': packages, 'units': units}


def install(settings, read):
    missing = list(read.get('missing') or [])
    units = read.get('units') or {}
    debconf = _sysstat(settings) and (SYSSTAT_PACKAGE in missing
                                      or any((units.get(unit) or {}).get('enabled') != 'enabled' for unit in SYSSTAT_UNITS))
    return {'apt': missing, 'debconf': bool(debconf)}


def unit_actions(settings, read, changed_files, package_changed, check_mode):
    changed = set(changed_files or [])
    units = read.get('units') or {}
    actions = []
    if changed & set(UNIT_FILES):
        actions.append({'daemon_reload': True})
    for unit in services(settings)['units']:
        state = units.get(unit) or {}
        # In check mode a unit that only this run would install or write cannot be asked about.
        if check_mode and state.get('load') != 'loaded':
            continue
        # Restarted whenever its file changed, also when the reading is from before this run installed it: the
        # package's scripts started it with the file it shipped.
        restart = RESTARTED_BY.get(unit) in changed
        if restart or state.get('active') != 'active' or state.get('enabled') != 'enabled':
            actions.append({'name': unit, 'enabled': True, 'state': 'restarted' if restart else 'started'})
    # A oneshot: `systemctl restart` runs it and returns when the run has ended (verify reads its file next).
    # Not `started`: the timer restarted just above may have started a run already, and `started` returns at
    # once for a unit that is activating.
    if (package_changed or changed & set(CHECK_FILES)) and not check_mode:
        actions.append({'name': CHECK_SERVICE, 'state': 'restarted'})
    return actions
