# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric namespace mounts: the entries M(inferops.node.xfs_mount) takes, from the namespaces' blkid probes.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.storage.blockdev import parse_export


def fabric_xfs_mounts(probes):
    """[{path, src: UUID=..., opts}] from registered ``blkid -p -o export`` results looped over mount plans.

    The source is the filesystem UUID, never the kernel's device name (nvme1n1 changes between boots).
    """
    entries = []
    for probe in probes or []:
        try:
            mount, output = probe['item'], probe['stdout']
        except (KeyError, TypeError):
            raise AnsibleFilterError('fabric_xfs_mounts: expects registered loop results with item and stdout, got %r'
                                     % (probe,))
        uuid = parse_export(output).get('UUID')
        if not uuid:
            raise AnsibleFilterError('fabric_xfs_mounts: %s (%s) has no filesystem UUID in its blkid output'
                                     % (mount.get('path'), mount.get('device')))
        entries.append({'path': mount['path'], 'src': 'UUID=' + uuid, 'opts': mount['opts']})
    return entries


class FilterModule(object):
    """Fabric mount filters."""

    def filters(self):
        return {'fabric_xfs_mounts': fabric_xfs_mounts}
