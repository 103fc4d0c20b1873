# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU list filters: cpulist <-> hex mask conversion, compaction and set tests.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import (
    CpuListError,
    cpulist_to_mask as _cpus_to_mask,
    format_cpulist,
    mask_to_cpus,
    to_cpus,
)


def _cpus(value, what):
    try:
        return to_cpus(value)
    except CpuListError as exc:
        raise AnsibleFilterError('%s: %s' % (what, exc))


def cpulist_to_mask(value, nr_cpus=None):
    """'0-3,8' -> '00000000,0000010f' style hex mask (groups of 32 bits)."""
    cpus = _cpus(value, 'cpulist_to_mask')
    if nr_cpus is not None and not isinstance(nr_cpus, bool):
        try:
            nr_cpus = int(nr_cpus)
        except (TypeError, ValueError):
            raise AnsibleFilterError('cpulist_to_mask: nr_cpus must be a positive integer, got %r' % (nr_cpus,))
    try:
        return _cpus_to_mask(cpus, nr_cpus=nr_cpus)
    except CpuListError as exc:
        raise AnsibleFilterError('cpulist_to_mask: %s' % exc)


def mask_to_cpulist(value):
    """'00000000,00000f0f' -> '0-3,8-11'."""
    try:
        return format_cpulist(mask_to_cpus(value))
    except CpuListError as exc:
        raise AnsibleFilterError('mask_to_cpulist: %s' % exc)


def cpulist_expand(value):
    """'0-3,8' -> [0, 1, 2, 3, 8]."""
    return _cpus(value, 'cpulist_expand')


def cpulist_compact(value):
    """[3, 0, 1, 2, 8] or '8,0-1,2-3' -> '0-3,8'."""
    return format_cpulist(_cpus(value, 'cpulist_compact'))


def cpulist_contains(value, other):
    """True when every CPU of other (cpulist, CPU number or list) is in value."""
    outer = set(_cpus(value, 'cpulist_contains'))
    inner = set(_cpus(other, 'cpulist_contains'))
    return inner.issubset(outer)


def cpulist_overlaps(value, other):
    """True when value and other share at least one CPU."""
    return bool(set(_cpus(value, 'cpulist_overlaps')) & set(_cpus(other, 'cpulist_overlaps')))


class FilterModule(object):
    """CPU list filters."""

    def filters(self):
        return {
            'cpulist_to_mask': cpulist_to_mask,
            'mask_to_cpulist': mask_to_cpulist,
            'cpulist_expand': cpulist_expand,
            'cpulist_compact': cpulist_compact,
            'cpulist_contains': cpulist_contains,
            'cpulist_overlaps': cpulist_overlaps,
        }
