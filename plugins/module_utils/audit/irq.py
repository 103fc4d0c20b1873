# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of the IRQ pinning of the irq_affinity role:

* ``irq.pins`` - per rule of ``irq_affinity_rules``, every IRQ it matches sits on the CPUs the rule gives it.
  The match and the targets are the role's own plan: ``irq_pin`` with ``list_only`` (which reads the host and
  writes nothing), the module the role pins with - the rule (selectors by serial, by-id link, PCI address,
  md array; policies cpus, spread, local) is not repeated here. Kernel-managed IRQs (NVMe I/O queue vectors)
  are left to the kernel, as the role leaves them; a move that waits for the IRQ's next interrupt passes.
* ``irq.irqbalance`` - irqbalance runs with the role's policy script (it bans the pinned IRQs) and the banned
  CPUs of ``irq_affinity_banned_cpus`` (on ``irq_info``).
"""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, read
from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import CpuListError, parse_cpulist

# What the checks compare with: the irq_affinity role's rules and irqbalance policy.
IRQ_VARIABLES = (
    'irq_affinity_rules',
    'irq_affinity_irqbalance',
    'irq_affinity_banned_cpus',
)

__all__ = ['CHECKS']

FIX = 'role irq_affinity (tag irq_affinity)'
# The policy script the role installs and names in /etc/default/irqbalance (roles/irq_affinity/vars/main.yml,
# templates/irqbalance.j2).
POLICY_SCRIPT = '/usr/local/sbin/inferops-irq-pin'


@Check('irq.pins', 'IRQs of each pinning rule on the rule\'s CPUs', 'major',
       '/proc/irq/<N>/{smp,effective}_affinity_list (irq_pin list_only: the role\'s match and targets)', FIX, variables=IRQ_VARIABLES)
def pins(check, reads, expected):
    rules = expected.get('irq_affinity_rules')
    if not rules:
        return [check.skip('no irq_affinity_rules for this host')]
    entries = read(reads, 'irq_pin', 'irqs')
    results = []
    for index, rule in enumerate(rules):
        subject = 'irq_affinity_rules[%d]' % index
        mine = [e for e in entries if e['rule'] == index]
        if not mine:
            results.append(check.warn(subject, 'IRQs matched', [], 'rule matches no IRQ on this host'))
            continue
        movable = [e for e in mine if e['status'] != 'managed']
        managed = ['%s (%s)' % (e['irq'], e['name']) for e in mine if e['status'] == 'managed']
        wanted = dict((e['name'], e['target']) for e in movable)
        observed = dict((e['name'], e['before']) for e in movable)
        if not movable:
            results.append(check.skip('all %d matched IRQs are kernel-managed (left to the kernel): %s'
                                      % (len(managed), ', '.join(managed)), subject=subject))
            continue
        # irq.pin_state: the comparison the role's own verify (irq_pins_verify) makes
        states = dict((e['irq'], irq.pin_state(e['before'], e['effective'], e['target'])) for e in movable)
        wrong = ['IRQ %s (%s): smp_affinity_list %s, the rule wants %s' % (
            e['irq'], e['name'], e['before'] or 'unreadable', e['target']) for e in movable if states[e['irq']] == 'wrong']
        notes = []
        if managed:
            notes.append('kernel-managed, left to the kernel: %s' % ', '.join(managed))
        pending = ['%s (%s) still on CPU %s' % (e['irq'], e['name'], e['effective']) for e in movable if states[e['irq']] == 'pending']
        if pending:
            notes.append('move pending until the next interrupt: %s' % ', '.join(pending))
        if wrong:
            results.append(check.fail(subject, wanted, observed, '; '.join(wrong + notes)))
        else:
            results.append(check.passed(subject, wanted, observed, '; '.join(notes) or None))
    return results


def _cpus(value):
    try:
        return parse_cpulist(value or '')
    except CpuListError:
        return value


@Check('irq.irqbalance', 'irqbalance runs with the role\'s policy script and banned CPUs', 'major',
       'systemctl show irqbalance.service, /etc/default/irqbalance', FIX, variables=IRQ_VARIABLES)
def irqbalance(check, reads, expected):
    if not expected.get('irq_affinity_rules'):
        return [check.skip('no irq_affinity_rules for this host')]
    if not expected.get('irq_affinity_irqbalance'):
        return [check.skip('irq_affinity_irqbalance is false: the role does not run irqbalance')]
    found = read(reads, 'irq_info', 'irqbalance')
    banned = expected.get('irq_affinity_banned_cpus') or ''
    wanted = {'active': True, 'policyscript': POLICY_SCRIPT, 'banned_cpus': banned or None}
    observed = {'active': bool(found.get('active')), 'policyscript': found.get('policyscript'),
                'banned_cpus': found.get('banned_cpus')}
    problems = []
    if not found.get('installed'):
        problems.append('irqbalance is not installed')
    elif not observed['active']:
        problems.append('irqbalance.service is not active')
    if observed['policyscript'] != POLICY_SCRIPT:
        problems.append('policy script %s, the role sets %s (irqbalance may move the pinned IRQs)' % (
            observed['policyscript'] or 'none', POLICY_SCRIPT))
    if _cpus(observed['banned_cpus']) != _cpus(banned):
        problems.append('banned CPUs %s, irq_affinity_banned_cpus = "%s"' % (observed['banned_cpus'] or 'none', banned))
    if problems:
        return [check.fail('irqbalance.service', wanted, observed, '; '.join(problems))]
    return [check.passed('irqbalance.service', wanted, observed)]


CHECKS = [pins, irqbalance]
