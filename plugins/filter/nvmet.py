# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the kernel NVMe target (nvmet) rules the roles check on the controller.

``as_list``, ``as_dict`` and ``inventory_identities`` check a filter's input; the initiator's filters
(``nvme_fabrics.py``) use them too. The rules live in ``module_utils/fabric/nvmet.py`` (with the field rules of ``module_utils/storage/nvme_common.py``),
shared with the ``nvmet_subsystem`` module. The documentation of each filter lives next to this file
in ``<filter name>.yml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import whole_numbers


IDENTITY_FACT = 'nvmeof_initiator_host_identity'


def inventory_identities(name, value):
    """{host: {hostnqn, hostid}} from the play's ``hostvars`` (each host's identity fact) or from a dict
    of identities by host; hosts without a known identity are left out."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise AnsibleFilterError('%s: identities must be hostvars or a dict of identities by host, got %r' % (name, value))
    result = {}
    for host in list(value):
        ident = value[host]
        if isinstance(ident, Mapping) and 'hostnqn' not in ident:
            ident = ident[IDENTITY_FACT] if IDENTITY_FACT in ident else None
        if isinstance(ident, Mapping) and ident.get('hostnqn'):
            result[str(host)] = dict(ident)
    return result


def _bool(name, value, what):
    try:
        return boolean(False if value is None else value, strict=True)
    except TypeError as exc:
        raise AnsibleFilterError('%s: %s: %s' % (name, what, exc))


def as_list(name, value, what):
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise AnsibleFilterError('%s: %s must be a list, got %r' % (name, what, value))
    for item in value:
        if not isinstance(item, Mapping):
            raise AnsibleFilterError('%s: each entry of %s must be a dict, got %r' % (name, what, item))
    return [dict(item) for item in value]


def as_dict(name, value, what):
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise AnsibleFilterError('%s: %s must be a dict, got %r' % (name, what, value))
    return dict(value)


def _subsystems(name, value, variable='subsystems'):
    subsystems = as_list(name, value, variable)
    for index, sub in enumerate(subsystems):
        where = '%s[%d]' % (variable, index)
        for key in ('allow_any_host', 'allow_no_hosts'):
            sub[key] = _bool(name, sub.get(key), '%s.%s' % (where, key))
    return subsystems


def nvmet_allowed_hosts_errors(subsystem, variable, index, hosts=None):
    """The refusals for the allowed hosts of present subsystem ``variable[index]`` ([] when fine)."""
    if not isinstance(subsystem, Mapping):
        raise AnsibleFilterError('nvmet_allowed_hosts_errors: the input must be a subsystem (a dict), got %r' % (subsystem,))
    if isinstance(index, bool):
        raise AnsibleFilterError('nvmet_allowed_hosts_errors: index must be an integer, got %r' % (index,))
    try:
        index = int(index)
    except (TypeError, ValueError):
        raise AnsibleFilterError('nvmet_allowed_hosts_errors: index must be an integer, got %r' % (index,))
    entries = subsystem.get('allowed_hosts') or []
    if hosts is None:
        hosts = entries
    for value in (entries, hosts):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise AnsibleFilterError('nvmet_allowed_hosts_errors: the allowed hosts must be a list, got %r' % (value,))
    where = '%s[%d]' % (variable, index)
    name = 'nvmet_allowed_hosts_errors'
    return nvmet.allowed_hosts_errors(
        str(variable), index, subsystem.get('nqn'), list(hosts),
        allow_any_host=_bool(name, subsystem.get('allow_any_host'), where + '.allow_any_host'),
        allow_no_hosts=_bool(name, subsystem.get('allow_no_hosts'), where + '.allow_no_hosts'),
        entries=len(entries))


def nvmet_target_errors(subsystems, ports, identities=None, groups=None, settings=None, prefix='nvmeof_target_'):
    """Every refusal of a target's ports, subsystems and settings ([] when fine)."""
    name = 'nvmet_target_errors'
    return nvmet.target_errors(
        as_list(name, ports, prefix + 'ports'), _subsystems(name, subsystems, prefix + 'subsystems'),
        identities=inventory_identities(name, identities), groups=as_dict(name, groups, 'groups'),
        settings=whole_numbers(as_dict(name, settings, 'settings'), ('restore_timeout',)), prefix=prefix)


def nvmet_target_ports(ports):
    """The ports as inferops.node.nvmet_subsystem takes them."""
    return nvmet.target_ports(as_list('nvmet_target_ports', ports, 'ports'))


def nvmet_target_subsystems(subsystems, identities=None, groups=None):
    """The subsystems as inferops.node.nvmet_subsystem takes them, inventory hosts and groups resolved to host NQNs."""
    name = 'nvmet_target_subsystems'
    return nvmet.target_subsystems(_subsystems(name, subsystems), identities=inventory_identities(name, identities),
                                   groups=as_dict(name, groups, 'groups'))


class FilterModule(object):
    """nvmet filters."""

    def filters(self):
        return {
            'nvmet_allowed_hosts_errors': nvmet_allowed_hosts_errors,
            'nvmet_target_errors': nvmet_target_errors,
            'nvmet_target_ports': nvmet_target_ports,
            'nvmet_target_subsystems': nvmet_target_subsystems,
        }
