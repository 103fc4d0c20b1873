# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IRQ pinning by name: the one implementation behind the ``irq_pin`` module and the
``irq_affinity`` role's boot-time script.

* ``parse_interrupts`` / ``irq_names`` - the numbered IRQs of ``/proc/interrupts`` and their
  action names (``/sys/kernel/irq/N/actions``, else the label column of ``/proc/interrupts``);
* ``rule_errors`` / ``compile_rule`` / ``compile_rules`` - validate rules ``{'selector', 'policy', 'cpus'}``
  (selector compiles, CPU list parses, is not empty and, given ``online``, names online CPUs; with the
  IRQ names, every rule matches one) - the one rule behind the module, the role's checks (filter
  ``irq_rules_check``) and the boot-time script; ``banned_cpus_errors`` - irqbalance's banned CPUs;
* ``match_rules`` - give every IRQ to the first rule whose selector it matches;
* ``plan`` - the target CPUs of every matched IRQ under the rule's policy (``cpus``, ``spread``,
  ``local``) and whether ``smp_affinity_list`` must change;
* ``apply`` - write ``/proc/irq/N/smp_affinity_list`` (``sysfs.write_attr``: ``os.open`` /
  ``os.write`` / explicit ``os.close``, so the kernel's EIO for a kernel-managed IRQ surfaces and
  is reported as status ``managed``) and read the affinity back;
* ``mark_pending`` - flag IRQs whose ``effective_affinity_list`` is not yet inside the requested
  ``smp_affinity_list`` (x86 moves an IRQ at its next interrupt: a quiet admin queue keeps the old
  CPU until then);
* ``irq_table`` - every IRQ with its name, chip, counts, affinities, NUMA node, PCI device and driver
  and whether it is kernel-managed (``managed_status``), for ``irq_info``; ``parse_irqbalance_env`` -
  irqbalance's environment file (banned CPUs, policy script);
* ``predict_managed`` - without writing (check mode, ``list_only``), decide which IRQs a write would
  find kernel-managed: debugfs ``IRQD_AFFINITY_MANAGED`` when mounted, else the record of this boot
  (``load_record`` / ``update_record``: what real runs and the boot-time script saw, keyed by boot_id
  and IRQ action name), else the NVMe driver rule (I/O queue vectors ``nvme<N>q<M>``, M >= 1), else
  unknown.

No Ansible imports, only the standard library and sibling files (imported relatively): the
irq_affinity role installs this file and its siblings in the zip application
``/usr/local/lib/inferops-irq-pin.pyz`` (``inferops-irq-pin.service``, irqbalance's policy script;
module_utils/common/boot_package.py refuses any other import). Keep it that way.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from . import irq_devices
from ..common import sysfs
from ..common.cpulist import CpuListError, format_cpulist, mask_to_cpus, parse_cpulist, to_cpus

__all__ = [
    'IrqError', 'POLICIES', 'ONLINE', 'parse_interrupts', 'irq_names', 'pci_numa_nodes', 'online_cpus',
    'compile_rule', 'compile_rules', 'not_online', 'match_rules', 'plan', 'apply', 'mark_pending',
    'RECORD', 'BOOT_ID', 'boot_id', 'debugfs_managed', 'driver_managed', 'load_record', 'update_record',
    'save_record', 'predict_managed', 'format_cpulist', 'parse_cpulist', 'CpuListError',
    'rule_errors', 'banned_cpus_errors', 'irq_name', 'pci_irq_devices', 'managed_status', 'irq_table',
    'parse_irqbalance_env', 'normalize_rule', 'RULE_KEYS', 'resolve_rules', 'device_report',
    'irqbalance_args_errors', 'pin_state', 'BAN_LIST', 'ban_list',
]

POLICIES = ('cpus', 'spread', 'local')
# How a rule selects its IRQs: by IRQ-name regex, or by device identity (irq_devices.KINDS); one per rule.
SELECTORS = ('selector',) + irq_devices.KINDS
RULE_KEYS = SELECTORS + ('policy', 'cpus')
ONLINE = sysfs.ONLINE_CPUS
# irqbalance options the irq_affinity role passes through IRQBALANCE_ARGS: plain --name or --name=value,
# nothing a shell would expand in the unit's environment file.
_IRQBALANCE_ARG_RE = re.compile(r'^--?[a-z][a-z-]*(=[^\s"\'$`\\]*)?$')
AFFINITY = '/proc/irq/%d/smp_affinity_list'
EFFECTIVE = '/proc/irq/%d/effective_affinity_list'
BOOT_ID = '/proc/sys/kernel/random/boot_id'
# Only present with CONFIG_GENERIC_IRQ_DEBUGFS and debugfs mounted (never mounted by this code).
DEBUGFS_IRQ = '/sys/kernel/debug/irq/irqs/%d'
# What the writes of this boot found (tmpfs: gone at reboot; the boot_id inside guards the rest).
RECORD = '/run/inferops/irq-managed.json'
RECORD_VERSION = 1
# irqbalance runs its policy script once per IRQ at every start and opens its ban socket only after
# the last one: with Python and this package that is about 0.1 s per IRQ on a server core (100 s for
# a thousand IRQs) and up to a second in a lab guest. The boot script's apply (ordered before
# irqbalance) writes its verdicts here, and the role's shell wrapper answers from them (``ban_list``).
BAN_LIST = '/run/inferops/irq-ban'
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


def irq_name(number, label=None):
    """The action name(s) of IRQ ``number``: ``/sys/kernel/irq/N/actions``, else ``label`` (the
    /proc/interrupts column, kernels without that file)."""
    actions = sysfs.read_attr('/sys/kernel/irq/%d/actions' % number)
    return actions.strip() if actions is not None else label


def irq_names(text):
    """IRQ number -> name, for every numbered IRQ of ``text`` (the content of /proc/interrupts)."""
    return dict((entry['irq'], irq_name(entry['irq'], entry['label'])) for entry in parse_interrupts(text))


def pci_irq_devices():
    """IRQ number -> ``{'pci_address', 'driver', 'numa_node'}`` of the PCI device that lists it in
    ``msi_irqs`` (MSI/MSI-X vectors; legacy INTx lines can be shared and are left out). ``numa_node`` is
    None when the firmware does not tell (-1)."""
    devices = {}
    for address, function in irq_devices.pci_functions().items():
        info = {'pci_address': address, 'driver': function['driver'], 'numa_node': function['numa_node']}
        for irq in function['irqs']:
            devices[irq] = info
    return devices


def pci_numa_nodes():
    """IRQ number -> NUMA node of the PCI device that lists it in msi_irqs."""
    return dict((irq, info['numa_node']) for irq, info in pci_irq_devices().items())


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


def _shown(value):
    """A value as the messages show it (JSON, as the inventory would spell it)."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _cpus_problem(value, online):
    """(cpus, None) or (None, problem) for a CPU list value (cpulist string with the kernel's stride form,
    integer or list of integers)."""
    try:
        cpus = to_cpus(value)
    except CpuListError as exc:
        return None, 'not a valid CPU list: %s (kernel cpulist syntax, e.g. 0-3,8 or 0-15:2/4)' % exc
    if not cpus:
        return None, 'empty'
    offline = not_online(cpus, online) if online is not None else []
    if offline:
        return None, 'CPU(s) %s not online (online: %s)' % (format_cpulist(offline), format_cpulist(online))
    return cpus, None


def _rule_problems(rule, index, online, prefix):
    """(compiled rule or None, [messages]) for rule ``index``; messages name ``<prefix>[index].<key>``,
    the value and the fix."""
    where = '%s[%d]' % (prefix, index)
    if not isinstance(rule, dict):
        return None, ['%s = %s: must be a mapping {selector or %s, policy, cpus}' % (
            where, _shown(rule), ' or '.join(irq_devices.KINDS))]
    problems = ['%s: unknown key %s (known: %s)' % (where, _shown(key), ', '.join(RULE_KEYS))
                for key in sorted(rule, key=str) if key not in RULE_KEYS]
    given = [key for key in SELECTORS if rule.get(key) not in (None, '', [])]
    kind = given[0] if len(given) == 1 else None
    selector = rule.get('selector')
    pattern = None
    values = None
    if not given:
        problems.append('%s: selects no IRQ - give one of selector (IRQ-name regex), %s (device identity)' % (
            where, ', '.join(irq_devices.KINDS)))
    elif len(given) > 1:
        problems.append('%s: %s given together; a rule selects by one of them - split it into one rule each' % (
            where, ' and '.join(given)))
    elif kind == 'selector':
        if not isinstance(selector, str) or not selector.strip():
            problems.append('%s.selector = %s: must be a non-empty regular expression' % (where, _shown(selector)))
        else:
            try:
                pattern = re.compile(selector)
            except re.error as exc:
                problems.append('%s.selector = %s: not a valid regular expression: %s' % (where, _shown(selector), exc))
    else:
        raw = rule[kind]
        values = [raw] if isinstance(raw, str) else raw
        if not isinstance(values, list):
            problems.append('%s.%s = %s: must be a string or a list of strings' % (where, kind, _shown(raw)))
        else:
            for pos, value in enumerate(values):
                problem = irq_devices.value_problem(kind, value)
                if problem:
                    problems.append('%s.%s[%d] = %s: %s' % (where, kind, pos, _shown(value), problem))
    policy = rule.get('policy') or 'cpus'
    if policy not in POLICIES:
        problems.append('%s.policy = %s: must be one of %s' % (where, _shown(policy), ', '.join(POLICIES)))
    value = rule.get('cpus')
    cpus = None
    if value is None or (isinstance(value, str) and not value.strip()):
        if policy in ('cpus', 'spread'):
            problems.append('%s.cpus: required with policy %s' % (where, policy))
    else:
        cpus, problem = _cpus_problem(value, online)
        if problem:
            problems.append('%s.cpus = %s: %s' % (where, _shown(value), problem))
    if problems:
        return None, problems
    return {'index': index, 'selector': selector if kind == 'selector' else None, 'pattern': pattern, 'kind': kind,
            'values': values, 'where': where, 'devices': [], 'irqs': None, 'policy': policy, 'cpus': cpus,
            'matched': []}, []


def compile_rule(rule, index, online=None, prefix='rules'):
    """Validate rule ``index`` (a dict ``selector``, ``policy``, ``cpus``); raise ``IrqError`` naming every
    problem of the rule.

    Returns ``{'index', 'selector', 'pattern', 'policy', 'cpus', 'matched': []}`` with ``cpus`` the
    sorted CPU numbers, or None when the rule has none (allowed for ``local`` only). With ``online``,
    CPUs that are not online are an error too.
    """
    compiled, problems = _rule_problems(rule, index, online, prefix)
    if problems:
        raise IrqError('; '.join(problems))
    return compiled


def rule_errors(rules, online=None, names=None, require_match=False, prefix='rules', match_option='fail_on_no_match',
                identities=None):
    """Every problem of ``rules`` at once (empty list when they are valid), as messages naming
    ``<prefix>[i].<key>``, the value and the fix. With ``online`` the CPUs must be online; with
    ``identities`` (``irq_devices.identity_table``) every device selector must name a device of the host
    (``resolve_rules``); with ``names`` (IRQ number -> name) and ``require_match`` every valid rule must
    match at least one IRQ (the message names ``match_option``, the option that allows it; device rules
    are only matched when ``identities`` is given)."""
    if not isinstance(rules, list):
        return ['%s = %s: must be a list of {selector or %s, policy, cpus}' % (
            prefix, _shown(rules), ' or '.join(irq_devices.KINDS))]
    errors, compiled = [], []
    for index, rule in enumerate(rules):
        entry, problems = _rule_problems(rule, index, online, prefix)
        errors.extend(problems)
        if entry is not None:
            compiled.append(entry)
    if identities is not None:
        errors.extend(resolve_rules(compiled, identities))
    if names is not None and require_match:
        match_rules(compiled, names)
        for entry in compiled:
            if entry['matched'] or (entry['kind'] != 'selector' and entry['irqs'] is None):
                continue
            if entry['kind'] == 'selector':
                errors.append('%s[%d].selector = %s matches no IRQ on this host (see /proc/interrupts; '
                              '%s: false allows it)' % (prefix, entry['index'], _shown(entry['selector']), match_option))
            elif entry['irqs']:
                # Every IRQ of the device went to an earlier rule (first match wins).
                errors.append('%s[%d].%s = %s: its IRQs %s are all taken by earlier rules (first match wins; reorder '
                              'the rules, or %s: false allows it)' % (
                                  prefix, entry['index'], entry['kind'], _shown(entry['values']),
                                  format_cpulist(sorted(entry['irqs'])), match_option))
    return errors


def resolve_rules(rules, identities):
    """Resolve the device selectors of compiled ``rules`` against ``identities``
    (``irq_devices.identity_table``): sets each device rule's ``devices`` (``irq_devices.resolve``) and
    ``irqs`` (the set of their vectors). Returns the problems, naming ``<prefix>[i].<kind>[j]``, the value
    and what to check; a rule with a problem keeps ``irqs`` None and matches nothing."""
    problems = []
    for rule in rules:
        if rule.get('kind', 'selector') == 'selector':
            continue
        devices, bad = [], False
        for pos, value in enumerate(rule['values']):
            found, problem = irq_devices.resolve(rule['kind'], value, identities)
            if problem:
                problems.append('%s.%s[%d] = %s: %s' % (rule['where'], rule['kind'], pos, _shown(value), problem))
                bad = True
            devices.extend(found)
        rule['devices'] = devices
        rule['irqs'] = None if bad else set(irq for device in devices for irq in device['irqs'])
    return problems


def normalize_rule(rule):
    """A rule with its defaults applied (``policy`` cpus; ``cpus`` a string, a single CPU number made one;
    a device selector given as one string made a list), as the module and the boot-time script's rules
    file get it. A regex rule keeps its ``selector`` key (null or not); a device rule has only its own."""
    cpus = rule.get('cpus')
    result = dict((key, [rule[key]] if isinstance(rule[key], str) else rule[key])
                  for key in irq_devices.KINDS if rule.get(key) not in (None, '', []))
    if not result:
        result['selector'] = rule.get('selector')
    result.update(policy=rule.get('policy') or 'cpus',
                  cpus='%d' % cpus if isinstance(cpus, int) and not isinstance(cpus, bool) else cpus)
    return result


def banned_cpus_errors(value, online=None, name='banned CPUs'):
    """Problems of irqbalance's banned CPU list (``IRQBALANCE_BANNED_CPULIST``): a cpulist string, "" for
    none, only online CPUs, and at least one online CPU left for irqbalance."""
    if value is None or value == '':
        return []
    if not isinstance(value, str):
        return ['%s = %s: must be a CPU list string such as 32-63, or "" for none' % (name, _shown(value))]
    cpus, problem = _cpus_problem(value, online)
    if problem:
        return ['%s = %s: %s' % (name, _shown(value), problem)]
    if online is not None and set(online) <= set(cpus):
        return ['%s = %s: bans every online CPU; irqbalance needs at least one' % (name, _shown(value))]
    return []


def irqbalance_args_errors(args, name='irqbalance_args'):
    """Problems of extra irqbalance arguments (``None``: none given): a list of options like
    ``--powerthresh=off``, nothing a shell would expand, and no ``--policyscript`` (the role sets it)."""
    if args is None:
        return []
    if not isinstance(args, list) or not all(isinstance(a, str) and _IRQBALANCE_ARG_RE.match(a) for a in args):
        return ['%s = %s: must be a list of options like --powerthresh=off' % (name, _shown(args))]
    if any(re.match(r'^--?(policyscript|l)\b', a) for a in args):
        return ['%s = %s: --policyscript is set by the role' % (name, _shown(args))]
    return []


def pin_state(actual, effective, target):
    """Whether a pinned IRQ is where its rule wants it: ``wrong`` when its ``smp_affinity_list``
    (``actual``; None when unreadable) is not the ``target`` cpulist, ``pending`` when it is but its
    ``effective_affinity_list`` (``effective``) still names other CPUs (the kernel moves it at its next
    interrupt), else ``right``."""
    try:
        same = actual is not None and parse_cpulist(actual) == parse_cpulist(target)
    except CpuListError:
        same = False
    if not same:
        return 'wrong'
    try:
        lagging = bool(effective) and not set(parse_cpulist(effective)) <= set(parse_cpulist(target))
    except CpuListError:
        lagging = False
    return 'pending' if lagging else 'right'


def compile_rules(rules, online=None, prefix='rules'):
    """``compile_rule`` for every rule, in order, after ``rule_errors`` found no problem (all problems
    are raised together); an empty list is an error."""
    if not rules:
        raise IrqError('%s must hold at least one rule' % prefix)
    errors = rule_errors(rules, online, prefix=prefix)
    if errors:
        raise IrqError('; '.join(errors))
    return [compile_rule(rule, index, online, prefix) for index, rule in enumerate(rules)]


def match_rules(rules, names):
    """Append every IRQ of ``names`` (number -> name), in number order, to the ``matched`` list of
    the first rule that selects it - a regex rule whose selector is found in the name (``re.search``), a
    device rule (after ``resolve_rules``) whose devices own the vector; returns ``rules``. A device rule
    that was not resolved matches nothing."""
    for irq in sorted(names):
        for rule in rules:
            if rule.get('kind', 'selector') == 'selector':
                hit = rule['pattern'].search(names[irq])
            else:
                hit = rule['irqs'] is not None and irq in rule['irqs']
            if hit:
                rule['matched'].append(irq)
                break
    return rules


def device_report(rules, entries):
    """Per device selected by identity (``resolve_rules`` done, ``entries`` planned/applied): ``rule``,
    ``kind``, ``value``, ``pci_address``, ``controller``, ``serial``, ``model``, ``block``, ``irqs`` (the
    device's vectors this rule pinned), ``managed_irqs`` (kernel-managed: the kernel keeps them where blk-mq
    put them), ``movable_irqs`` and ``vectors`` (``irq``, ``name``, ``managed``, ``smp_affinity_list``,
    ``effective_affinity_list``)."""
    by_irq = dict((entry['irq'], entry) for entry in entries)
    report = []
    for rule in rules:
        for device in rule.get('devices') or []:
            mine = [by_irq[irq] for irq in device['irqs'] if irq in by_irq and by_irq[irq]['rule'] == rule['index']]
            keys = ('kind', 'value', 'pci_address', 'controller', 'serial', 'model', 'block')
            item = dict((key, device[key]) for key in keys)
            item.update(
                rule=rule['index'], irqs=[e['irq'] for e in mine],
                managed_irqs=[e['irq'] for e in mine if e['status'] == 'managed'],
                movable_irqs=[e['irq'] for e in mine if e['status'] != 'managed'],
                vectors=[{'irq': e['irq'], 'name': e['name'], 'managed': e['status'] == 'managed',
                          'smp_affinity_list': e['after'], 'effective_affinity_list': e['effective']} for e in mine])
            report.append(item)
    return report


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
                entry['msg'] = 'kernel-managed IRQ: affinity write refused (%s)' % errno.errorcode.get(exc.errno, exc.errno)
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


def ban_list(rules_sha256, names, banned):
    """The text of BAN_LIST: ``rules <SHA-256 of the rules file>``, then ``<irq> <name> ban|keep`` for every
    IRQ of ``names`` (number -> name, as ``irq_names`` reads them) - ``ban`` for the numbers in ``banned``.
    The wrapper answers only for an IRQ listed under the same number and name while the rules file has that
    hash; anything else (a device added since, changed rules, no list yet) goes to the Python code."""
    lines = ['rules %s' % rules_sha256]
    lines.extend('%d %s %s' % (number, names[number], 'ban' if number in banned else 'keep')
                 for number in sorted(names))
    return '\n'.join(lines) + '\n'


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
        managed, source = managed_status(entry['irq'], entry['name'], record)
        entry['managed_source'] = source
        if managed:
            entry['status'] = 'managed'
            entry['after'] = entry['before']
            entry['msg'] = MANAGED_NOTES[source]
        elif managed is None:
            entry['managed_unknown'] = True
            unknown.append(entry['irq'])
    return unknown


MANAGED_NOTES = {
    'debugfs': 'kernel-managed IRQ (IRQD_AFFINITY_MANAGED in debugfs): a write would be refused (EIO)',
    'record': 'kernel-managed IRQ (its write was refused with EIO or EPERM earlier this boot): a write would be refused',
    'driver': 'kernel-managed IRQ (NVMe I/O queue vector, the nvme driver allocates them managed): '
              'a write would be refused (EIO)',
}


def managed_status(number, name, record):
    """Whether IRQ ``number`` (action name ``name``) is kernel-managed, without writing: ``(managed,
    source)`` with ``managed`` True/False/None (unknown) and ``source`` the first that knew - V(debugfs),
    V(record) (``load_record`` of this boot), V(driver) (NVMe I/O queue name) - or None."""
    for source, answer in (('debugfs', lambda: debugfs_managed(number)),
                           ('record', lambda: (record or {}).get(name)),
                           ('driver', lambda: driver_managed(name))):
        managed = answer()
        if managed is not None:
            return managed, source
    return None, None


# ---------------------------------------------------------------- the whole table (irq_info)

NVME_QUEUE = re.compile(r'^(nvme\d+)q(\d+)$')


def affinity(number):
    """IRQ ``number``'s ``smp_affinity_list`` (where it may go) and ``effective_affinity_list`` (where the
    kernel delivers it now), each stripped, None when unreadable: what every IRQ reader reports."""
    return {'smp_affinity_list': (sysfs.read_attr(AFFINITY % number) or '').strip() or None,
            'effective_affinity_list': (sysfs.read_attr(EFFECTIVE % number) or '').strip() or None}


def irq_table(record=None):
    """Every numbered IRQ of ``/proc/interrupts``, in number order, as a dict: ``irq``, ``name``, ``chip``,
    ``hwirq``, ``type`` (edge/level), ``count`` (all CPUs) and ``counts`` (per CPU), ``smp_affinity_list``,
    ``effective_affinity_list``, ``node`` (``/proc/irq/N/node``, None for -1), ``pci_address``,
    ``driver`` and ``numa_node`` of the PCI device owning the vector, ``nvme_controller`` and
    ``nvme_queue`` (``nvme0q1`` -> nvme0, 1; queue 0 is the admin queue), ``managed`` (True/False/None)
    and ``managed_source`` (``managed_status`` with ``record``). Raises ``IrqError`` when
    /proc/interrupts cannot be read."""
    text = sysfs.read_attr('/proc/interrupts')
    if text is None:
        raise IrqError('cannot read /proc/interrupts')
    devices = pci_irq_devices()
    table = []
    for entry in parse_interrupts(text):
        number = entry['irq']
        name = irq_name(number, entry['label'])
        base = '/sys/kernel/irq/%d/' % number
        device = devices.get(number, {})
        queue = NVME_QUEUE.match(name or '')
        node = sysfs.read_int('/proc/irq/%d/node' % number)
        managed, source = managed_status(number, name, record)
        chip = sysfs.read_attr(base + 'chip_name')
        table.append({
            'irq': number, 'name': name, 'chip': chip.strip() if chip else entry['chip'],
            'hwirq': (sysfs.read_attr(base + 'hwirq') or '').strip() or None,
            'type': (sysfs.read_attr(base + 'type') or '').strip() or None,
            'count': sum(entry['counts']), 'counts': entry['counts'],
            **affinity(number),
            'node': node if node is not None and node >= 0 else None,
            'pci_address': device.get('pci_address'), 'driver': device.get('driver'),
            'numa_node': device.get('numa_node'),
            'nvme_controller': queue.group(1) if queue else None,
            'nvme_queue': int(queue.group(2)) if queue else None,
            'managed': managed, 'managed_source': source,
        })
    return table


def parse_irqbalance_env(text):
    """irqbalance's environment file (``/etc/default/irqbalance``, ``EnvironmentFile=`` of its unit):
    the ``IRQBALANCE_*`` assignments (quotes removed), ``args`` (IRQBALANCE_ARGS split), ``policyscript``
    (from ``--policyscript=``/``-l``), and ``banned_cpus`` - the CPUs of IRQBALANCE_BANNED_CPULIST, or of the
    older mask IRQBALANCE_BANNED_CPUS, as a cpulist (None when neither is set or parseable)."""
    values = {}
    for line in (text or '').splitlines():
        match = re.match(r'^\s*(?:export\s+)?(IRQBALANCE_\w+)=(.*)$', line)
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
                value = value[1:-1]
            values[match.group(1)] = value
    args = values.get('IRQBALANCE_ARGS', '').split()
    policyscript = None
    for pos, arg in enumerate(args):
        if arg.startswith('--policyscript='):
            policyscript = arg.split('=', 1)[1]
        elif arg in ('--policyscript', '-l') and pos + 1 < len(args):
            policyscript = args[pos + 1]
    banned = None
    try:
        if values.get('IRQBALANCE_BANNED_CPULIST'):
            banned = format_cpulist(parse_cpulist(values['IRQBALANCE_BANNED_CPULIST']))
        elif values.get('IRQBALANCE_BANNED_CPUS'):
            banned = format_cpulist(mask_to_cpus(values['IRQBALANCE_BANNED_CPUS']))
    except CpuListError:
        banned = None
    return {'variables': values, 'args': args, 'policyscript': policyscript, 'banned_cpus': banned}
