# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters docker_engine_* and module_utils/serving/docker_engine.py (the docker_engine role's rules)."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.docker_engine import FilterModule
from ansible_collections.inferops.node.plugins.module_utils.common import apt_policy
from ansible_collections.inferops.node.plugins.module_utils.serving import docker_engine
from ansible_collections.inferops.node.tests.unit.module_harness import fixture

PACKAGES = ['docker.io', 'docker-cli', 'docker-compose']
DEFAULTS = {
    'docker_engine_packages': PACKAGES,
    'docker_engine_live_restore': True,
    'docker_engine_log_driver': 'json-file',
    'docker_engine_log_max_size': '100m',
    'docker_engine_log_max_file': 5,
    'docker_engine_data_root': None,
    'docker_engine_storage_driver': None,
    'docker_engine_options': {},
}


@pytest.fixture
def filters():
    return FilterModule().filters()


def params(**changes):
    result = dict(DEFAULTS)
    result.update(('docker_engine_' + key, value) for key, value in changes.items())
    return result


def test_defaults_are_valid_and_render_rotation_and_live_restore(filters):
    assert filters['docker_engine_errors'](params()) == []
    assert filters['docker_engine_daemon_config'](params()) == {
        'log-driver': 'json-file',
        'log-opts': {'max-size': '100m', 'max-file': '5'},
        'live-restore': True,
    }


def test_journald_has_no_rotation_options_and_extra_keys_pass_through(filters):
    runtimes = {'nvidia': {'path': 'nvidia-container-runtime', 'runtimeArgs': []}}
    config = filters['docker_engine_daemon_config'](params(
        log_driver='journald', live_restore=False, data_root='/data/docker/', storage_driver='overlay2',
        options={'runtimes': runtimes, 'default-runtime': 'nvidia'}))
    assert config == {'log-driver': 'journald', 'live-restore': False, 'data-root': '/data/docker',
                      'storage-driver': 'overlay2', 'runtimes': runtimes, 'default-runtime': 'nvidia'}


def test_every_problem_names_variable_value_and_fix(filters):
    errors = filters['docker_engine_errors'](params(
        packages=['docker.io', 'Docker_CE', 'docker.io'], log_driver='syslog', log_max_size='100MB',
        log_max_file=0, data_root='var/lib/docker', storage_driver='overlay 2',
        options={'live-restore': False, 'log-opts': {}, 'default-runtime': 'nvidia'}))
    assert errors == [
        'docker_engine_packages[1] = "Docker_CE": not a Debian package name (lower case letters, digits, "+", "-", ".")',
        'docker_engine_packages[2] = "docker.io": listed twice; remove one',
        'docker_engine_log_driver = "syslog": must be one of json-file, local, journald',
        'docker_engine_log_max_size = "100MB": must be a size such as "100m" (a positive number with k, m or g)',
        'docker_engine_log_max_file = 0: must be a whole number of files, at least 1',
        'docker_engine_data_root = "var/lib/docker": must be an absolute directory path other than / '
        '(or null for /var/lib/docker)',
        'docker_engine_storage_driver = "overlay 2": must be a storage driver name such as "overlay2" (or null)',
        'docker_engine_options.live-restore = false: set by the role\'s own variable (docker_engine_live_restore); '
        'set that instead',
        'docker_engine_options.log-opts = {}: set by the role\'s own variable '
        '(docker_engine_log_max_size / docker_engine_log_max_file); set that instead',
    ]


@pytest.mark.parametrize('packages', [[], None, 'docker.io'])
def test_packages_must_be_a_non_empty_list(filters, packages):
    shown = {'[]': '[]', 'None': 'null', 'docker.io': '"docker.io"'}[str(packages)]
    assert filters['docker_engine_errors'](params(packages=packages)) == [
        'docker_engine_packages = %s: must be a non-empty list of Debian package names '
        '(e.g. [docker.io, docker-cli, docker-compose])' % shown]


def test_data_root_slash_and_bool_file_count_are_refused(filters):
    errors = filters['docker_engine_errors'](params(data_root='/', log_max_file=True))
    assert [e.split(':')[0] for e in errors] == ['docker_engine_log_max_file = true', 'docker_engine_data_root = "/"']


def test_daemon_config_refuses_invalid_input(filters):
    with pytest.raises(AnsibleFilterError, match='docker_engine_log_driver = "syslog"'):
        filters['docker_engine_daemon_config'](params(log_driver='syslog'))
    with pytest.raises(AnsibleFilterError, match='must be a dict'):
        filters['docker_engine_daemon_config'](['docker.io'])


def test_debian12_cannot_install_the_engine_for_compose_v2(filters):
    # Recorded: apt-cache policy docker.io docker-cli docker-compose on Debian 12 (fixtures/apt_policy/README.md).
    text = fixture('apt_policy', 'bookworm_docker.txt')
    assert apt_policy.parse_apt_policy(text) == {
        'docker.io': {'installed': None, 'candidate': '20.10.24+dfsg1-1+deb12u1+b6'},
        'docker-compose': {'installed': None, 'candidate': '1.29.2-3'},
    }
    assert filters['docker_engine_package_errors'](text, PACKAGES, 'node1') == [
        'docker_engine_packages[1] = "docker-cli": not installed and no installation candidate on node1 '
        '(apt-cache policy); name a package the host\'s sources have, or add the source (Debian 13 has docker.io, '
        'docker-cli and docker-compose)',
        'docker_engine_packages[2] = "docker-compose": candidate 1.29.2-3 on node1 is Compose v1; '
        'community.docker.docker_compose_v2 needs the Compose v2 CLI plugin (Debian 13\'s docker-compose 2.x, '
        'or docker-compose-plugin from Docker\'s repository)',
    ]
    # docker_engine_info's packages (the same output parsed on the host) say the same.
    assert filters['docker_engine_package_errors'](apt_policy.packages_report(PACKAGES, text), PACKAGES, 'node1') \
        == filters['docker_engine_package_errors'](text, PACKAGES, 'node1')
    # Without docker-compose and docker-cli, docker.io alone is installable there.
    assert filters['docker_engine_package_errors'](text, ['docker.io']) == []


def test_debian13_installs_the_engine(filters):
    # Recorded: the same command in a Debian 13 root with the three packages installed.
    text = fixture('apt_policy', 'trixie_docker_installed.txt')
    report = apt_policy.packages_report(PACKAGES, text)
    assert all(state['installed'] for state in report.values())
    assert report['docker-compose']['installed'].startswith('2.')
    assert filters['docker_engine_package_errors'](text, PACKAGES, 'node1') == []


def test_installed_compose_v1_with_epoch_is_refused():
    text = 'docker-compose:\n  Installed: 1:1.29.2-1\n  Candidate: 1:1.29.2-1\n'
    assert docker_engine.package_errors(['docker-compose'], text)[0].startswith(
        'docker_engine_packages[0] = "docker-compose": installed 1:1.29.2-1 on the host is Compose v1')


def test_package_errors_input_must_be_text(filters):
    with pytest.raises(AnsibleFilterError, match="apt-cache policy output or docker_engine_info's packages"):
        filters['docker_engine_package_errors'](None, PACKAGES)


# `docker info --format '{{json .}}'` in the serving_docker lab guest (Docker 26.1.5, json-file logging,
# live-restore; fixtures/docker_engine), and from a client whose daemon does not answer (Docker 28.2.2 on the
# lab build host: no ServerErrors field, the reason on standard error only).
INFO = json.loads(fixture('docker_engine', 'trixie_running_info.out'))
NO_DAEMON = json.loads(fixture('docker_engine', 'no_daemon_no_plugin_info.out'))


def test_verify_accepts_a_daemon_running_the_config(filters):
    config = filters['docker_engine_daemon_config'](params())
    assert filters['docker_engine_verify_errors'](INFO, config) == []
    config = filters['docker_engine_daemon_config'](params(data_root='/var/lib/docker', storage_driver='overlay2'))
    assert filters['docker_engine_verify_errors'](INFO, config) == []


def test_verify_names_each_setting_the_daemon_does_not_report(filters):
    config = filters['docker_engine_daemon_config'](params(log_driver='local', data_root='/data/docker'))
    stale = dict(INFO, LiveRestoreEnabled=False)
    config['live-restore'] = True
    assert filters['docker_engine_verify_errors'](stale, config) == [
        'docker info: LoggingDriver is "json-file", daemon.json says "local" (was the daemon restarted?)',
        'docker info: LiveRestoreEnabled is false, daemon.json says true (was the daemon restarted?)',
        'docker info: DockerRootDir is "/var/lib/docker", daemon.json says "/data/docker" (was the daemon restarted?)',
    ]


def test_verify_without_a_daemon(filters):
    config = filters['docker_engine_daemon_config'](params())
    assert filters['docker_engine_verify_errors'](NO_DAEMON, config) == ['docker info: no answer from the docker daemon']
    with pytest.raises(AnsibleFilterError, match='daemon.json dict'):
        filters['docker_engine_verify_errors'](INFO, None)
