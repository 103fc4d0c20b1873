# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IRQ pinning filters: the rules of module_utils/interrupts/irq.py (the code of the irq_pin module and of the
irq_affinity role's boot-time script) on the controller, for the role's checks and the preflight.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import CpuListError, parse_cpulist


def _host(irq_info):
    """(online CPUs, IRQ names) of an ``irq_info`` result, or (None, None) without one."""
    if not irq_info:
        return None, None
    if not isinstance(irq_info, dict) or 'irqs' not in irq_info or 'online_cpus' not in irq_info:
        raise AnsibleFilterError('irq_info must be the registered result of inferops.node.irq_info')
    try:
        online = parse_cpulist(irq_info['online_cpus'])
    except CpuListError as exc:
        raise AnsibleFilterError('irq_info.online_cpus: %s' % exc)
    return online, dict((entry['irq'], entry['name']) for entry in irq_info['irqs'])


def irq_rules_errors(rules, irq_info=None, require_match=False, name='rules', match_option='fail_on_no_match'):
    """Problems of IRQ pinning rules; with an irq_info result also online CPUs, the devices the device
    selectors name (irq_info's identities) and (require_match) matches."""
    online, names = _host(irq_info)
    identities = irq_info.get('identities') if irq_info else None
    if irq_info and not isinstance(identities, dict):
        raise AnsibleFilterError('irq_info has no identities: it must be the registered result of inferops.node.irq_info')
    return irq.rule_errors(rules, online, names, bool(require_match), prefix=name, match_option=match_option,
                           identities=identities)


def irq_rules_normalize(rules):
    """The rules with defaults applied, as irq_pin and the boot-time rules file take them."""
    if not isinstance(rules, list):
        raise AnsibleFilterError('irq_rules_normalize: rules must be a list, got %r' % (rules,))
    return [irq.normalize_rule(rule) for rule in rules if isinstance(rule, dict)]


def irqbalance_errors(banned_cpus, args=None, irq_info=None, prefix='irqbalance'):
    """Problems of irqbalance's banned CPUs (online, one left) and extra arguments."""
    online, dummy = _host(irq_info)
    errors = irq.banned_cpus_errors(banned_cpus, online, name='%s_banned_cpus' % prefix)
    return errors + irq.irqbalance_args_errors(args, name='%s_irqbalance_args' % prefix)


def irq_pins_verify(pinned, irq_info):
    """{wrong, pending}: pinned IRQs (irq_pin's irqs) whose smp_affinity_list, read again by irq_info,
    is not their rule's target; those whose effective affinity has not followed yet."""
    dummy, dummy2 = _host(irq_info)
    now = dict((entry['irq'], entry) for entry in irq_info['irqs'])
    wrong, pending = [], []
    for entry in pinned or []:
        current = now.get(entry['irq'], {})
        actual = current.get('smp_affinity_list')
        effective = current.get('effective_affinity_list')
        state = irq.pin_state(actual, effective, entry['target'])
        if state == 'wrong':
            wrong.append('IRQ %s (%s): smp_affinity_list is %s, rule %s wants %s' % (
                entry['irq'], entry['name'], actual or 'unreadable', entry['rule'], entry['target']))
        elif state == 'pending':
            pending.append('%s (%s) still on CPU %s' % (entry['irq'], entry['name'], effective))
    return {'wrong': wrong, 'pending': pending}


class FilterModule(object):
    """IRQ pinning filters."""

    def filters(self):
        return {
            'irq_rules_errors': irq_rules_errors,
            'irq_rules_normalize': irq_rules_normalize,
            'irqbalance_errors': irqbalance_errors,
            'irq_pins_verify': irq_pins_verify,
        }
