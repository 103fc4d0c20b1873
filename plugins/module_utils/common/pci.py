# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI functions as sysfs shows them (``/sys/bus/pci/devices/<address>``): the reads the NVMe, IRQ and NIC
code share.

* ``ADDRESS`` - a full PCI address (domain:bus:device.function, lower case), as sysfs names a function;
* ``function_of(path)`` - the PCI function a device hangs off: the deepest PCI address in the path its sysfs
  ``device`` link resolves to (a virtio NIC's ``virtioN`` sits below its function); None for a virtual device;
* ``driver(path)`` - the driver bound to the device at ``path`` (None when none is);
* ``numa_node(address)`` - the function's NUMA node (None when the firmware does not tell: -1);
* ``msi_irqs(address)`` - its MSI/MSI-X IRQ numbers;
* ``link(address)`` / ``parse_link_speed(text)`` - its PCIe link speed and width, current and maximum.

Paths go through ``module_utils.sysfs``. No Ansible imports (standard library and siblings, imported
relatively): the irq_affinity and nic_queues roles install this file for their boot-time scripts.
"""

from __future__ import annotations

import os
import re

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from . import sysfs

__all__ = ['ADDRESS', 'DEVICES', 'function_of', 'driver', 'numa_node', 'msi_irqs', 'link', 'parse_link_speed']

ADDRESS = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')
DEVICES = '/sys/bus/pci/devices'
_SPEED_RE = re.compile(r'^(\d+(?:\.\d+)?)\s*GT/s')


def function_of(path):
    """The address of the PCI function the device at sysfs ``path`` (a ``device`` link) hangs off, or None."""
    if not sysfs.exists(path):
        return None
    found = None
    for part in sysfs.realpath(path).split('/'):
        if ADDRESS.match(part):
            found = part
    return found


def driver(path):
    """The name of the driver bound to the device at sysfs ``path``, or None."""
    if not sysfs.exists(path + '/driver'):
        return None
    return os.path.basename(sysfs.realpath(path + '/driver'))


def numa_node(address):
    """The NUMA node of PCI function ``address``; None when the file is missing or says -1."""
    node = sysfs.read_int('%s/%s/numa_node' % (DEVICES, address))
    return node if node is not None and node >= 0 else None


def msi_irqs(address):
    """The MSI/MSI-X IRQ numbers of PCI function ``address``, sorted (empty without any)."""
    return sorted(int(irq) for irq in sysfs.listdir('%s/%s/msi_irqs' % (DEVICES, address)) if irq.isdigit())


def parse_link_speed(text):
    """``16.0 GT/s PCIe`` -> 16.0; None for ``Unknown``, an empty or a missing value."""
    found = _SPEED_RE.match((text or '').strip())
    return float(found.group(1)) if found else None


def link(address):
    """The PCIe link of PCI function ``address``: ``current_speed`` / ``max_speed`` (the kernel's text, e.g.
    ``16.0 GT/s PCIe``), ``current_gts`` / ``max_gts`` (GT/s as a number), ``current_width`` /
    ``max_width`` (lanes), ``downgraded`` (trained below what both ends can do). A value the kernel does
    not know (``Unknown``, width 0 or 255 on an emulated device, file missing) is None."""
    base = '%s/%s/' % (DEVICES, address)
    result = {}
    for which in ('current', 'max'):
        speed = (sysfs.read_attr(base + '%s_link_speed' % which) or '').strip() or None
        result['%s_gts' % which] = parse_link_speed(speed)
        result['%s_speed' % which] = speed if result['%s_gts' % which] is not None else None
        width = sysfs.read_int(base + '%s_link_width' % which)
        result['%s_width' % which] = width if width is not None and 1 <= width <= 32 else None
    known = None not in (result['current_gts'], result['max_gts'], result['current_width'], result['max_width'])
    result['downgraded'] = (result['current_gts'] < result['max_gts'] or
                            result['current_width'] < result['max_width']) if known else None
    return result
