# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe controllers and namespaces as the host shows them in sysfs - local PCIe and fabrics alike.

* ``controllers()`` - ``nvme_fabrics.controllers()`` (transport, address, subsystem, state, queues) with
  the identity (model, serial, firmware), NUMA node, and for PCIe the PCI address, driver and link;
* ``namespace_controllers(ctrls)`` - which controllers each namespace block device belongs to (the walk
  ``namespaces`` and the IRQ device selectors of ``irq_devices`` share, without the identity and queue reads);
* ``namespaces(ctrls)`` - every NVMe namespace block device (``nvme<c>n<n>``; the hidden per-path
  devices ``nvme<s>c<c>n<n>`` of native multipath are left out) with its controllers, identity (its
  controller's), ``nvme_fabrics.namespace`` fields, ``/dev/disk/by-id`` links and request queue
  (``blockdev.queue_settings``);

Sysfs only, no command: every field is there without nvme-cli (``nvme list -v -o json`` shows the same
identity, which the unit tests compare). Paths go through ``module_utils.sysfs``.

No Ansible imports (standard library and siblings, imported relatively): the irq_affinity and nic_queues
roles install this file, with ``nvme_fabrics.py``, ``blockdev.py`` and ``pci.py``, for their boot-time scripts
(``irq_devices.py`` reads the NVMe drives through it).
"""

from __future__ import annotations

import os
import re

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from . import blockdev
from ..common import pci, sysfs
from ..fabric import nvme_fabrics

__all__ = ['controllers', 'namespace_controllers', 'namespaces']

_NS_RE = re.compile(r'^nvme\d+n\d+$')


def _node(path):
    node = sysfs.read_int(path)
    return node if node is not None and node >= 0 else None


def controllers():
    """Every NVMe controller (``/sys/class/nvme``), sorted by name: the keys of
    ``nvme_fabrics.controllers()`` plus ``model``, ``serial``, ``firmware``, ``numa_node`` and, for
    transport pcie, ``pci_address``, ``driver`` and ``pci_link`` (``pci.link``); None elsewhere."""
    result = []
    for ctrl in nvme_fabrics.controllers():
        base = '/sys/class/nvme/%s' % ctrl['name']
        pcie = ctrl['transport'] == 'pcie'
        address = ctrl['address'] if pcie else None
        entry = dict(ctrl)
        entry.update(blockdev.device_identity(base))
        entry.update(
            numa_node=_node(base + '/numa_node'), pci_address=address, driver=pci.driver(base + '/device') if pcie else None,
            pci_link=pci.link(address) if address else None,
            namespaces=[],
        )
        result.append(entry)
    return result


def _kname_key(name):
    return [int(part) for part in re.findall(r'\d+', name)]


def namespace_controllers(ctrls=None):
    """Namespace block device -> the names of its controllers (``controllers()``), sorted by controller and
    namespace number: the controller it hangs off, or for a native-multipath head (whose ``device`` is the
    subsystem) every controller of that subsystem (its paths), in name order. A namespace none of ``ctrls``
    owns maps to an empty list."""
    if ctrls is None:
        ctrls = controllers()
    names = set(c['name'] for c in ctrls)
    result = {}
    for kname in sorted((n for n in sysfs.listdir('/sys/class/block') if _NS_RE.match(n)), key=_kname_key):
        # The namespace's directory sits in its parent device's: the controller, or for a
        # native-multipath head the subsystem (what its ``device`` link names, one read less).
        parent = os.path.basename(os.path.dirname(sysfs.realpath('/sys/class/block/%s' % kname)))
        if parent in names:
            result[kname] = [parent]
        else:
            result[kname] = [c['name'] for c in ctrls if c['subsystem'] and c['subsystem'] == parent]
    return result


def namespaces(ctrls=None):
    """Every NVMe namespace block device, sorted by controller and namespace number.

    Keys: ``name``, ``device``, ``nsid``, ``size_bytes``, ``wwid``, ``controllers`` (names; several for
    a multipath head), ``model``, ``serial``, ``firmware``, ``transport``, ``pci_address`` (first
    controller), ``numa_node``, ``by_id`` (the ``<model>_<serial>`` link), ``by_id_all``, ``holders``
    (md/dm devices on it) and ``queue`` (``blockdev.queue_settings``). ``ctrls`` (``controllers()``)
    get the names of their namespaces in ``namespaces``.
    """
    if ctrls is None:
        ctrls = controllers()
    by_name = dict((c['name'], c) for c in ctrls)
    result = []
    for kname, names in namespace_controllers(ctrls).items():
        for name in names:
            by_name[name]['namespaces'].append(kname)
        first = by_name[names[0]] if names else {}
        ns = nvme_fabrics.namespace(kname)
        ids = blockdev.by_id_paths(kname)
        entry = {
            'name': kname, 'device': ns['device'], 'nsid': ns['nsid'], 'size_bytes': ns['size_bytes'],
            'wwid': ns['wwid'], 'controllers': names,
            'transport': first.get('transport'), 'pci_address': first.get('pci_address'),
            'numa_node': first.get('numa_node'),
            # The identity of the controller, read once above (a multipath head's subsystem shows the same).
            'model': first.get('model'), 'serial': first.get('serial'), 'firmware': first.get('firmware'),
            'by_id': ids[0] if ids else None, 'by_id_all': ids,
            'holders': blockdev.holders(kname),
            'queue': blockdev.queue_settings(kname),
        }
        result.append(entry)
    return result
