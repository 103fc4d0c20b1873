# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU list helpers shared by modules and the cpulist filters.

Two kernel notations are handled:

* cpulist, as in ``/sys/devices/system/cpu/online`` or
  ``/proc/irq/N/smp_affinity_list``: ``0-3,8,10-11``; the kernel's stride form
  ``0-15:2/4`` (in each group of 4 CPUs of the range, the first 2) is accepted too;
* hex mask, as in ``/proc/irq/N/smp_affinity``: 32-bit groups of 8 hex digits,
  most significant first, separated by commas: ``00000000,00000f0f``.

Every parser raises ``CpuListError`` (a ``ValueError``) naming the offending value.

No Ansible imports (standard library only): the irq_affinity role installs this file on hosts,
with ``irq.py``, for its boot-time pin script.
"""

from __future__ import annotations

import re

__all__ = [
    'CpuListError', 'parse_cpulist', 'format_cpulist', 'cpulist_to_mask',
    'mask_to_cpus', 'to_cpus', 'MAX_CPUS',
]

# The kernel's NR_CPUS upper bound (CONFIG_NR_CPUS max is 8192); anything above is a typo.
MAX_CPUS = 8192

_RANGE_RE = re.compile(r'^(\d+)(?:-(\d+)(?::(\d+)/(\d+))?)?$')
_MASK_GROUP_RE = re.compile(r'^[0-9a-fA-F]{1,8}$')


class CpuListError(ValueError):
    """Malformed cpulist or mask; the message names the value."""


def _check_cpu(cpu, value):
    if cpu >= MAX_CPUS:
        raise CpuListError('CPU %d in %r is beyond the supported maximum of %d CPUs' % (cpu, value, MAX_CPUS))


def parse_cpulist(value):
    """Parse a cpulist string into a sorted list of unique CPU numbers.

    An empty or whitespace-only string yields an empty list (the kernel prints an
    empty ``effective_affinity_list`` for a shut-down IRQ).
    """
    if not isinstance(value, str):
        raise CpuListError('cpulist must be a string, got %r (%s)' % (value, type(value).__name__))
    text = value.strip()
    if not text:
        return []
    cpus = set()
    for part in text.split(','):
        part = part.strip()
        match = _RANGE_RE.match(part)
        if not match:
            raise CpuListError('malformed cpulist %r: bad element %r' % (value, part))
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise CpuListError('malformed cpulist %r: range %r is descending' % (value, part))
        _check_cpu(last, value)
        if match.group(3) is not None:
            used, group = int(match.group(3)), int(match.group(4))
            if group == 0 or used == 0 or used > group:
                raise CpuListError('malformed cpulist %r: stride %r needs 0 < used <= group size' % (value, part))
            for cpu in range(first, last + 1):
                if (cpu - first) % group < used:
                    cpus.add(cpu)
        else:
            cpus.update(range(first, last + 1))
    return sorted(cpus)


def to_cpus(value):
    """Accept a cpulist string, one integer, or a list of integers (or digit strings)."""
    if isinstance(value, bool):
        raise CpuListError('CPU list must be a cpulist string or integers, got boolean %r' % (value,))
    if isinstance(value, int):
        if value < 0:
            raise CpuListError('CPU number %r is negative' % (value,))
        _check_cpu(value, value)
        return [value]
    if isinstance(value, str):
        return parse_cpulist(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        cpus = set()
        for item in value:
            if isinstance(item, bool):
                raise CpuListError('CPU list %r contains boolean %r' % (value, item))
            if isinstance(item, int):
                if item < 0:
                    raise CpuListError('CPU list %r contains negative number %r' % (value, item))
                _check_cpu(item, value)
                cpus.add(item)
            elif isinstance(item, str):
                try:
                    cpus.update(parse_cpulist(item))
                except CpuListError:
                    raise CpuListError('CPU list %r contains malformed item %r' % (value, item))
            else:
                raise CpuListError('CPU list %r contains %r, which is not an integer' % (value, item))
        return sorted(cpus)
    raise CpuListError('expected a cpulist string or a list of CPU numbers, got %r (%s)' % (value, type(value).__name__))


def format_cpulist(cpus):
    """Compact CPU numbers into the kernel's cpulist notation (``0-3,8,10-11``)."""
    ordered = sorted(set(cpus))
    parts = []
    idx = 0
    while idx < len(ordered):
        start = ordered[idx]
        end = start
        while idx + 1 < len(ordered) and ordered[idx + 1] == end + 1:
            idx += 1
            end = ordered[idx]
        parts.append('%d' % start if start == end else '%d-%d' % (start, end))
        idx += 1
    return ','.join(parts)


def cpulist_to_mask(cpus, nr_cpus=None):
    """Render CPU numbers as a comma-grouped hex mask (``/proc/irq/N/smp_affinity`` style).

    Without ``nr_cpus`` the mask has as many full 8-digit groups as the highest CPU needs (at least
    one): ``00000000,00000f0f``. With ``nr_cpus`` (the kernel's ``nr_cpu_ids``) it is printed exactly as
    the kernel's ``%*pb`` does for that many bits - ``ceil(nr_cpus / 32)`` groups, the most significant
    one only as wide as its bits need (2 CPUs -> ``3``, 40 CPUs -> ``ff,ffffffff``).
    """
    ordered = sorted(set(cpus))
    highest = ordered[-1] if ordered else -1
    bits = 0
    for cpu in ordered:
        bits |= 1 << cpu
    if nr_cpus is None:
        groups = highest // 32 + 1 if highest >= 0 else 1
        widths = [8] * groups
    else:
        if isinstance(nr_cpus, bool) or not isinstance(nr_cpus, int) or nr_cpus < 1:
            raise CpuListError('nr_cpus must be a positive integer, got %r' % (nr_cpus,))
        if highest >= nr_cpus:
            raise CpuListError('CPU %d does not fit in a mask of nr_cpus=%d' % (highest, nr_cpus))
        groups = (nr_cpus + 31) // 32
        top_bits = nr_cpus % 32 or 32
        widths = [(top_bits + 3) // 4] + [8] * (groups - 1)
    words = []
    for position, group in enumerate(range(groups - 1, -1, -1)):
        words.append('%0*x' % (widths[position], (bits >> (32 * group)) & 0xffffffff))
    return ','.join(words)


def mask_to_cpus(mask):
    """Parse a hex mask (comma groups of up to 8 hex digits, optional ``0x``) into CPU numbers."""
    if isinstance(mask, bool) or not isinstance(mask, str):
        raise CpuListError('CPU mask must be a hex string such as "00000000,0000000f", got %r' % (mask,))
    text = mask.strip()
    if text.lower().startswith('0x'):
        text = text[2:]
    if not text:
        raise CpuListError('CPU mask %r is empty' % (mask,))
    groups = text.split(',')
    if len(groups) == 1:
        # An ungrouped mask of any length (e.g. "f0f" or a 16-digit word).
        if not re.match(r'^[0-9a-fA-F]+$', groups[0]):
            raise CpuListError('malformed CPU mask %r' % (mask,))
        bits = int(groups[0], 16)
    else:
        bits = 0
        for group in groups:
            if not _MASK_GROUP_RE.match(group):
                raise CpuListError('malformed CPU mask %r: group %r is not 1-8 hex digits' % (mask, group))
            bits = (bits << 32) | int(group, 16)
    cpus = []
    cpu = 0
    while bits:
        if bits & 1:
            _check_cpu(cpu, mask)
            cpus.append(cpu)
        bits >>= 1
        cpu += 1
    return cpus
