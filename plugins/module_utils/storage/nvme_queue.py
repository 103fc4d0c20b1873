# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Request-queue settings of NVMe namespaces (scheduler, read-ahead, nr_requests): the rules of the
``nvme_sched`` role, used on the controller through the ``nvme_queue_*`` filters.

* ``input_errors`` - the values alone: scheduler name, read-ahead (``blockdev.check_read_ahead_kb``, the
  rule of ``blockdev_readahead``), nr_requests, model/serial udev globs, the rule file's place;
* ``select`` - the namespaces (``nvme_info``'s ``namespaces``) that model/serial globs select, and
  what each glob matched;
* ``host_errors`` - the values against the host: scheduler offered by every selected namespace, every
  glob matches a namespace;
* ``drift`` - selected namespaces whose queue differs from the wanted values.

Messages are ``<variable> = <value as JSON>: <problem>`` (or ``<variable> entry <value>: ...``).
"""

from __future__ import annotations

import fnmatch
import json
import re

from ansible_collections.inferops.node.plugins.module_utils.storage.blockdev import BlockDevError, check_read_ahead_kb

__all__ = ['KNOWN_SCHEDULERS', 'input_errors', 'select', 'host_errors', 'drift']

# Scheduler names accepted when no namespace is present to ask.
KNOWN_SCHEDULERS = ('none', 'mq-deadline', 'kyber', 'bfq')
_SCHEDULER_RE = re.compile(r'^[a-z0-9_-]+$')
# Characters that would end or escape the udev match string the role writes.
_GLOB_BAD_RE = re.compile(r'["|\\\n]|\s$|^$')
_RULES_FILE_RE = re.compile(r'^/etc/udev/rules\.d/(6[1-9]|[7-9][0-9])-[\w.@+-]+\.rules$')


def _shown(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _int_value(value):
    """An integer from an int or a digit string (never a boolean); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.match(r'^\s*\d+\s*$', value):
        return int(value)
    return None


def input_errors(scheduler, read_ahead_kb, nr_requests=None, models=(), serials=(), rules_file=None, prefix='nvme_sched'):
    """Problems of the values alone (no host), as messages naming the variable, the value and the fix."""
    errors = []
    if not isinstance(scheduler, str) or not _SCHEDULER_RE.match(scheduler):
        errors.append('%s_scheduler = %s: must be a scheduler name such as none or mq-deadline' % (prefix, _shown(scheduler)))
    try:
        check_read_ahead_kb(read_ahead_kb, '%s_read_ahead_kb' % prefix)
    except BlockDevError:
        errors.append('%s_read_ahead_kb = %s: must be a non-negative integer multiple of 4 (KiB, whole pages)' % (
            prefix, _shown(read_ahead_kb)))
    if nr_requests is not None:
        number = _int_value(nr_requests)
        if number is None or number <= 0:
            errors.append('%s_nr_requests = %s: must be a positive integer or null (kernel default)' % (prefix, _shown(nr_requests)))
    for kind, value in (('models', models), ('serials', serials)):
        if not isinstance(value, (list, tuple)) or any(not isinstance(v, str) or _GLOB_BAD_RE.search(v) for v in value):
            errors.append("%s_%s = %s: must be a list of non-blank strings (udev glob patterns) without '\"', '|' or '\\'" % (
                prefix, kind, _shown(value)))
    if rules_file is not None and (not isinstance(rules_file, str) or not _RULES_FILE_RE.match(rules_file)):
        errors.append('%s_rules_file = %s: must be a .rules file directly in /etc/udev/rules.d/ whose name starts with 61-99 '
                      '(after 60-persistent-storage.rules)' % (prefix, _shown(rules_file)))
    return errors


def select(namespaces, models=(), serials=()):
    """``(selected, matches)``: the namespaces whose controller model or serial matches one of the udev
    globs (``fnmatch``, trailing blanks of the model ignored as udev does), every namespace when both lists
    are empty; ``matches`` is ``{'models': {glob: [name]}, 'serials': {glob: [name]}}``."""
    matches = {'models': dict((g, []) for g in models), 'serials': dict((g, []) for g in serials)}
    selected = []
    for ns in namespaces:
        hit = not models and not serials
        for kind, key in (('models', 'model'), ('serials', 'serial')):
            for glob in matches[kind]:
                if fnmatch.fnmatchcase((ns.get(key) or '').rstrip(), glob):
                    matches[kind][glob].append(ns['name'])
                    hit = True
        if hit:
            selected.append(ns)
    return selected, matches


def host_errors(namespaces, scheduler, models=(), serials=(), prefix='nvme_sched'):
    """Problems of the values against the host's namespaces (``nvme_info``)."""
    errors = []
    selected, matches = select(namespaces, models, serials)
    lacking = [ns for ns in selected if scheduler not in ns['queue']['schedulers']]
    if lacking:
        errors.append('%s_scheduler = %s: not offered by %s (available: %s)' % (
            prefix, _shown(scheduler), ', '.join(ns['name'] for ns in lacking), ', '.join(lacking[0]['queue']['schedulers'])))
    if not selected and scheduler not in KNOWN_SCHEDULERS:
        errors.append('%s_scheduler = %s: no NVMe namespace to check it against and not one of %s' % (
            prefix, _shown(scheduler), ', '.join(KNOWN_SCHEDULERS)))
    for kind in ('models', 'serials'):
        present = []
        for ns in namespaces:
            value = (ns.get(kind[:-1]) or '').rstrip()
            if value not in present:
                present.append(value)
        for glob, hits in matches[kind].items():
            if not hits:
                errors.append('%s_%s entry %s: no NVMe namespace on this host has that %s (present: %s)' % (
                    prefix, kind, _shown(glob), kind[:-1], ', '.join(present) or 'none'))
    return errors


def drift(namespaces, scheduler, read_ahead_kb, nr_requests=None):
    """The namespaces whose queue differs from the wanted values: ``[{'name', 'text'}]`` with ``text``
    ``nvme0n1 (<model> <serial>): scheduler [mq-deadline], read_ahead_kb 128``."""
    out = []
    for ns in namespaces:
        queue = ns['queue']
        diff = []
        if queue['scheduler'] != scheduler:
            diff.append('scheduler [%s]' % queue['scheduler'])
        if queue['read_ahead_kb'] != int(read_ahead_kb):
            diff.append('read_ahead_kb %s' % queue['read_ahead_kb'])
        if nr_requests is not None and queue['nr_requests'] != int(nr_requests):
            diff.append('nr_requests %s' % queue['nr_requests'])
        if diff:
            out.append({'name': ns['name'], 'text': '%s (%s %s): %s' % (ns['name'], ns.get('model'), ns.get('serial'), ', '.join(diff))})
    return out
