# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC queues: which interface, which CPUs per receive/transmit queue, and the NIC's queue IRQs.

The one implementation behind the ``nic_queues`` module, the ``nic_info`` module, the
``nic_queues_errors`` filter (the role's and the preflight's checks) and the ``nic_queues`` role's
boot-time script:

* ``interfaces`` / ``interface`` - what ``/sys/class/net`` tells about each interface: MAC, PCI
  address (of the PCI function above the netdev: a virtio NIC's ``virtioN`` sits below it), driver,
  NUMA node, rx/tx queues with their ``rps_cpus`` / ``xps_cpus`` masks, and the MSI(-X) vectors of
  its PCI function with their names, affinity and the queue they serve (``queue_of_irq``);
* ``input_errors`` / ``select`` - validate the wanted interfaces (one of ``name``, ``mac``,
  ``pci_address``; ``cpu_groups``), without and with the host; messages name
  ``<prefix>[i].<key>``, the value and the fix;
* ``plan`` - per queue the CPUs and the mask to write: queues are split over the CPU groups in
  contiguous blocks (the first Q/G queues to the first group, ...), a receive queue's RPS mask is
  its whole group, a transmit queue's XPS mask its share of the group (each CPU of the group
  transmits on one queue of the group), and the queue's IRQ goes to that queue's CPU;
* ``apply`` - write the masks (``sysfs.write_attr``, read back), and the IRQs through
  ``irq.plan`` / ``irq.apply`` (kernel-managed vectors are reported, not errors);
* ``irqbalance_ban`` - tell a running irqbalance to leave the pinned vectors alone (its socket's
  ``settings ban irqs``, ``irqbalance_socket`` waits for a daemon still starting to open it):
  irqbalance re-places every IRQ it balances within seconds, pins included, and the ban lives as
  long as the daemon (the role's unit re-runs when irqbalance restarts).

No Ansible imports, only the standard library and sibling files (imported relatively): the
nic_queues role installs them in the zip application ``/usr/local/lib/inferops-nic-queues.pyz``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import socket
import struct
import time

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from . import irq
from ..common import pci
from ..common import sysfs
from ..common.cpulist import CpuListError, cpulist_to_mask, format_cpulist, mask_to_cpus, to_cpus

__all__ = [
    'NicError', 'SELECTORS', 'NET', 'normalize_mac', 'normalize_pci', 'queue_of_irq', 'nr_cpu_ids',
    'interfaces', 'interface', 'input_errors', 'select', 'plan', 'irq_plan', 'apply', 'changed',
    'irqbalance_ban', 'irqbalance_socket', 'irqbalance_pids', 'IRQBALANCE_SOCKET', 'IRQBALANCE_WAIT',
]

NET = '/sys/class/net'
SELECTORS = ('name', 'mac', 'pci_address')
KEYS = SELECTORS + ('cpu_groups', 'rps', 'xps', 'irqs')
POSSIBLE = '/sys/devices/system/cpu/possible'
MAC_RE = re.compile(r'^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$')
PCI_RE = re.compile(r'^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$')
IFNAME_RE = re.compile(r'^[^/:\s]{1,15}$')
# The queue a NIC vector serves, from its action name (after any "@pci:..." suffix is cut):
# virtio "virtio2-input.0" / "virtio2-output.0", Intel "ens1f0-TxRx-3", mlx5 "mlx5_comp3",
# bnx2x/qede "fp-3", "eth0-rx-0" / "eth0-tx-0". Vectors without a queue number (virtio "config",
# "mlx5_async0", link/misc vectors) serve no queue and are left alone.
QUEUE_IRQ = re.compile(r'(?:^|[-_.])(?P<kind>input|output|txrx|rx|tx|comp|fp|queue)[-_.]?(?P<queue>\d+)$', re.I)
KIND_DIRECTION = {'input': 'rx', 'rx': 'rx', 'output': 'tx', 'tx': 'tx'}


class NicError(Exception):
    """Invalid input or unreadable host state; the message names the entry, the value and the fix."""


def _shown(value):
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def normalize_mac(value):
    """Lower-case ``aa:bb:cc:dd:ee:ff`` (``-`` separators accepted), or None when it is not a MAC."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace('-', ':')
    return text if MAC_RE.match(text) else None


def normalize_pci(value):
    """``0000:41:00.0`` (domain added when left out), or None when it is not a PCI address."""
    if not isinstance(value, str):
        return None
    match = PCI_RE.match(value.strip().lower())
    if not match:
        return None
    return '%s:%s:%s.%s' % (match.group(1) or '0000', match.group(2), match.group(3), match.group(4))


def queue_of_irq(name):
    """``(direction, queue)`` of a NIC vector from its name: direction ``rx``, ``tx`` or ``both``
    (a combined vector serving rx and tx queue N); ``(None, None)`` when it serves no queue."""
    first = (name or '').split(',')[0].strip().split('@')[0]
    match = QUEUE_IRQ.search(first)
    if not match:
        return None, None
    return KIND_DIRECTION.get(match.group('kind').lower(), 'both'), int(match.group('queue'))


def nr_cpu_ids():
    """The kernel's ``nr_cpu_ids`` (highest possible CPU + 1): the width of the masks it prints."""
    try:
        possible = to_cpus(sysfs.read_attr(POSSIBLE) or '')
    except CpuListError:
        possible = []
    return possible[-1] + 1 if possible else None


# ---------------------------------------------------------------- reading

def _mask(path):
    """``(mask as read, cpulist)``; ``(None, None)`` when the attribute is missing or unreadable
    (a kernel without CONFIG_RPS / CONFIG_XPS, or a single-queue device's xps_cpus)."""
    text = sysfs.read_attr(path)
    if text is None:
        return None, None
    try:
        return text.strip(), format_cpulist(mask_to_cpus(text.strip()))
    except CpuListError:
        return text.strip(), None


def _irqs(pci_address, labels):
    """The MSI(-X) vectors of ``pci_address``: irq, name, direction, queue, affinity."""
    if not pci_address:
        return []
    result = []
    for number in pci.msi_irqs(pci_address):
        name = irq.irq_name(number, labels.get(number))
        direction, queue = queue_of_irq(name)
        result.append({
            'irq': number, 'name': name, 'direction': direction, 'queue': queue, **irq.affinity(number),
        })
    return result


def _queue_number(entry):
    return int(entry.split('-', 1)[1]) if re.match(r'^[rt]x-\d+$', entry) else None


def interface(name, labels=None):
    """What sysfs tells about interface ``name`` (see ``interfaces``); None when it does not exist."""
    base = '%s/%s' % (NET, name)
    if not sysfs.isdir(base):
        return None
    labels = labels if labels is not None else _labels()
    # The PCI function above the netdev (a virtio NIC's virtioN sits below it); None for a virtual one.
    pci_address = pci.function_of(base + '/device')
    rx, tx = [], []
    entries = sysfs.listdir(base + '/queues')
    for entry in sorted(entries, key=lambda e: (e[:2], _queue_number(e) or 0)):
        number = _queue_number(entry)
        if number is None:
            continue
        qbase = '%s/queues/%s' % (base, entry)
        if entry.startswith('rx-'):
            mask, cpus = _mask(qbase + '/rps_cpus')
            rx.append({'queue': number, 'rps_cpus': mask, 'rps_cpulist': cpus,
                       'rps_flow_cnt': sysfs.read_int(qbase + '/rps_flow_cnt')})
        else:
            mask, cpus = _mask(qbase + '/xps_cpus')
            tx.append({'queue': number, 'xps_cpus': mask, 'xps_cpulist': cpus,
                       'tx_maxrate': sysfs.read_int(qbase + '/tx_maxrate')})
    address = sysfs.read_attr(base + '/address')
    return {
        'name': name, 'mac': (address or '').strip().lower() or None, 'pci_address': pci_address,
        'driver': pci.driver(base + '/device'), 'numa_node': pci.numa_node(pci_address) if pci_address else None,
        'operstate': (sysfs.read_attr(base + '/operstate') or '').strip() or None,
        'mtu': sysfs.read_int(base + '/mtu'), 'speed_mbps': sysfs.read_int(base + '/speed'),
        'rx_queues': len(rx), 'tx_queues': len(tx), 'rx': rx, 'tx': tx,
        'irqs': _irqs(pci_address, labels),
    }


def _labels():
    """IRQ number -> label of /proc/interrupts (kernels without /sys/kernel/irq/N/actions)."""
    return dict((entry['irq'], entry['label']) for entry in irq.parse_interrupts(sysfs.read_attr('/proc/interrupts') or ''))


def interfaces(names=None):
    """Every interface of ``/sys/class/net`` (or those of ``names``), in name order: ``name``,
    ``mac``, ``pci_address`` (None for virtual ones), ``driver``, ``numa_node``, ``operstate``,
    ``mtu``, ``speed_mbps``, ``rx_queues`` / ``tx_queues`` (counts), ``rx`` (``queue``,
    ``rps_cpus`` mask, ``rps_cpulist``, ``rps_flow_cnt``), ``tx`` (``queue``, ``xps_cpus``,
    ``xps_cpulist``, ``tx_maxrate``) and ``irqs`` (``irq``, ``name``, ``direction``, ``queue``,
    ``smp_affinity_list``, ``effective_affinity_list``)."""
    labels = _labels()
    result = []
    for name in sysfs.listdir(NET):
        if names is not None and name not in names:
            continue
        info = interface(name, labels)
        if info is not None:
            result.append(info)
    return result


# ---------------------------------------------------------------- input

def _boolean(value):
    """True/False for what Ansible's boolean conversion takes (true, "yes", "on", 1, ...), None otherwise."""
    if isinstance(value, bool):
        return value
    text = ('%s' % (value,)).strip().lower() if isinstance(value, (str, int, float)) else None
    if text in ('y', 'yes', 'on', '1', 'true', 't', '1.0'):
        return True
    if text in ('n', 'no', 'off', '0', 'false', 'f', '0.0'):
        return False
    return None


def _groups_problem(value, online):
    """(list of CPU lists, None) or (None, problem) for ``cpu_groups``."""
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        return None, 'must be a non-empty list of CPU lists, one per serving instance (e.g. ["0-31", "32-63"])'
    groups = []
    for position, group in enumerate(value):
        try:
            cpus = to_cpus(group)
        except CpuListError as exc:
            return None, 'group %d (%s) is not a valid CPU list: %s (kernel cpulist syntax, e.g. 0-31 or 0-15:2/4)' % (
                position, _shown(group), exc)
        if not cpus:
            return None, 'group %d is empty' % position
        offline = irq.not_online(cpus, online) if online is not None else []
        if offline:
            return None, 'group %d has CPU(s) %s that are not online (online: %s)' % (
                position, format_cpulist(offline), format_cpulist(online))
        groups.append(cpus)
    return groups, None


def _entry_problems(entry, index, prefix, default_groups, online):
    """(normalized entry or None, [messages])."""
    where = '%s[%d]' % (prefix, index)
    if not isinstance(entry, dict):
        return None, ['%s = %s: must be a mapping with one of name, mac, pci_address' % (where, _shown(entry))]
    problems = ['%s: unknown key %s (known: %s)' % (where, _shown(key), ', '.join(KEYS))
                for key in sorted(entry, key=str) if key not in KEYS]
    given = [key for key in SELECTORS if entry.get(key) not in (None, '')]
    if len(given) != 1:
        problems.append('%s: give exactly one of name, mac, pci_address to choose the interface (given: %s)' % (
            where, ', '.join(given) or 'none'))
    selector = given[0] if len(given) == 1 else None
    value = entry.get(selector) if selector else None
    if selector == 'mac':
        value = normalize_mac(entry['mac'])
        if value is None:
            problems.append('%s.mac = %s: not a MAC address (aa:bb:cc:dd:ee:ff, as `ip link` shows it)' % (
                where, _shown(entry['mac'])))
    elif selector == 'pci_address':
        value = normalize_pci(entry['pci_address'])
        if value is None:
            problems.append('%s.pci_address = %s: not a PCI address (0000:41:00.0, as `ethtool -i <if>` shows '
                            'in bus-info)' % (where, _shown(entry['pci_address'])))
    elif selector == 'name' and (not isinstance(value, str) or not IFNAME_RE.match(value)):
        problems.append('%s.name = %s: not an interface name (1-15 characters, no "/", ":" or blanks)' % (
            where, _shown(value)))
    groups_value = entry.get('cpu_groups')
    source = '%s.cpu_groups' % where
    if groups_value is None:
        groups_value, source = default_groups, None
    groups = None
    if groups_value is None:
        problems.append('%s.cpu_groups: required (or the top-level CPU groups), the CPU lists of the serving '
                        'instances' % where)
    else:
        groups, problem = _groups_problem(groups_value, online)
        if problem:
            problems.append('%s = %s: %s' % (source or 'cpu_groups', _shown(groups_value), problem))
    switches = {}
    for key in ('rps', 'xps', 'irqs'):
        switches[key] = _boolean(entry.get(key, True))
        if switches[key] is None:
            problems.append('%s.%s = %s: must be true or false' % (where, key, _shown(entry.get(key))))
    if problems:
        return None, problems
    return dict(index=index, selector=selector, value=value, groups=groups, **switches), []


def input_errors(entries, prefix='interfaces', cpu_groups=None, online=None):
    """Every problem of ``entries`` without looking at the interfaces (empty when valid): a list of
    mappings with exactly one of ``name``, ``mac``, ``pci_address``, ``cpu_groups`` (else the top-level
    ``cpu_groups``) a non-empty list of CPU lists - online ones, given ``online`` - and booleans
    ``rps``, ``xps``, ``irqs``. Messages name ``<prefix>[i].<key>``, the value and the fix."""
    if not isinstance(entries, list):
        return ['%s = %s: must be a list of {name|mac|pci_address, cpu_groups}' % (prefix, _shown(entries))]
    errors = []
    for index, entry in enumerate(entries):
        errors.extend(_entry_problems(entry, index, prefix, cpu_groups, online)[1])
    return errors


def select(entries, prefix='interfaces', cpu_groups=None, online=None, host=None):
    """``(wanted, errors)``: every valid entry resolved against the host's interfaces (``host``: the
    list ``interfaces()`` returns, read when None) - ``{'index', 'selector', 'value', 'groups', 'rps',
    'xps', 'irqs', 'interface'}`` - and every problem, input and host (the selector matches no
    interface, several, or an interface already chosen by another entry; the interface has no
    queues)."""
    errors = input_errors(entries, prefix, cpu_groups, online)
    if errors:
        return [], errors
    host = interfaces() if host is None else host
    wanted, taken = [], {}
    for index, entry in enumerate(entries):
        item = _entry_problems(entry, index, prefix, cpu_groups, online)[0]
        where = '%s[%d].%s = %s' % (prefix, index, item['selector'], _shown(entry[item['selector']]))
        found = [info for info in host if info.get(item['selector']) == item['value']]
        if not found:
            known = ', '.join('%s (mac %s, pci %s)' % (i['name'], i['mac'], i['pci_address'] or '-')
                              for i in host if i['name'] != 'lo') or 'none'
            errors.append('%s: no interface on this host has this %s (interfaces: %s)' % (
                where, item['selector'].replace('_', ' '), known))
            continue
        if len(found) > 1:
            errors.append('%s: matches %d interfaces (%s); choose one by name' % (
                where, len(found), ', '.join(i['name'] for i in found)))
            continue
        info = found[0]
        if info['name'] in taken:
            errors.append('%s: is %s, already chosen by %s[%d]; list each interface once' % (
                where, info['name'], prefix, taken[info['name']]))
            continue
        if not info['rx'] and not info['tx']:
            errors.append('%s: %s has no rx/tx queues in %s/%s/queues' % (where, info['name'], NET, info['name']))
            continue
        taken[info['name']] = index
        item['interface'] = info
        wanted.append(item)
    return wanted, errors


# ---------------------------------------------------------------- plan and apply

def _blocks(count, groups):
    """Per queue 0..count-1: ``(group CPUs, position in the group, queues in the group)`` - queues
    split over the groups in contiguous blocks, as drivers number them along the CPUs."""
    members = [[] for group in groups]
    for queue in range(count):
        members[queue * len(groups) // count].append(queue)
    result = {}
    for group, queues in zip(groups, members):
        for position, queue in enumerate(queues):
            result[queue] = (group, position, len(queues))
    return result


def _share(group, position, size):
    """The CPUs of ``group`` a queue at ``position`` of ``size`` queues owns: every size-th CPU, or
    (fewer CPUs than queues) one CPU, round-robin."""
    if len(group) >= size:
        return [cpu for index, cpu in enumerate(group) if index % size == position]
    return [group[position % len(group)]]


def plan(wanted, nr_cpus=None):
    """For every entry of ``select``: ``queues`` (one item per rx and tx queue: ``interface``,
    ``queue`` (``rx-0``), ``attr`` (path), ``before`` (mask), ``target`` (mask in the kernel's width),
    ``cpus`` (cpulist), ``status`` changed / unchanged / failed (unreadable: no CONFIG_RPS/XPS)) and
    ``irq_targets`` (IRQ number -> cpulist of the queue it serves, ``irqs`` true only). Nothing is
    written."""
    nr_cpus = nr_cpus or nr_cpu_ids()
    queues, irq_targets, names = [], {}, {}
    for item in wanted:
        info = item['interface']
        layouts = {'rx': _blocks(len(info['rx']), item['groups']), 'tx': _blocks(len(info['tx']), item['groups'])}
        cpus_of = {'rx': {}, 'tx': {}}
        for direction, attr, enabled in (('rx', 'rps_cpus', item['rps']), ('tx', 'xps_cpus', item['xps'])):
            for position, entry in enumerate(info[direction]):
                group, place, size = layouts[direction][position]
                cpus_of[direction][entry['queue']] = _share(group, place, size)
                if not enabled:
                    continue
                cpus = group if direction == 'rx' else _share(group, place, size)
                target = cpulist_to_mask(cpus, nr_cpus) if nr_cpus and cpus[-1] < nr_cpus else cpulist_to_mask(cpus)
                before = entry[attr]
                status, msg = 'unchanged', None
                if before is None and direction == 'tx' and len(info['tx']) == 1:
                    # The kernel keeps no XPS map for a device with one transmit queue (xps_cpus reads
                    # ENOENT): every packet leaves through that queue, there is nothing to steer.
                    msg = 'one transmit queue: no XPS to set'
                elif before is None:
                    status = 'failed'
                    msg = 'no %s (kernel without CONFIG_%s?)' % (attr, 'RPS' if direction == 'rx' else 'XPS')
                else:
                    try:
                        if mask_to_cpus(before) != cpus:
                            status = 'changed'
                    except CpuListError:
                        status = 'changed'
                queues.append({'interface': info['name'], 'index': item['index'],
                               'queue': '%s-%d' % (direction, entry['queue']),
                               'attr': '%s/%s/queues/%s-%d/%s' % (NET, info['name'], direction, entry['queue'], attr),
                               'before': before, 'target': target, 'after': before, 'cpus': format_cpulist(cpus),
                               'status': status, 'msg': msg})
        if not item['irqs']:
            continue
        for vector in info['irqs']:
            if vector['queue'] is None:
                continue
            direction = 'tx' if vector['direction'] == 'tx' else 'rx'
            cpus = cpus_of[direction].get(vector['queue']) or cpus_of['tx' if direction == 'rx' else 'rx'].get(vector['queue'])
            if cpus:
                irq_targets[vector['irq']] = (item['index'], cpus)
                names[vector['irq']] = vector['name']
    return {'queues': queues, 'irq_targets': irq_targets, 'irq_names': names}


def irq_plan(planned, online):
    """``irq.plan`` entries for the vectors of ``plan`` (one rule per vector, policy ``cpus``)."""
    rules = [{'index': index, 'selector': planned['irq_names'][number], 'pattern': None, 'policy': 'cpus',
              'cpus': cpus, 'matched': [number]}
             for number, (index, cpus) in sorted(planned['irq_targets'].items())]
    return irq.plan(rules, planned['irq_names'], online)


def apply(queues):
    """Write the target of every ``changed`` queue of ``plan`` and read it back (status ``failed``
    with the reason in ``msg`` when the store fails or the kernel reports other CPUs); returns
    ``queues``."""
    for entry in queues:
        if entry['status'] != 'changed':
            continue
        try:
            sysfs.write_attr(entry['attr'], entry['target'])
        except sysfs.SysfsWriteError as exc:
            entry['status'] = 'failed'
            entry['msg'] = '%s' % exc
            entry['after'] = sysfs.read_attr(entry['attr'])
            continue
        entry['after'] = (sysfs.read_attr(entry['attr']) or '').strip() or None
        try:
            stored = mask_to_cpus(entry['after'] or '')
        except CpuListError:
            stored = None
        if stored != mask_to_cpus(entry['target']):
            entry['status'] = 'failed'
            entry['msg'] = 'wrote %s but the kernel reports %r' % (entry['target'], entry['after'])
    return queues


def changed(queues, irqs):
    """Whether anything was (or, in check mode, would be) written."""
    return any(q['status'] == 'changed' for q in queues) or any(e['status'] == 'changed' for e in irqs)


# ---------------------------------------------------------------- irqbalance

# irqbalance >= 1.7 listens on /run/irqbalance/irqbalance<pid>.sock (the unit's RuntimeDirectory) once it
# has read every IRQ, which runs its policy script once per IRQ: with the irq_affinity role's script a
# restarted irqbalance opened the socket after 17 s on an idle 2-CPU lab guest with 35 IRQs (a 1 s
# script), later under load. A ban sent before that is lost and the daemon's first placement moves the
# pinned vectors: a clean-clone CI run failed on it (the role pinned the NIC right after irq_affinity
# restarted irqbalance, found no socket, banned nothing; both receive vectors went back), and the next
# run, waiting 30 s, gave up before the socket came. A host with a thousand IRQs takes longer still.
IRQBALANCE_SOCKET = '/run/irqbalance/irqbalance%d.sock'
IRQBALANCE_WAIT = 300
PROC = '/proc'


def irqbalance_pids():
    """PIDs of the irqbalance daemons that run (``/proc/<pid>/comm``), lowest first."""
    pids = []
    for path in glob.glob(os.path.join(sysfs.host_path(PROC), '[0-9]*', 'comm')):
        try:
            with open(path) as handle:
                comm = handle.read().strip()
        except OSError:  # the process has exited since the listing
            continue
        if comm == 'irqbalance':
            pids.append(int(os.path.basename(os.path.dirname(path))))
    return sorted(pids)


def irqbalance_socket(wait=0.0):
    """``(pid, socket)`` of the running irqbalance, waiting up to ``wait`` seconds for a daemon that is
    still starting to open its socket: ``(None, None)`` when no irqbalance runs, ``(pid, None)`` when it
    runs without a socket. A socket left by an earlier daemon is never chosen: the name holds the PID."""
    deadline = time.monotonic() + wait
    while True:
        pids = irqbalance_pids()
        if not pids:
            return None, None
        for pid in reversed(pids):
            if sysfs.exists(IRQBALANCE_SOCKET % pid):
                return pid, IRQBALANCE_SOCKET % pid
        if time.monotonic() >= deadline:
            return pids[-1], None
        time.sleep(0.5)


def irqbalance_ban(numbers, wait=0.0):
    """Send ``settings ban irqs <numbers>`` to the running irqbalance (it then never moves them until
    it exits; it checks the sender's credentials, so they go along). Returns the socket's path, or None
    when no irqbalance runs. Raises ``NicError`` when irqbalance runs but has not opened its socket within
    ``wait`` seconds, or the socket refuses: pinning anyway would be undone by the daemon. Returns a
    second after sending, so that the daemon has read the ban before the caller pins."""
    if not numbers:
        return None
    irqs = ' '.join('%d' % n for n in sorted(numbers))
    pid, path = irqbalance_socket(wait)
    if pid is None:
        return None
    if path is None:
        raise NicError(
            'irqbalance (PID %d) runs but has not opened %s within %d s, so it cannot be told to leave IRQs %s '
            'alone and would move them: wait until irqbalance has started (journalctl -u irqbalance), or ban '
            'them in its own configuration and set irqbalance_ban=false' % (pid, IRQBALANCE_SOCKET % pid, wait, irqs))
    message = ('settings ban irqs %s' % irqs).encode('ascii')
    credentials = struct.pack('3i', os.getpid(), os.getuid(), os.getgid())
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(5)
        sock.connect(sysfs.host_path(path))
        sock.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, credentials)])
    except OSError as exc:
        raise NicError('cannot tell irqbalance (%s) to leave IRQs %s alone: %s' % (path, irqs, exc))
    finally:
        sock.close()
    # The daemon reads the ban between two passes; a pass already under way could still move a
    # vector pinned at once.
    time.sleep(1)
    return path
