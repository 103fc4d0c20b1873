# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe over Fabrics host side: what the kernel has connected, read from sysfs.

Connection state comes from ``/sys/class/nvme/nvme*/{transport,address,subsysnqn,state,
hostnqn,hostid,queue_count,sqsize,ctrl_loss_tmo,reconnect_delay,kato}`` and
``/sys/class/nvme-subsystem/nvme-subsys*`` - never from nvme-cli's messages.

* ``controllers()`` - every fabrics controller with its attributes and subsystem.
* ``subsystems()`` - every NVMe subsystem: NQN, controllers, namespace block devices.
* ``matches(ctrl, conn)`` - whether a controller is the connection ``conn`` describes.
* ``expected_ctrl_loss_tmo(tmo, delay)`` - the value the kernel reports for a setting.
* ``parse_discovery(text)`` - records of ``nvme discover -o json``.
* ``device_in_use(kname)`` - mounts, swap, holders of a namespace block device.

Paths go through ``module_utils.sysfs`` so unit tests can point them at a recorded tree.
"""

from __future__ import annotations

import json
import re

from ansible_collections.inferops.node.plugins.module_utils import sysfs

__all__ = [
    'parse_address', 'controllers', 'subsystems', 'matches', 'expected_ctrl_loss_tmo',
    'parse_discovery', 'device_in_use', 'online_cpus', 'CONNECTED_STATES',
]

CLASS_NVME = '/sys/class/nvme'
CLASS_SUBSYS = '/sys/class/nvme-subsystem'
# A controller in one of these states exists for the kernel (it reconnects by itself while
# ctrl_loss_tmo lasts); "deleting" and "dead" ones are on their way out.
CONNECTED_STATES = ('live', 'connecting', 'resetting', 'new')

_CTRL_RE = re.compile(r'^nvme\d+$')
_NS_RE = re.compile(r'^nvme\d+n\d+$')
_PATH_RE = re.compile(r'^nvme\d+c\d+n\d+$')


def parse_address(text):
    """``traddr=10.0.0.1,trsvcid=4420,src_addr=10.0.0.2`` -> dict (empty for None)."""
    result = {}
    for part in (text or '').strip().split(','):
        if '=' in part:
            key, value = part.split('=', 1)
            result[key.strip()] = value.strip()
    return result


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _tmo(value):
    """ctrl_loss_tmo / fast_io_fail_tmo: an int, or -1 for ``off`` (forever)."""
    if value is None:
        return None
    if value.strip() == 'off':
        return -1
    return _int(value)


def controllers():
    """Every controller under /sys/class/nvme, fabrics or not, as dicts sorted by name."""
    owner = {}
    for subsys in sysfs.listdir(CLASS_SUBSYS):
        for entry in sysfs.listdir('%s/%s' % (CLASS_SUBSYS, subsys)):
            if _CTRL_RE.match(entry):
                owner[entry] = subsys
    result = []
    for name in sysfs.listdir(CLASS_NVME):
        if not _CTRL_RE.match(name):
            continue
        base = '%s/%s' % (CLASS_NVME, name)

        def attr(key, base=base):
            value = sysfs.read_attr('%s/%s' % (base, key))
            return value.strip() if value is not None else None

        transport = attr('transport')
        address = attr('address')
        queue_count = _int(attr('queue_count'))
        sqsize = _int(attr('sqsize'))
        paths = []
        for entry in sysfs.listdir(base):
            if _PATH_RE.match(entry):
                paths.append({'name': entry, 'ana_state': attr('%s/ana_state' % entry)})
        result.append({
            'name': name,
            'transport': transport,
            'address': address,
            'addr': parse_address(address),
            'subsysnqn': attr('subsysnqn'),
            'subsystem': owner.get(name),
            'state': attr('state'),
            'cntrltype': attr('cntrltype'),
            'hostnqn': attr('hostnqn'),
            'hostid': attr('hostid'),
            'cntlid': _int(attr('cntlid')),
            'queue_count': queue_count,
            'io_queues': queue_count - 1 if queue_count else None,
            'queue_size': sqsize + 1 if sqsize is not None else None,
            'ctrl_loss_tmo': _tmo(attr('ctrl_loss_tmo')),
            'reconnect_delay': _int(attr('reconnect_delay')),
            'keep_alive_tmo': _int(attr('kato')),
            'dhchap': sysfs.exists('%s/dhchap_secret' % base),
            'paths': paths,
        })
    return result


def _namespace(kname, parent):
    base = '%s/%s' % (parent, kname)
    size = _int(sysfs.read_attr('%s/size' % base))
    return {
        'name': kname,
        'device': '/dev/%s' % kname,
        'exists': sysfs.exists('/dev/%s' % kname),
        'nsid': _int(sysfs.read_attr('%s/nsid' % base)),
        'size_bytes': size * 512 if size is not None else None,
        'wwid': (sysfs.read_attr('%s/wwid' % base) or '').strip() or None,
        'read_ahead_kb': _int(sysfs.read_attr('%s/queue/read_ahead_kb' % base)),
    }


def subsystems(ctrls=None):
    """NVMe subsystems keyed by name (``nvme-subsys0``): nqn, controller names, namespaces.

    Namespaces are the block devices the host uses: the multipath heads under the subsystem
    (``nvme0n1``), or the per-controller namespaces when native multipath is off.
    """
    if ctrls is None:
        ctrls = controllers()
    result = {}
    for name in sysfs.listdir(CLASS_SUBSYS):
        base = '%s/%s' % (CLASS_SUBSYS, name)
        entries = sysfs.listdir(base)
        members = [e for e in entries if _CTRL_RE.match(e)]
        namespaces = [_namespace(e, base) for e in entries if _NS_RE.match(e)]
        if not namespaces:
            for ctrl in members:
                for entry in sysfs.listdir('%s/%s' % (CLASS_NVME, ctrl)):
                    if _NS_RE.match(entry):
                        namespaces.append(_namespace(entry, '%s/%s' % (CLASS_NVME, ctrl)))
        namespaces.sort(key=lambda ns: (ns['nsid'] or 0, ns['name']))
        result[name] = {
            'name': name,
            'nqn': (sysfs.read_attr('%s/subsysnqn' % base) or '').strip(),
            'controllers': members,
            'namespaces': namespaces,
        }
    return result


def matches(ctrl, conn):
    """Whether controller ``ctrl`` (from ``controllers()``) is connection ``conn``.

    ``conn`` holds the validated transport, traddr, trsvcid (None for fc), subnqn, hostnqn and
    the optional host_traddr / host_iface. A controller being deleted never matches.
    """
    if ctrl['state'] not in CONNECTED_STATES or ctrl['cntrltype'] == 'discovery':
        return False
    if ctrl['transport'] != conn['transport'] or ctrl['subsysnqn'] != conn['subnqn']:
        return False
    addr = ctrl['addr']
    if addr.get('traddr', '').lower() != conn['traddr'].lower():
        return False
    if conn.get('trsvcid') is not None and addr.get('trsvcid') != str(conn['trsvcid']):
        return False
    if conn.get('hostnqn') and ctrl.get('hostnqn') and ctrl['hostnqn'] != conn['hostnqn']:
        return False
    if conn.get('host_traddr') and addr.get('host_traddr') != conn['host_traddr']:
        return False
    if conn.get('host_iface') and addr.get('host_iface') != conn['host_iface']:
        return False
    return True


def expected_ctrl_loss_tmo(tmo, delay):
    """The ctrl_loss_tmo the kernel reports: it keeps ceil(tmo / delay) reconnect attempts.

    -1 (or any negative value) means reconnect forever, shown as ``off``.
    """
    if tmo is None:
        return None
    if tmo < 0:
        return -1
    if not delay:
        return tmo
    return -(-tmo // delay) * delay


def parse_discovery(text):
    """Records of ``nvme discover -o json`` (nvme-cli 2.x): list of dicts; ValueError if not JSON."""
    data = json.loads(text)
    records = data.get('records', []) if isinstance(data, dict) else []
    result = []
    for rec in records:
        result.append({
            'trtype': rec.get('trtype'),
            'adrfam': rec.get('adrfam'),
            'subtype': rec.get('subtype'),
            'treq': rec.get('treq'),
            'portid': rec.get('portid'),
            'trsvcid': rec.get('trsvcid'),
            'subnqn': rec.get('subnqn'),
            'traddr': rec.get('traddr'),
            'sectype': rec.get('sectype'),
        })
    return result


def _dev_numbers(kname):
    numbers = set()
    dev = sysfs.read_attr('/sys/class/block/%s/dev' % kname)
    if dev:
        numbers.add(dev.strip())
    for entry in sysfs.listdir('/sys/class/block/%s' % kname):
        if entry.startswith(kname) and entry != kname:
            part = sysfs.read_attr('/sys/class/block/%s/%s/dev' % (kname, entry))
            if part:
                numbers.add(part.strip())
    return numbers


def device_in_use(kname):
    """Reasons ``kname`` (or a partition of it) is in use: mount points, swap, holders."""
    reasons = []
    numbers = _dev_numbers(kname)
    mountinfo = sysfs.read_attr('/proc/self/mountinfo') or ''
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[2] in numbers:
            reasons.append('mounted on %s' % fields[4])
    swaps = sysfs.read_attr('/proc/swaps') or ''
    for line in swaps.splitlines()[1:]:
        fields = line.split()
        if fields and fields[0].startswith('/dev/%s' % kname):
            reasons.append('swap %s' % fields[0])
    for holder in sysfs.listdir('/sys/class/block/%s/holders' % kname):
        reasons.append('held by %s' % holder)
    return reasons


def online_cpus():
    """Number of online CPUs (from /sys/devices/system/cpu/online), None when unknown."""
    text = (sysfs.read_attr('/sys/devices/system/cpu/online') or '').strip()
    if not text:
        return None
    count = 0
    for part in text.split(','):
        if '-' in part:
            low, high = part.split('-', 1)
            count += int(high) - int(low) + 1
        elif part:
            count += 1
    return count
