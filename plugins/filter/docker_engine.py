# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""docker_engine filters: the role's input, the host's packages, daemon.json and the running
daemon, the rules of module_utils/serving/docker_engine.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.serving.docker_engine import (
    daemon_config, input_errors, package_errors, verify_errors)


def _params(value, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError('%s: the input must be a dict of docker_engine_* variables, got %r' % (name, value))
    return value


def docker_engine_errors(value):
    """Problems of the role's variables, one message each (empty list = valid)."""
    return input_errors(_params(value, 'docker_engine_errors'))


def docker_engine_daemon_config(value):
    """The daemon.json document for the role's (valid) variables."""
    params = _params(value, 'docker_engine_daemon_config')
    errors = input_errors(params)
    if errors:
        raise AnsibleFilterError('docker_engine_daemon_config: invalid input: %s' % '; '.join(errors))
    return daemon_config(params)


def docker_engine_package_errors(value, packages, host='the host'):
    """Problems of installing the named packages, from the host's `apt-cache policy` output or
    docker_engine_info's ``packages``."""
    if not isinstance(value, (str, dict)):
        raise AnsibleFilterError('docker_engine_package_errors: the input must be apt-cache policy output or '
                                 'docker_engine_info\'s packages, got %r' % (value,))
    return package_errors(packages, value, host)


def docker_engine_verify_errors(value, config):
    """What the running daemon reports (docker info as JSON) against the daemon.json written."""
    if not isinstance(config, dict):
        raise AnsibleFilterError('docker_engine_verify_errors: config must be the daemon.json dict, got %r' % (config,))
    return verify_errors(config, value)


class FilterModule(object):
    """docker_engine filters."""

    def filters(self):
        return {
            'docker_engine_errors': docker_engine_errors,
            'docker_engine_daemon_config': docker_engine_daemon_config,
            'docker_engine_package_errors': docker_engine_package_errors,
            'docker_engine_verify_errors': docker_engine_verify_errors,
        }
