# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""docker_engine_info on what the docker CLI and apt printed (fixtures/docker_engine, recorded by
record_docker_engine.sh; fixtures/apt_policy): Debian 13's engine running in the serving_docker lab guest,
a client with neither daemon nor Compose plugin, no CLI at all. Every command is asserted with its
environment (module_harness.Replay)."""

from __future__ import annotations

import pytest

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.modules import docker_engine_info
from ansible_collections.inferops.node.tests.unit.module_harness import Replay, fixture, run_module

PACKAGES = ['docker.io', 'docker-cli', 'docker-compose']
APT = ['apt-cache', 'policy'] + PACKAGES
VERSION = ['docker', 'version', '--format', '{{json .}}']
COMPOSE = ['docker', 'compose', 'version', '--format', 'json']
INFO = ['docker', 'info', '--format', '{{json .}}']


def recorded(case, name, command):
    """One replayed command: what record_docker_engine.sh kept of it for ``case``."""
    base = 'docker_engine/%s_%s' % (case, name)
    return {'command': command, 'out': '@%s.out' % base, 'err': '@%s.err' % base, 'rc': int(fixture(base + '.rc'))}


def engine_calls(case):
    return [recorded(case, 'version', VERSION), recorded(case, 'compose_version', COMPOSE), recorded(case, 'info', INFO)]


def run(monkeypatch, calls, args=None, check_mode=False, docker_on_path=True):
    replay = Replay(monkeypatch, calls)
    if not docker_on_path:
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path',
                            lambda mod, arg, required=False, opt_dirs=None: None if arg == 'docker' else arg)
    failed, result = run_module(docker_engine_info.main, args or {}, check_mode=check_mode)
    replay.done()
    assert result.get('changed') is False
    return failed, result


@pytest.mark.parametrize('check_mode', [False, True])
def test_running_engine_of_the_trixie_guest(monkeypatch, check_mode):
    failed, result = run(monkeypatch, engine_calls('trixie_running'), check_mode=check_mode)
    assert not failed, result
    assert result['cli'] == {'installed': True, 'version': '26.1.5+dfsg1', 'api_version': '1.45'}
    assert result['server'] == {'running': True, 'version': '26.1.5+dfsg1', 'api_version': '1.45', 'error': None}
    assert result['compose'] == {'installed': True, 'version': '2.26.1-4', 'v2': True, 'error': None}
    assert result['info_error'] is None
    assert result['info']['ServerVersion'] == '26.1.5+dfsg1'
    assert (result['info']['LoggingDriver'], result['info']['LiveRestoreEnabled']) == ('json-file', True)
    assert result['info']['CgroupDriver'] == 'systemd'
    assert result['packages'] == {}
    assert [entry['argv'] for entry in result['command_log']] == [VERSION, COMPOSE, INFO]


def test_client_without_daemon_or_compose_plugin(monkeypatch):
    failed, result = run(monkeypatch, engine_calls('no_daemon_no_plugin'))
    assert not failed, result
    assert result['cli'] == {'installed': True, 'version': '28.2.2', 'api_version': '1.50'}
    refused = 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?'
    assert result['server'] == {'running': False, 'version': None, 'api_version': None, 'error': refused}
    # Without the plugin the CLI reads "compose" as an unknown word and refuses --format.
    assert result['compose']['installed'] is False and result['compose']['v2'] is False
    assert result['compose']['error'] == 'unknown flag: --format'
    assert result['info_error'] == refused
    assert not result['info'].get('ServerVersion')


def test_host_without_the_docker_cli_runs_nothing(monkeypatch):
    failed, result = run(monkeypatch, [], docker_on_path=False)
    assert not failed, result
    assert result['cli']['installed'] is False and result['server']['running'] is False
    assert result['compose']['installed'] is False and result['info'] == {}
    assert result['server']['error'] == 'no docker CLI on the host'
    assert result['command_log'] == []


def test_packages_only_before_the_engine_is_installed(monkeypatch):
    calls = [{'command': APT, 'out': '@apt_policy/bookworm_docker.txt'}]
    failed, result = run(monkeypatch, calls, {'packages': PACKAGES, 'engine': False})
    assert not failed, result
    # Debian 12: docker.io 20.10 and Compose v1 are candidates, docker-cli is unknown to apt.
    assert result['packages']['docker.io']['installed'] is None
    assert result['packages']['docker.io']['candidate'].startswith('20.10')
    assert result['packages']['docker-compose']['candidate'].startswith('1.29')
    assert result['packages']['docker-cli'] is None
    assert result['missing'] == PACKAGES  # what apt would install
    assert 'server' not in result and 'compose' not in result and 'service' not in result


def test_packages_and_engine_in_one_call(monkeypatch):
    calls = [{'command': APT, 'out': '@apt_policy/trixie_docker_installed.txt'}] + engine_calls('trixie_running')
    failed, result = run(monkeypatch, calls, {'packages': PACKAGES})
    assert not failed, result
    assert set(result['packages']) == set(PACKAGES)
    assert result['packages']['docker-compose']['installed'] == '2.26.1-4'
    assert result['missing'] == []
    assert result['server']['running'] is True


SHOW = ['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState']


@pytest.mark.parametrize('case, unit, expected', [
    ('trixie_running_service', 'docker.service', {'enabled': 'enabled', 'active': 'active', 'load': 'loaded'}),
    ('trixie_running_service_unknown', 'no-such-engine.service',
     {'enabled': 'not-found', 'active': 'inactive', 'load': 'not-found'}),
])
def test_the_engine_service_as_systemd_sees_it(monkeypatch, case, unit, expected):
    calls = engine_calls('trixie_running') + [recorded('trixie_running', case.replace('trixie_running_', ''), SHOW + [unit])]
    failed, result = run(monkeypatch, calls, {'service': unit})
    assert not failed, result
    assert result['service'] == expected
