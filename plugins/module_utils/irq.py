# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IRQ pinning by name: the one implementation behind the ``irq_pin`` module and the
``irq_affinity`` role's boot-time script.

* ``parse_interrupts`` / ``irq_names`` - the numbered IRQs of ``/proc/interrupts`` and their
  action names (``/sys/kernel/irq/N/actions``, else the label column of ``/proc/interrupts``);
* ``compile_rule`` / ``compile_rules`` - validate rules ``{'selector', 'policy', 'cpus'}``
  (selector compiles, CPU list parses, is not empty and, given ``online``, names online CPUs);
* ``match_rules`` - give every IRQ to the first rule whose selector it matches;
* ``plan`` - the target CPUs of every matched IRQ under the rule's policy (``cpus``, ``spread``,
  ``local``) and whether ``smp_affinity_list`` must change;
* ``apply`` - write ``/proc/irq/N/smp_affinity_list`` (``sysfs.write_attr``: ``os.open`` /
  ``os.write`` / explicit ``os.close``, so the kernel's EIO for a kernel-managed IRQ surfaces and
  is reported as status ``managed``) and read the affinity back;
* ``mark_pending`` - flag IRQs whose ``effective_affinity_list`` is not yet inside the requested
  ``smp_affinity_list`` (x86 moves an IRQ at its next interrupt: a quiet admin queue keeps the old
  CPU until then);
* ``predict_managed`` - without writing (check mode, ``list_only``), decide which IRQs a write would
  find kernel-managed: debugfs ``IRQD_AFFINITY_MANAGED`` when mounted, else the record of this boot
  (``load_record`` / ``update_record``: what real runs and the boot-time script saw, keyed by boot_id
  and IRQ action name), else the NVMe driver rule (I/O queue vectors ``nvme<N>q<M>``, M >= 1), else
  unknown.

No Ansible imports, only the standard library and the two sibling files ``sysfs.py`` and
``cpulist.py`` (imported relatively): the irq_affinity role installs these three files as the
package ``/usr/local/lib/inferops/`` on the host, where ``/usr/local/lib/inferops-irq-pin.py``
(``inferops-irq-pin.service``, irqbalance's policy script) imports them. Keep it that way.
"""

from __future__ import annotations

import json
import os
import re
import tempfile

from . import sysfs
from .cpulist import CpuListError, format_cpulist, parse_cpulist, to_cpus

__all__ = [
    'IrqError', 'POLICIES', 'ONLINE', 'parse_interrupts', 'irq_names', 'pci_numa_nodes', 'online_cpus',
    'compile_rule', 'compile_rules', 'not_online', 'match_rules', 'plan', 'apply', 'mark_pending',
    'RECORD', 'BOOT_ID', 'boot_id', 'debugfs_managed', 'driver_managed', 'load_record', 'update_record',
    'save_record', 'predict_managed', 'format_cpulist', 'parse_cpulist', 'CpuListError',
]

POLICIES = ('cpus', 'spread', 'local')
ONLINE = '/sys/devices/system/cpu/online'
AFFINITY = '/proc/irq/%d/smp_affinity_list'
EFFECTIVE = '/proc/irq/%d/effective_affinity_list'
BOOT_ID = '/proc/sys/kernel/random/boot_id'
# Only present with CONFIG_GENERIC_IRQ_DEBUGFS and debugfs mounted (never mounted by this code).
DEBUGFS_IRQ = '/sys/kernel/debug/irq/irqs/%d'
# What the writes of this boot found (tmpfs: gone at reboot; the boot_id inside guards the rest).
RECORD = '/run/inferops/irq-managed.json'
RECORD_VERSION = 1
# The nvme driver allocates its I/O queue vectors with PCI_IRQ_AFFINITY (pre_vectors=1: only the
# admin queue vector, nvme<N>q0, is not managed), so nvme<N>q<M>, M >= 1, are kernel-managed.
NVME_IO_QUEUE = re.compile(r'^nvme\d+q[1-9]\d*$')


class IrqError(Exception):
    """Invalid rule or unreadable host state; the message names the rule or file."""


# ---------------------------------------------------------------- reading

def parse_interrupts(text):
    """Numbered IRQ lines of /proc/interrupts: list of ``{'irq', 'counts', 'chip', 'label'}``.

    ``label`` is the action name(s) as printed on the line - the text after the
    ``<hwirq>-<flow>`` column (``2-edge``, ``147456-edge``); ``irq_names`` prefers
    ``/sys/kernel/irq/N/actions``.
    """
    lines = text.splitlines()
    if not lines:
        return []
    ncpu = len(lines[0].split())
    line_re = re.compile(r'^\s*(\d+):((?:\s+\d+){0,%d})(?:\s+(.*))?$' % ncpu)
    result = []
    for line in lines[1:]:
        match = line_re.match(line)
        if not match:
            continue
        counts = [int(c) for c in match.group(2).split()]
        tokens = (match.group(3) or '').split()
        chip = tokens[0] if tokens else ''
        label = ''
        for pos in range(1, len(tokens)):
            if re.match(r'^\d*-[A-Za-z]\S*$', tokens[pos]):
                label = ' '.join(tokens[pos + 1:])
                break
        else:
            parts = re.split(r'\s{2,}', (match.group(3) or '').strip())
            if len(parts) >= 2:
                label = parts[-1]
        result.append({'irq': int(match.group(1)), 'counts': counts, 'chip': chip, 'label': label})
    return result


def irq_names(text):
    """IRQ number -> name, for every numbered IRQ of ``text`` (the content of /proc/interrupts)."""
    names = {}
    for entry in parse_interrupts(text):
        actions = sysfs.read_attr('/sys/kernel/irq/%d/actions' % entry['irq'])
        names[entry['irq']] = actions.strip() if actions is not None else entry['label']
    return names


def pci_numa_nodes():
    """IRQ number -> NUMA node of the PCI device that lists it in msi_irqs."""
    nodes = {}
    for dev in sysfs.listdir('/sys/bus/pci/devices'):
        base = '/sys/bus/pci/devices/%s' % dev
        irqs = sysfs.listdir(base + '/msi_irqs')
        if not irqs:
            continue
        node = sysfs.read_int(base + '/numa_node')
        for irq in irqs:
            if irq.isdigit():
                nodes[int(irq)] = node
    return nodes


def online_cpus():
    """The online CPUs (``/sys/devices/system/cpu/online``); raises ``IrqError`` when unknown."""
    try:
        online = parse_cpulist(sysfs.read_attr(ONLINE) or '')
    except CpuListError as exc:
        raise IrqError('cannot parse %s: %s' % (ONLINE, exc))
    if not online:
        raise IrqError('cannot read the online CPUs from %s' % ONLINE)
    return online


# ---------------------------------------------------------------- rules

def not_online(cpus, online):
    """The CPUs of ``cpus`` that are not in ``online`` (sorted)."""
    return sorted(set(cpus or []) - set(online))


def compile_rule(rule, index, online=None):
    """Validate rule ``index`` (a dict ``selector``, ``policy``, ``cpus``); raise ``IrqError``.

    Returns ``{'index', 'selector', 'pattern', 'policy', 'cpus', 'matched': []}`` with ``cpus`` the
    sorted CPU numbers, or None when the rule has none (allowed for ``local`` only). With ``online``,
    CPUs that are not online are an error too.
    """
    selector = rule.get('selector')
    try:
        pattern = re.compile(selector)
    except (re.error, TypeError) as exc:
        raise IrqError('rules[%d].selector=%r is not a valid regular expression: %s' % (index, selector, exc))
    policy = rule.get('policy') or 'cpus'
    if policy not in POLICIES:
        raise IrqError('rules[%d].policy=%r is not one of %s' % (index, policy, ', '.join(POLICIES)))
    value = rule.get('cpus')
    cpus = None
    if value is None or (isinstance(value, str) and not value.strip()):
        if policy in ('cpus', 'spread'):
            raise IrqError('rules[%d].cpus is required with policy=%s' % (index, policy))
    else:
        try:
            cpus = to_cpus(value)
        except CpuListError as exc:
            raise IrqError('rules[%d].cpus=%r is not a valid CPU list: %s' % (index, value, exc))
        if not cpus:
            raise IrqError('rules[%d].cpus=%r is empty' % (index, value))
        offline = not_online(cpus, online) if online is not None else []
        if offline:
            raise IrqError('rules[%d].cpus=%r names CPU(s) %s that are not online (online: %s)' % (
                index, value, format_cpulist(offline), format_cpulist(online)))
    return {'index': index, 'selector': selector, 'pattern': pattern, 'policy': policy, 'cpus': cpus, 'matched': []}


def compile_rules(rules, online=None):
    """``compile_rule`` for every rule, in order; an empty list is an error."""
    if not rules:
        raise IrqError('rules must hold at least one rule')
    return [compile_rule(rule, index, online) for index, rule in enumerate(rules)]


def match_rules(rules, names):
    """Append every IRQ of ``names`` (number -> name), in number order, to the ``matched`` list of
    the first rule whose selector is found in its name (``re.search``); returns ``rules``."""
    for irq in sorted(names):
        for rule in rules:
            if rule['pattern'].search(names[irq]):
                rule['matched'].append(irq)
                break
    return rules


# ---------------------------------------------------------------- plan and apply

def _local_target(rule, irq, entry, online, pci_nodes):
    """CPUs of the IRQ's NUMA node (``/proc/irq/N/node``, else its PCI device's), within the rule's CPUs."""
    node = sysfs.read_int('/proc/irq/%d/node' % irq)
    if node is None or node < 0:
        if pci_nodes.get('map') is None:
            pci_nodes['map'] = pci_numa_nodes()
        node = pci_nodes['map'].get(irq)
    node_cpus = None
    if node is not None and node >= 0:
        entry['node'] = node
        try:
            node_cpus = parse_cpulist(sysfs.read_attr('/sys/devices/system/node/node%d/cpulist' % node) or '')
        except CpuListError:
            node_cpus = None
        node_cpus = [c for c in node_cpus or [] if c in online]
    allowed = rule['cpus'] or online
    if node_cpus:
        target = [c for c in node_cpus if c in allowed]
        if target:
            return target
        entry['msg'] = 'node %d has none of rules[%d].cpus; using them as given' % (node, rule['index'])
        return list(allowed)
    entry['msg'] = 'NUMA node unknown; using %s' % ('rules[%d].cpus' % rule['index'] if rule['cpus'] else 'all online CPUs')
    return list(allowed)


def plan(rules, names, online):
    """One entry per IRQ matched by ``rules`` (after ``match_rules``), in IRQ number order.

    Entry: ``irq``, ``name``, ``rule`` (index), ``policy``, ``node`` (``local`` only), ``before``
    (``smp_affinity_list``), ``target`` (cpulist), ``after`` (``target`` when it must change, else
    ``before``), ``effective`` (``effective_affinity_list``), ``status`` (``changed`` - must be
    written, ``unchanged``, ``failed`` - affinity unreadable), ``msg``, and ``managed_source``,
    ``managed_unknown``, ``pending`` (set by ``apply``, ``predict_managed``, ``mark_pending``).
    Nothing is written.
    """
    pci_nodes = {}
    entries = []
    for rule in rules:
        for position, irq in enumerate(rule['matched']):
            entry = {'irq': irq, 'name': names[irq], 'rule': rule['index'], 'policy': rule['policy'], 'node': None,
                     'before': sysfs.read_attr(AFFINITY % irq), 'target': None, 'after': None,
                     'effective': sysfs.read_attr(EFFECTIVE % irq), 'status': 'unchanged', 'msg': None,
                     'managed_source': None, 'managed_unknown': False, 'pending': False}
            if rule['policy'] == 'cpus':
                target = rule['cpus']
            elif rule['policy'] == 'spread':
                target = [rule['cpus'][position % len(rule['cpus'])]]
            else:
                target = _local_target(rule, irq, entry, online, pci_nodes)
            entry['target'] = format_cpulist(target)
            entry['after'] = entry['before']
            if entry['before'] is None:
                entry['status'] = 'failed'
                entry['msg'] = 'cannot read %s' % (AFFINITY % irq)
            else:
                try:
                    current = parse_cpulist(entry['before'])
                except CpuListError:
                    current = None
                if current != sorted(set(target)):
                    entry['status'] = 'changed'
                    entry['after'] = entry['target']
            entries.append(entry)
    entries.sort(key=lambda e: e['irq'])
    return entries


def apply(entries):
    """Write the target of every ``changed`` entry of ``plan`` and read it back; returns ``entries``.

    An EIO from the store (at the write or at the close) means a kernel-managed IRQ: status
    ``managed``, not an error; an accepted write or an EIO sets ``managed_source='write'`` (what
    ``update_record`` keeps). Any other write error, or a read-back that differs from the target,
    sets status ``failed`` with the reason in ``msg``. ``after`` and ``effective`` are read back.
    """
    for entry in entries:
        if entry['status'] != 'changed':
            continue
        path = AFFINITY % entry['irq']
        try:
            sysfs.write_attr(path, entry['target'])
        except sysfs.SysfsWriteError as exc:
            entry['after'] = sysfs.read_attr(path)
            if exc.managed:
                entry['status'] = 'managed'
                entry['managed_source'] = 'write'
                entry['msg'] = 'kernel-managed IRQ: affinity write refused (EIO)'
            else:
                entry['status'] = 'failed'
                entry['msg'] = '%s' % exc
            continue
        entry['managed_source'] = 'write'
        entry['after'] = sysfs.read_attr(path)
        entry['effective'] = sysfs.read_attr(EFFECTIVE % entry['irq'])
        try:
            stored = parse_cpulist(entry['after'] or '')
        except CpuListError:
            stored = None
        if stored != parse_cpulist(entry['target']):
            entry['status'] = 'failed'
            entry['msg'] = 'wrote %s but the kernel reports %r' % (entry['target'], entry['after'])
    return entries


# ---------------------------------------------------------------- effective affinity

def mark_pending(entries, statuses=('changed', 'unchanged')):
    """Set ``pending`` on every entry: true when its ``effective`` CPUs (where the kernel delivers the
    interrupt now) are not all inside ``after`` (the requested ``smp_affinity_list``).

    The kernel moves an IRQ's vector lazily (x86: at the IRQ's next interrupt), so right after a write
    ``effective_affinity_list`` can still name the old CPU; that move is pending, not failed. Only
    entries whose ``after`` is what the kernel holds count (``statuses``; in check mode only
    ``unchanged``, the ``after`` of a planned change is not written). Returns the pending IRQ numbers.
    """
    pending = []
    for entry in entries:
        entry['pending'] = False
        if entry['status'] not in statuses or not entry.get('effective') or not entry.get('after'):
            continue
        try:
            effective = set(parse_cpulist(entry['effective']))
            wanted = set(parse_cpulist(entry['after']))
        except CpuListError:
            continue
        if effective and not effective <= wanted:
            entry['pending'] = True
            note = 'move pending: the kernel still delivers it to CPU(s) %s (effective_affinity_list) until its next interrupt' % (
                format_cpulist(sorted(effective)))
            entry['msg'] = '%s; %s' % (entry['msg'], note) if entry['msg'] else note
            pending.append(entry['irq'])
    return pending


# ---------------------------------------------------------------- managed IRQs without writing

def boot_id():
    """This boot's id (``/proc/sys/kernel/random/boot_id``), or None."""
    value = sysfs.read_attr(BOOT_ID)
    return value.strip() or None if value is not None else None


def debugfs_managed(irq):
    """True/False from debugfs ``irq/irqs/N`` (``IRQD_AFFINITY_MANAGED`` in its ``dstate``), None when
    the file is not there (kernel without CONFIG_GENERIC_IRQ_DEBUGFS, debugfs not mounted) or unreadable."""
    text = sysfs.read_attr(DEBUGFS_IRQ % irq)
    if not text or 'dstate:' not in text:
        return None
    return re.search(r'^\s*IRQD_AFFINITY_MANAGED\s*$', text, re.M) is not None


def driver_managed(name):
    """True when every action of the IRQ is an NVMe I/O queue (see ``NVME_IO_QUEUE``), else None."""
    names = [n.strip() for n in (name or '').split(',') if n.strip()]
    if names and all(NVME_IO_QUEUE.match(n) for n in names):
        return True
    return None


def load_record(text, boot):
    """``{name: True (managed) / False (write accepted)}`` from the record ``text`` - empty unless the
    record is well-formed and was written during boot ``boot`` (IRQ numbers and device names are
    handed out again at every boot, a record from another boot says nothing about this one)."""
    if not text or not boot:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get('version') != RECORD_VERSION or data.get('boot_id') != boot:
        return {}
    known = {}
    for key, value in (('managed', True), ('writable', False)):
        for name in data.get(key) or []:
            if isinstance(name, str):
                known[name] = value
    return known


def update_record(text, boot, entries):
    """The record after the writes of ``entries`` (``apply`` done): what the kernel answered per IRQ
    name (EIO - managed, accepted - writable), merged into the record of this boot. Returns the new
    text, or None when it would not change (or the boot id is unknown)."""
    if not boot:
        return None
    known = load_record(text, boot)
    for entry in entries:
        if entry.get('managed_source') == 'write':
            known[entry['name']] = entry['status'] == 'managed'
    new = json.dumps({'version': RECORD_VERSION, 'boot_id': boot,
                      'managed': sorted(n for n, v in known.items() if v),
                      'writable': sorted(n for n, v in known.items() if not v)}, indent=1, sort_keys=True) + '\n'
    return None if new.strip() == (text or '').strip() else new


def save_record(path, content):
    """Replace ``path`` atomically (temporary file in its directory + ``os.replace``; the boot-time
    script's writer, the module uses ``textfile.write_text_atomic``)."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(prefix='.inferops.', dir=directory)
    try:
        os.write(fd, content.encode('utf-8'))
        os.close(fd)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def predict_managed(entries, record):
    """For every entry of ``plan`` that would be written (status ``changed``) when nothing is written
    (check mode, ``list_only``): would the kernel refuse it as managed?

    Sources, first answer wins: debugfs (``managed_source=debugfs``), ``record`` (``load_record`` of
    this boot; ``record``), the NVMe driver rule (``driver``). A managed prediction sets status
    ``managed`` (as the real run will report it); a writable one keeps ``changed``. When no source
    knows, the entry keeps ``changed`` - most IRQs accept the write - with ``managed_unknown=true``.
    Sets ``managed_source`` / ``managed_unknown`` on every entry; returns the unknown IRQ numbers.
    """
    unknown = []
    for entry in entries:
        entry.setdefault('managed_source', None)
        entry['managed_unknown'] = False
        if entry['status'] != 'changed':
            continue
        for source, answer in (('debugfs', lambda e: debugfs_managed(e['irq'])),
                               ('record', lambda e: record.get(e['name'])),
                               ('driver', lambda e: driver_managed(e['name']))):
            managed = answer(entry)
            if managed is not None:
                break
        else:
            source = None
        entry['managed_source'] = source
        if managed:
            entry['status'] = 'managed'
            entry['after'] = entry['before']
            entry['msg'] = {
                'debugfs': 'kernel-managed IRQ (IRQD_AFFINITY_MANAGED in debugfs): a write would be refused (EIO)',
                'record': 'kernel-managed IRQ (its write was refused with EIO earlier this boot): a write would be refused',
                'driver': 'kernel-managed IRQ (NVMe I/O queue vector, the nvme driver allocates them managed): '
                          'a write would be refused (EIO)',
            }[source]
        elif managed is None:
            entry['managed_unknown'] = True
            unknown.append(entry['irq'])
    return unknown
