# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_health filters: the role's variables and the checker's configuration (module_utils/health/node_health.py), the
packages and units it installs and starts (module_utils/health/node_health_services.py).

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.health import node_health
from ansible_collections.inferops.node.plugins.module_utils.health import node_health_services as services_plan


def _dict(value, name, what):
    if not isinstance(value, dict):
        raise AnsibleFilterError('%s: %s must be a dict, got %r' % (name, what, value))
    return value


def node_health_errors(settings):
    """Problems of the node_health_* variables given, one message each (empty list = valid)."""
    return node_health.errors(_dict(settings, 'node_health_errors', 'the input (node_health_* variables)'))


def node_health_config(expected, settings):
    """The checker's configuration from audit_host's ``expected`` and the role's variables."""
    return node_health.config(_dict(expected, 'node_health_config', "the input (audit_host's expected)"),
                              _dict(settings, 'node_health_config', 'settings (node_health_* variables)'))


def node_health_services(settings, read=None, changed_files=None, package_changed=False, check_mode=False):
    """The role's packages and units, and what a run must do about them after service_info's ``read``."""
    settings = _dict(settings, 'node_health_services', 'the input (node_health_* variables)')
    plan = dict(services_plan.services(settings))
    if read is not None:
        read = _dict(read, 'node_health_services', "read (service_info's result)")
        plan.update(services_plan.install(settings, read))
        plan['actions'] = services_plan.unit_actions(settings, read, changed_files, bool(package_changed),
                                                     bool(check_mode))
    return plan


class FilterModule(object):
    """node_health filters."""

    def filters(self):
        return {'node_health_errors': node_health_errors, 'node_health_config': node_health_config,
                'node_health_services': node_health_services}
