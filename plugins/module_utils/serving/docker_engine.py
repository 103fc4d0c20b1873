# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The docker_engine role's rules: its input, the packages a host can install, the
daemon.json it writes, and what the running daemon must report afterwards.

Used on the controller through plugins/filter/docker_engine.py (the role's validation,
hence the preflight, and the rendered daemon.json).
"""

from __future__ import annotations

import json
import re

from ansible_collections.inferops.node.plugins.module_utils.common.apt_policy import parse_apt_policy
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import as_int

# daemon.json keys the role's own variables own; docker_engine_options may not set them.
MANAGED_KEYS = ('log-driver', 'log-opts', 'live-restore', 'data-root', 'storage-driver')
LOG_DRIVERS = ('json-file', 'local', 'journald')
# The drivers that rotate their own files (max-size / max-file).
ROTATING_DRIVERS = ('json-file', 'local')
PACKAGE_RE = re.compile(r'^[a-z0-9][a-z0-9+.-]+$')
# docker's size units for log-opts max-size (go-units RAMInBytes: k, m, g, with optional b).
SIZE_RE = re.compile(r'^[1-9][0-9]*[kmg]?$')
STORAGE_DRIVER_RE = re.compile(r'^[a-z0-9][a-z0-9_.-]*$')
COMPOSE_PACKAGE = 'docker-compose'


def _shown(value):
    return json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def input_errors(params):
    """Problems of the role's variables (names as in argument_specs), one message each."""
    errors = []

    def bad(name, value, problem):
        errors.append('%s = %s: %s' % (name, _shown(value), problem))

    packages = params.get('docker_engine_packages')
    if not isinstance(packages, list) or not packages:
        bad('docker_engine_packages', packages, 'must be a non-empty list of Debian package names '
            '(e.g. [docker.io, docker-cli, docker-compose])')
    else:
        seen = set()
        for index, name in enumerate(packages):
            if not isinstance(name, str) or not PACKAGE_RE.match(name):
                bad('docker_engine_packages[%d]' % index, name, 'not a Debian package name '
                    '(lower case letters, digits, "+", "-", ".")')
            elif name in seen:
                bad('docker_engine_packages[%d]' % index, name, 'listed twice; remove one')
            seen.add(name)

    driver = params.get('docker_engine_log_driver')
    if driver not in LOG_DRIVERS:
        bad('docker_engine_log_driver', driver, 'must be one of %s' % ', '.join(LOG_DRIVERS))
    size = params.get('docker_engine_log_max_size')
    if not isinstance(size, str) or not SIZE_RE.match(size):
        bad('docker_engine_log_max_size', size, 'must be a size such as "100m" (a positive number with k, m or g)')
    files = as_int(params.get('docker_engine_log_max_file'))
    if isinstance(files, bool) or not isinstance(files, int) or files < 1:
        bad('docker_engine_log_max_file', params.get('docker_engine_log_max_file'),
            'must be a whole number of files, at least 1')

    data_root = params.get('docker_engine_data_root')
    if data_root is not None and (not isinstance(data_root, str) or not data_root.startswith('/')
                                  or data_root.rstrip('/') == ''):
        bad('docker_engine_data_root', data_root, 'must be an absolute directory path other than / '
            '(or null for /var/lib/docker)')
    storage = params.get('docker_engine_storage_driver')
    if storage is not None and (not isinstance(storage, str) or not STORAGE_DRIVER_RE.match(storage)):
        bad('docker_engine_storage_driver', storage, 'must be a storage driver name such as "overlay2" (or null)')

    options = params.get('docker_engine_options')
    if not isinstance(options, dict):
        bad('docker_engine_options', options, 'must be a dict of further daemon.json keys')
    else:
        for key in sorted(options, key=str):
            if not isinstance(key, str) or not key:
                bad('docker_engine_options', key, 'keys must be daemon.json option names')
            elif key in MANAGED_KEYS:
                bad('docker_engine_options.%s' % key, options[key], 'set by the role\'s own variable (%s); '
                    'set that instead' % _variable_of(key))
    return errors


def _variable_of(key):
    return {
        'log-driver': 'docker_engine_log_driver',
        'log-opts': 'docker_engine_log_max_size / docker_engine_log_max_file',
        'live-restore': 'docker_engine_live_restore',
        'data-root': 'docker_engine_data_root',
        'storage-driver': 'docker_engine_storage_driver',
    }[key]


def daemon_config(params):
    """The daemon.json document for valid input (keys sorted when rendered)."""
    config = {
        'log-driver': params['docker_engine_log_driver'],
        'live-restore': bool(params['docker_engine_live_restore']),
    }
    if params['docker_engine_log_driver'] in ROTATING_DRIVERS:
        # daemon.json wants strings for log-opts values.
        config['log-opts'] = {
            'max-size': params['docker_engine_log_max_size'],
            'max-file': str(params['docker_engine_log_max_file']),
        }
    if params.get('docker_engine_data_root'):
        config['data-root'] = params['docker_engine_data_root'].rstrip('/')
    if params.get('docker_engine_storage_driver'):
        config['storage-driver'] = params['docker_engine_storage_driver']
    for key, value in (params.get('docker_engine_options') or {}).items():
        config[key] = value
    return config


def _major(version):
    """The upstream major version of a Debian version string (epoch dropped), or None."""
    match = re.match(r'^(?:[0-9]+:)?([0-9]+)', version or '')
    return int(match.group(1)) if match else None


def package_errors(packages, policy, host='the host'):
    """Problems of installing the named packages on a host, from its `apt-cache policy` output or that
    output parsed (docker_engine_info's ``packages``: {name: {installed, candidate} or None})."""
    if isinstance(policy, str):
        policy = parse_apt_policy(policy)
    errors = []
    for index, name in enumerate(packages or []):
        state = policy.get(name)
        prefix = 'docker_engine_packages[%d] = %s' % (index, _shown(name))
        if state is None or (state['installed'] is None and state['candidate'] is None):
            errors.append('%s: not installed and no installation candidate on %s (apt-cache policy); '
                          'name a package the host\'s sources have, or add the source (Debian 13 has docker.io, '
                          'docker-cli and docker-compose)' % (prefix, host))
            continue
        version = state['installed'] or state['candidate']
        if name == COMPOSE_PACKAGE and (_major(version) or 0) < 2:
            errors.append('%s: %s %s on %s is Compose v1; community.docker.docker_compose_v2 needs the Compose v2 '
                          'CLI plugin (Debian 13\'s docker-compose 2.x, or docker-compose-plugin from Docker\'s '
                          'repository)' % (prefix, 'installed' if state['installed'] else 'candidate', version, host))
    return errors


def verify_errors(config, info):
    """What the running daemon (`docker info --format '{{json .}}'`) reports against the config written."""
    errors = []
    if not isinstance(info, dict) or not info.get('ServerVersion'):
        # The reason is in ServerErrors where the client fills it; docker 28 prints it on standard error only
        # (docker_engine_info's info_error, which the role's message adds).
        reason = info.get('ServerErrors') if isinstance(info, dict) else info
        return ['docker info: no answer from the docker daemon' + (' (%s)' % _shown(reason) if reason else '')]

    def differs(what, want, got):
        errors.append('docker info: %s is %s, daemon.json says %s (was the daemon restarted?)'
                      % (what, _shown(got), _shown(want)))

    if info.get('LoggingDriver') != config['log-driver']:
        differs('LoggingDriver', config['log-driver'], info.get('LoggingDriver'))
    if bool(info.get('LiveRestoreEnabled')) != config['live-restore']:
        differs('LiveRestoreEnabled', config['live-restore'], info.get('LiveRestoreEnabled'))
    if config.get('data-root') and info.get('DockerRootDir') != config['data-root']:
        differs('DockerRootDir', config['data-root'], info.get('DockerRootDir'))
    if config.get('storage-driver') and info.get('Driver') != config['storage-driver']:
        differs('Driver', config['storage-driver'], info.get('Driver'))
    return errors
