# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which IRQs belong to a device named by a stable identity - the device selectors of the IRQ rules.

Kernel names (``nvme0``, ``md127``) and IRQ numbers are handed out anew at every boot; a drive's serial,
its ``/dev/disk/by-id`` link, a PCI address and an md array's name are not. A rule selecting by
identity is resolved, at the time it is applied, identity -> PCI function -> that function's MSI/MSI-X
vectors (``/sys/bus/pci/devices/<address>/msi_irqs``):

* ``serial`` - the NVMe controller reporting that serial (``/sys/class/nvme/*/serial``);
* ``by_id`` - the block device a ``/dev/disk/by-id`` link points at (an NVMe namespace or a partition
  of one) -> its controller -> the PCI function;
* ``pci_address`` - the PCI function itself (any device with MSI vectors: NVMe, NIC, ...);
* ``md_array`` - the running array ``/dev/md/<name>`` -> its members (``/sys/block/mdX/slaves``) -> the
  PCI function of each.

``identity_table()`` reads the host once into a JSON-able dict (what ``irq_info`` returns as
``identities``); ``resolve(kind, value, table)`` works on that dict only, so the module, the boot-time
script (both on the host) and the controller-side filter (on ``irq_info``'s result) resolve with the
same code. The NVMe controllers and namespaces are read by ``nvme_devices`` (the reads of ``nvme_info``),
not here. No Ansible imports, only the standard library and siblings (imported relatively): the
irq_affinity and nic_queues roles install this file with ``irq.py``, ``nvme_devices.py``, ``pci.py`` and
what those import for their boot-time scripts.
"""

from __future__ import annotations

import os

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from ..common import pci, sysfs
from ..storage import blockdev, nvme_devices

__all__ = ['KINDS', 'BY_ID', 'pci_functions', 'identity_table', 'resolve', 'value_problem']

# The selector keys of a rule, in the order the messages list them.
KINDS = ('serial', 'by_id', 'pci_address', 'md_array')
BY_ID = '/dev/disk/by-id/'


def pci_functions():
    """Every PCI function with MSI/MSI-X vectors: address -> ``{'driver', 'numa_node', 'irqs'}`` (``numa_node``
    None when the firmware does not tell, -1)."""
    functions = {}
    for address in sysfs.listdir(pci.DEVICES):
        irqs = pci.msi_irqs(address)
        if irqs:
            functions[address] = {'driver': pci.driver('%s/%s' % (pci.DEVICES, address)),
                                  'numa_node': pci.numa_node(address), 'irqs': irqs}
    return functions


def identity_table():
    """The host's identities, as ``resolve`` takes them:

    ``pci`` - address -> ``{'driver', 'irqs'}`` for every PCI function with MSI vectors; ``nvme`` -
    controller -> ``{'serial', 'model', 'pci_address'}``; ``block`` - block device -> ``{'pci_address',
    'controller'}`` for NVMe namespaces and their partitions; ``by_id`` - link -> block device;
    ``md`` - array name -> ``{'device', 'members'}`` (``/dev/md/<name>``, its slaves).

    The NVMe side is ``nvme_devices`` (what ``nvme_info`` reports): controllers with their identity and
    PCI address, and the namespace -> controller walk."""
    pci = dict((address, {'driver': fn['driver'], 'irqs': fn['irqs']}) for address, fn in pci_functions().items())
    ctrls = nvme_devices.controllers()
    nvme = dict((c['name'], {'serial': c['serial'], 'model': c['model'], 'pci_address': c['pci_address']})
                for c in ctrls)
    block = {}
    for kname, names in nvme_devices.namespace_controllers(ctrls).items():
        # A native-multipath head lists every controller of its subsystem: the first local (PCIe) one
        # stands for it; a fabrics controller has no IRQs of its own.
        local = [name for name in names if nvme[name]['pci_address']]
        if local:
            for dev in [kname] + blockdev.partitions(kname):
                block[dev] = {'controller': local[0], 'pci_address': nvme[local[0]]['pci_address']}
    by_id = {}
    for entry in sysfs.listdir('/dev/disk/by-id'):
        target = os.path.basename(sysfs.realpath(BY_ID + entry))
        if target in block:
            by_id[BY_ID + entry] = target
    md = {}
    for name in sysfs.listdir('/dev/md'):
        kname = os.path.basename(sysfs.realpath('/dev/md/%s' % name))
        md[name] = {'device': kname, 'members': sysfs.listdir('/sys/block/%s/slaves' % kname)}
    return {'pci': pci, 'nvme': nvme, 'block': block, 'by_id': by_id, 'md': md}


def value_problem(kind, value):
    """Why ``value`` cannot be a ``kind`` selector value (without looking at a host), or None."""
    if not isinstance(value, str) or not value.strip():
        return 'must be a non-empty string'
    if kind == 'by_id' and not value.startswith(BY_ID):
        return 'must be a path under %s (ls -l %s)' % (BY_ID, BY_ID)
    if kind == 'pci_address' and not pci.ADDRESS.match(value):
        return 'must be a full PCI address in lower case, such as 0000:41:00.0 (ls /sys/bus/pci/devices)'
    return None


def _device(table, kind, value, address, controller=None, block=None):
    ctrl = (table.get('nvme') or {}).get(controller) or {}
    return {'kind': kind, 'value': value, 'pci_address': address, 'controller': controller,
            'serial': ctrl.get('serial'), 'model': ctrl.get('model'), 'block': block,
            'irqs': list(((table.get('pci') or {}).get(address) or {}).get('irqs') or [])}


def _block_device(table, kind, value, kname):
    entry = (table.get('block') or {}).get(kname)
    if not entry or not entry.get('pci_address'):
        return None
    return _device(table, kind, value, entry['pci_address'], entry['controller'], kname)


def resolve(kind, value, table):
    """``(devices, problem)``: the PCI functions selector ``kind`` = ``value`` names on the host of
    ``table`` (``identity_table``), each ``{'kind', 'value', 'pci_address', 'controller', 'serial',
    'model', 'block', 'irqs'}``, or a problem saying what is missing on the host and how to find the
    right value (``devices`` empty). A function without MSI vectors is a problem too."""
    devices = []
    if kind == 'serial':
        ctrls = sorted(name for name, ctrl in (table.get('nvme') or {}).items() if ctrl.get('serial') == value)
        if not ctrls:
            known = sorted(c.get('serial') for c in (table.get('nvme') or {}).values() if c.get('serial'))
            return [], 'no NVMe controller with this serial on the host (serials: %s; cat /sys/class/nvme/*/serial)' % (
                ', '.join(known) or 'none')
        devices = [_device(table, kind, value, table['nvme'][c]['pci_address'], c) for c in ctrls
                   if table['nvme'][c]['pci_address']]
        if not devices:
            return [], 'the controller (%s) is not a PCI function (a fabrics controller has no IRQs of its own)' % ', '.join(ctrls)
    elif kind == 'by_id':
        kname = (table.get('by_id') or {}).get(value)
        device = _block_device(table, kind, value, kname) if kname else None
        if device is None:
            return [], 'no such link to a local NVMe namespace on the host (ls -l %s)' % BY_ID
        devices = [device]
    elif kind == 'pci_address':
        if value not in (table.get('pci') or {}):
            return [], 'no PCI function with MSI/MSI-X IRQs at this address (ls /sys/bus/pci/devices/*/msi_irqs)'
        devices = [_device(table, kind, value, value)]
    elif kind == 'md_array':
        array = (table.get('md') or {}).get(value)
        if array is None:
            return [], ('no running md array of this name (/dev/md/%s); an array the same run creates is not there '
                        'yet - select its drives by by_id or serial instead' % value)
        members = array.get('members') or []
        if not members:
            return [], 'md array %s (%s) has no member drives' % (value, array.get('device'))
        for kname in members:
            device = _block_device(table, kind, value, kname)
            if device is None:
                return [], 'member %s of md array %s is not a local NVMe drive' % (kname, value)
            devices.append(device)
    else:
        return [], 'unknown selector kind %s (known: %s)' % (kind, ', '.join(KINDS))
    empty = [d['pci_address'] for d in devices if not d['irqs']]
    if empty:
        return [], 'PCI function %s has no MSI/MSI-X IRQs' % ', '.join(empty)
    return devices, None
