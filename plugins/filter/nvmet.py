# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the kernel NVMe target (nvmet) rules the roles check on the controller.

The rules live in ``module_utils/nvmet.py``, shared with the ``nvmet_subsystem`` module.
The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.nvmet import allowed_hosts_errors


def _bool(value, what):
    try:
        return boolean(value, strict=True)
    except TypeError as exc:
        raise AnsibleFilterError('nvmet_allowed_hosts_errors: %s: %s' % (what, exc))


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
    allow_any = subsystem.get('allow_any_host')
    allow_none = subsystem.get('allow_no_hosts')
    return allowed_hosts_errors(
        str(variable), index, subsystem.get('nqn'), list(hosts),
        allow_any_host=_bool(False if allow_any is None else allow_any, where + '.allow_any_host'),
        allow_no_hosts=_bool(False if allow_none is None else allow_none, where + '.allow_no_hosts'),
        entries=len(entries))


class FilterModule(object):
    """nvmet filters."""

    def filters(self):
        return {
            'nvmet_allowed_hosts_errors': nvmet_allowed_hosts_errors,
        }
