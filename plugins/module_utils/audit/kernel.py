# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of the kernel parameters, on ``sysctl_info``: every sysctl of the kernel_tuning profile at
runtime and at boot (the file ``sysctl --system`` applies last) against the inventory, and the THP mode.
The wanted values are the role's own plan (module_utils/kernel/sysctl.py ``plan`` over the role's layers)."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.kernel import sysctl
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, read

__all__ = ['CHECKS']


@Check('kernel.sysctl', 'Kernel parameter of the profile, at runtime and at boot', 'major',
       '/proc/sys and the sysctl.d files', 'role kernel_tuning (tag kernel_tuning)', variables=('kernel_tuning_layers',))
def sysctl_profile(check, reads, expected):
    info = read(reads, 'sysctl_info')
    layers = expected.get('kernel_tuning_layers')
    if layers is None:
        return [check.skip('kernel_tuning_layers unknown (could not be resolved for this host)')]
    plan = sysctl.plan(layers, info)
    if plan['errors']:
        return [check.fail(None, None, None, 'the inventory itself is refused: %s' % '; '.join(plan['errors']))]
    values = info.get('parameters') or {}
    set_by = info.get('set_by') or {}
    results = []
    for key in sorted(plan['want']):
        wanted = plan['want'][key]
        source = plan['entries'][key]['source']
        runtime = values.get(key)
        boot = set_by.get(key)
        evidence = '%s; %s' % (plan['paths'].get(key), boot['file'] if boot else 'no sysctl.d file')
        observed = {'runtime': runtime, 'boot': boot['value'] if boot else None,
                    'boot_file': boot['file'] if boot else None}
        problems = []
        if sysctl.differs(runtime, wanted):
            problems.append('runtime %s' % ('unreadable' if runtime is None else runtime))
        if boot is None:
            problems.append('no sysctl.d file sets it (a reboot gives the kernel default)')
        elif sysctl.differs(boot['value'], wanted):
            problems.append('%s line %s sets %s (a reboot gives that)' % (boot['file'], boot['line'], boot['value']))
        if problems:
            results.append(check.fail(key, wanted, observed, '%s = %s wanted (%s): %s'
                                      % (key, wanted, source, '; '.join(problems)), evidence))
        else:
            results.append(check.passed(key, wanted, observed, evidence=evidence))
    return results


@Check('kernel.thp', 'Transparent huge pages mode', 'minor', '/sys/kernel/mm/transparent_hugepage/enabled',
       'role kernel_tuning (kernel_tuning_thp)', variables=('kernel_tuning_thp',))
def thp(check, reads, expected):
    enabled = read(reads, 'sysctl_info', 'transparent_hugepage').get('enabled')
    wanted = expected.get('kernel_tuning_thp')
    if wanted is None:
        return [check.skip('kernel_tuning_thp is null: the roles leave THP alone')]
    if not enabled:
        return [check.skip('the kernel has no transparent huge pages', expected=wanted)]
    return [check.compare(None, wanted, enabled.get('current'), 'THP is %s, kernel_tuning_thp = %s'
                          % (enabled.get('current'), wanted))]


CHECKS = [sysctl_profile, thp]
