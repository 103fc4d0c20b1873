# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the NVMe over Fabrics host (initiator) rules the nvmeof_initiator role applies on the controller.

The rules live in ``module_utils/fabric/nvme_fabrics.py`` (with the field rules of ``module_utils/storage/nvme_common.py``),
shared with the ``nvme_connect`` module. The documentation of each filter lives next to this file in
``<filter name>.yml``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.nvmet import as_dict, as_list, inventory_identities
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import as_int, whole_numbers


def nvme_fabrics_errors(connections, mounts=None, settings=None, prefix='nvmeof_initiator_'):
    """Every refusal of an initiator's connections, mounts and settings ([] when fine)."""
    name = 'nvme_fabrics_errors'
    return nvme_fabrics.initiator_errors(as_list(name, connections, prefix + 'connections'),
                                         as_list(name, mounts, prefix + 'mounts'),
                                         whole_numbers(as_dict(name, settings, 'settings'), nvme_fabrics.NUMBER_SETTINGS), prefix=prefix)


def nvme_fabrics_connections(connections, identity, defaults=None):
    """The connections as inferops.node.nvme_connect takes them (defaults and host identity filled in)."""
    name = 'nvme_fabrics_connections'
    identity = as_dict(name, identity, 'identity')
    if not identity.get('hostnqn') or not identity.get('hostid'):
        raise AnsibleFilterError('%s: identity must hold hostnqn and hostid, got %r' % (name, identity))
    return nvme_fabrics.initiator_connections(as_list(name, connections, 'connections'), identity,
                                              whole_numbers(as_dict(name, defaults, 'defaults'), nvme_fabrics.NUMBER_SETTINGS))


def nvme_fabrics_host_identity(lines, hostnqn=None, hostid=None):
    """{hostnqn, hostid, hostnqn_source} from the lines [host NQN file, host ID file, nvme gen-hostnqn]."""
    name = 'nvme_fabrics_host_identity'
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Sequence):
        raise AnsibleFilterError('%s: expects a list of lines, got %r' % (name, lines))
    lines = [str(line) for line in lines] + [''] * 3
    return nvme_fabrics.host_identity(lines[0], lines[1], lines[2], hostnqn=hostnqn or None, hostid=hostid or None)


def nvme_fabrics_identity_errors(identity, identities=None):
    """What is wrong with a host's identity, duplicates across ``identities`` included ([] when fine)."""
    name = 'nvme_fabrics_identity_errors'
    return nvme_fabrics.identity_errors(as_dict(name, identity, 'identity'), inventory_identities(name, identities))


def nvme_fabrics_mount_plan(mounts, connections, boot_timeout=None):
    """The mounts resolved against nvme_connect's connections: block device and mount options."""
    name = 'nvme_fabrics_mount_plan'
    boot_timeout = as_int(boot_timeout)
    if boot_timeout is not None and (isinstance(boot_timeout, bool) or not isinstance(boot_timeout, int)):
        raise AnsibleFilterError('%s: boot_timeout must be an integer (seconds), got %r' % (name, boot_timeout))
    return nvme_fabrics.mount_plan(as_list(name, mounts, 'mounts'), as_list(name, connections, 'connections'), boot_timeout)


def nvme_fabrics_mount_filesystems(plan, devices):
    """The mount plan checked against what blockdev_info read on the namespaces: {errors, mounts}."""
    name = 'nvme_fabrics_mount_filesystems'
    return nvme_fabrics.mount_filesystems(as_list(name, plan, 'plan'), as_list(name, devices, 'devices'))


class FilterModule(object):
    """NVMe-oF host filters."""

    def filters(self):
        return {
            'nvme_fabrics_errors': nvme_fabrics_errors,
            'nvme_fabrics_connections': nvme_fabrics_connections,
            'nvme_fabrics_host_identity': nvme_fabrics_host_identity,
            'nvme_fabrics_identity_errors': nvme_fabrics_identity_errors,
            'nvme_fabrics_mount_filesystems': nvme_fabrics_mount_filesystems,
            'nvme_fabrics_mount_plan': nvme_fabrics_mount_plan,
        }
