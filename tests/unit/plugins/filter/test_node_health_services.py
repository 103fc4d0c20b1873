# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""service_info on what apt and systemd printed (fixtures/service_info, README there): the node_health role's
packages and units on a Debian 12 lab guest after the role converged, and apt on a Debian 12 host that has neither
package; then what the role plans from those readings (module_utils/health/node_health_services.py)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins.filter.node_health import node_health_services
from ansible_collections.inferops.node.plugins.modules import service_info
from ansible_collections.inferops.node.tests.unit.module_harness import Replay, run_module

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
with open(os.path.join(ROOT, 'roles', 'node_health', 'defaults', 'main.yml'), encoding='utf-8') as _handle:
    DEFAULTS = yaml.safe_load(_handle)
PACKAGES = ['prometheus-node-exporter', 'sysstat']
UNITS = ['prometheus-node-exporter.service', 'inferops-node-health.timer', 'sysstat.service', 'sysstat-collect.timer',
         'sysstat-summary.timer']
POLICY = ['apt-cache', 'policy'] + PACKAGES
SHOW = ['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState'] + UNITS


def read(monkeypatch, policy, units, check_mode=False):
    replay = Replay(monkeypatch, [{'command': POLICY, 'out': '@service_info/' + policy},
                                  {'command': SHOW, 'out': '@service_info/' + units}])
    failed, result = run_module(service_info.main, {'packages': PACKAGES, 'units': UNITS}, check_mode=check_mode)
    replay.done()
    assert not failed, result
    assert result['changed'] is False
    return result


@pytest.mark.parametrize('check_mode', [False, True])
def test_converged_guest(monkeypatch, check_mode):
    result = read(monkeypatch, 'policy_installed.txt', 'units_converged.txt', check_mode)
    assert result['packages'] == {'prometheus-node-exporter': {'installed': '1.5.0-1+b6', 'candidate': '1.5.0-1+b6'},
                                  'sysstat': {'installed': '12.6.1-1', 'candidate': '12.6.1-1'}}
    assert result['missing'] == []
    assert result['units'] == dict((unit, {'enabled': 'enabled', 'active': 'active', 'load': 'loaded'}) for unit in UNITS)
    # The role's plan from it: nothing to install, answer or start.
    plan = node_health_services(DEFAULTS, result, [], False, check_mode)
    assert (plan['packages'], plan['units']) == (PACKAGES, UNITS)
    assert (plan['apt'], plan['debconf'], plan['actions']) == ([], False, [])


def test_converged_guest_with_a_changed_interval(monkeypatch):
    result = read(monkeypatch, 'policy_installed.txt', 'units_converged.txt')
    changed = ['/etc/systemd/system/inferops-node-health.timer', '/etc/inferops/node-health.json']
    assert node_health_services(DEFAULTS, result, changed, False)['actions'] == [
        {'daemon_reload': True},
        {'name': 'inferops-node-health.timer', 'enabled': True, 'state': 'restarted'},
        {'name': 'inferops-node-health.service', 'state': 'restarted'},
    ]
    # A new checker package runs the check, nothing else.
    assert node_health_services(DEFAULTS, result, [], True)['actions'] == [
        {'name': 'inferops-node-health.service', 'state': 'restarted'}]
    # node_exporter's ARGS and sysstat's interval restart their own units only (the check does not run).
    changed = ['/etc/default/prometheus-node-exporter', '/etc/systemd/system/sysstat-collect.timer.d/inferops.conf']
    assert node_health_services(DEFAULTS, result, changed, False)['actions'] == [
        {'daemon_reload': True},
        {'name': 'prometheus-node-exporter.service', 'enabled': True, 'state': 'restarted'},
        {'name': 'sysstat-collect.timer', 'enabled': True, 'state': 'restarted'},
    ]


def test_host_without_the_packages(monkeypatch):
    replay = Replay(monkeypatch, [{'command': POLICY, 'out': '@service_info/policy_bookworm_none.txt'}])
    failed, result = run_module(service_info.main, {'packages': PACKAGES})
    replay.done()
    assert not failed, result
    assert result['missing'] == PACKAGES
    assert result['packages']['sysstat'] == {'installed': None, 'candidate': '12.6.1-1'}
    assert result['units'] == {}
    plan = node_health_services(DEFAULTS, result, [], False)
    assert (plan['apt'], plan['debconf']) == (PACKAGES, True)


def test_existing_exporter_without_sysstat():
    settings = dict(DEFAULTS, node_health_node_exporter='existing', node_health_sysstat='false')
    assert node_health_services(settings) == {'packages': [], 'units': ['inferops-node-health.timer']}


def test_apt_failure_is_reported(monkeypatch):
    replay = Replay(monkeypatch, [{'command': ['apt-cache', 'policy', 'sysstat'], 'rc': 100,
                                   'err': 'E: Could not open lock file /var/lib/dpkg/lock'}])
    failed, result = run_module(service_info.main, {'packages': ['sysstat']})
    replay.done()
    assert failed
    assert result['msg'] == ('service_info: apt-cache policy sysstat failed (rc 100): '
                             'E: Could not open lock file /var/lib/dpkg/lock')


@pytest.mark.parametrize('check_mode', [False, True])
def test_fresh_trixie_guest(monkeypatch, check_mode):
    """What the role did on serving_docker's guest: install both, answer debconf, start everything, run the check."""
    result = read(monkeypatch, 'policy_trixie_local_source.txt', 'units_trixie_fresh.txt', check_mode)
    assert result['missing'] == PACKAGES
    assert set(state['load'] for state in result['units'].values()) == {'not-found'}
    written = ['/etc/inferops/node-health.json', '/etc/systemd/system/inferops-node-health.service',
               '/etc/systemd/system/inferops-node-health.timer', '/etc/default/prometheus-node-exporter',
               '/etc/systemd/system/sysstat-collect.timer.d/inferops.conf']
    plan = node_health_services(DEFAULTS, result, written, True, check_mode)
    assert (plan['apt'], plan['debconf']) == (PACKAGES, True)
    if check_mode:
        # Nothing is installed yet: no unit to ask about, and no check to run.
        assert plan['actions'] == [{'daemon_reload': True}]
        return
    assert plan['actions'] == [
        {'daemon_reload': True},
        {'name': 'prometheus-node-exporter.service', 'enabled': True, 'state': 'restarted'},
        {'name': 'inferops-node-health.timer', 'enabled': True, 'state': 'restarted'},
        {'name': 'sysstat.service', 'enabled': True, 'state': 'started'},
        {'name': 'sysstat-collect.timer', 'enabled': True, 'state': 'restarted'},
        {'name': 'sysstat-summary.timer', 'enabled': True, 'state': 'started'},
        {'name': 'inferops-node-health.service', 'state': 'restarted'},
    ]
