# Managed by inferops.node (role irq_affinity); local changes are overwritten.
"""Re-apply the IRQ pinning rules of the irq_affinity role (same semantics as the
inferops.node.irq_pin module) and tell irqbalance to leave the pinned IRQs alone.

Installed as /usr/local/lib/inferops-irq-pin.py and run through the wrapper
/usr/local/sbin/inferops-irq-pin (python3 -ES):

  inferops-irq-pin [apply] [RULES_JSON]   pin every IRQ matched by the rules (default
                                          /etc/inferops/irq-affinity.json); run by
                                          inferops-irq-pin.service at boot and whenever
                                          irqbalance (re)starts
  inferops-irq-pin DEVPATH IRQ            irqbalance --policyscript mode: prints ban=true
                                          for an IRQ matched by a rule

Rules: [{"selector": regex searched in the IRQ name, "policy": "cpus"|"spread"|"local",
"cpus": "0-3,8" or null}], first match wins; IRQ names come from
/sys/kernel/irq/N/actions (else the last column of /proc/interrupts). Kernel-managed
IRQs refuse affinity writes with EIO: reported as managed, not an error.
"""
import errno
import json
import os
import re
import sys

RULES = '/etc/inferops/irq-affinity.json'


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def cpulist(text):
    cpus = set()
    if isinstance(text, int):
        return [text]
    if isinstance(text, list):
        return sorted(set(int(c) for c in text))
    for part in str(text or '').replace(' ', '').split(','):
        if not part:
            continue
        low, sep, high = part.partition('-')
        cpus.update(range(int(low), int(high) + 1) if sep else [int(low)])
    return sorted(cpus)


def fmt(cpus):
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else '%d-%d' % (cpus[i], cpus[j]))
        i = j + 1
    return ','.join(out)


def irq_names():
    names = {}
    text = read('/proc/interrupts') or ''
    lines = text.splitlines()
    for line in lines[1:]:
        match = re.match(r'^\s*(\d+):', line)
        if not match:
            continue
        irq = int(match.group(1))
        actions = read('/sys/kernel/irq/%d/actions' % irq)
        if actions is None:
            tokens = line.split()
            label = ''
            for pos, token in enumerate(tokens):
                if re.match(r'^\d*-[A-Za-z]\S*$', token):
                    label = ' '.join(tokens[pos + 1:])
                    break
            actions = label
        names[irq] = actions.strip()
    return names


def load_rules(path):
    with open(path) as handle:
        rules = json.load(handle)
    for rule in rules:
        rule['pattern'] = re.compile(rule['selector'])
        rule['cpus'] = cpulist(rule['cpus']) if rule.get('cpus') not in (None, '') else None
        rule.setdefault('policy', 'cpus')
    return rules


def match(rules, names):
    matched = dict((i, []) for i in range(len(rules)))
    for irq in sorted(names):
        for index, rule in enumerate(rules):
            if rule['pattern'].search(names[irq]):
                matched[index].append(irq)
                break
    return matched


def pci_nodes():
    nodes = {}
    base = '/sys/bus/pci/devices'
    for dev in os.listdir(base) if os.path.isdir(base) else []:
        msi = os.path.join(base, dev, 'msi_irqs')
        if not os.path.isdir(msi):
            continue
        node = read(os.path.join(base, dev, 'numa_node'))
        for irq in os.listdir(msi):
            if irq.isdigit() and node is not None and re.match(r'^-?\d+$', node):
                nodes[int(irq)] = int(node)
    return nodes


def apply(path):
    rules = load_rules(path)
    names = irq_names()
    online = cpulist(read('/sys/devices/system/cpu/online'))
    nodes = None
    counts = {'changed': 0, 'unchanged': 0, 'managed': 0, 'failed': 0}
    for index, irqs in match(rules, names).items():
        rule = rules[index]
        if rule['cpus'] is not None and not set(rule['cpus']) <= set(online):
            print('rule %d (%s): CPUs %s not online (online %s), skipped' % (
                index, rule['selector'], fmt(rule['cpus']), fmt(online)))
            counts['failed'] += len(irqs)
            continue
        for position, irq in enumerate(irqs):
            if rule['policy'] == 'spread':
                target = [rule['cpus'][position % len(rule['cpus'])]]
            elif rule['policy'] == 'local':
                node = read('/proc/irq/%d/node' % irq)
                node = int(node) if node and re.match(r'^\d+$', node) else None
                if node is None:
                    nodes = pci_nodes() if nodes is None else nodes
                    node = nodes.get(irq)
                node_cpus = cpulist(read('/sys/devices/system/node/node%d/cpulist' % node)) if node is not None and node >= 0 else []
                allowed = rule['cpus'] or online
                target = [c for c in node_cpus if c in online and c in allowed] or list(allowed)
            else:
                target = rule['cpus']
            attr = '/proc/irq/%d/smp_affinity_list' % irq
            if cpulist(read(attr)) == sorted(set(target)):
                counts['unchanged'] += 1
                continue
            try:
                handle = open(attr, 'w')
                try:
                    handle.write(fmt(target))
                finally:
                    handle.close()
            except OSError as exc:
                if exc.errno == errno.EIO:
                    counts['managed'] += 1
                else:
                    counts['failed'] += 1
                    print('IRQ %d (%s): %s' % (irq, names[irq], exc))
                continue
            counts['changed'] += 1
            print('IRQ %d (%s) -> %s' % (irq, names[irq], fmt(target)))
    print('inferops-irq-pin: %(changed)d pinned, %(unchanged)d already pinned, '
          '%(managed)d kernel-managed, %(failed)d failed' % counts)
    return 1 if counts['failed'] else 0


def policy(irq):
    """irqbalance policy script: ban the IRQs the rules pin."""
    try:
        rules = load_rules(RULES)
    except (OSError, ValueError, re.error):
        return 0
    name = read('/sys/kernel/irq/%d/actions' % irq)
    if name is None:
        name = irq_names().get(irq)
    if name is not None and any(irqs for irqs in match(rules, {irq: name}).values()):
        print('ban=true')
    return 0


def main(argv):
    if len(argv) == 3 and argv[2].isdigit():
        return policy(int(argv[2]))
    args = argv[1:]
    if args and args[0] == 'apply':
        args = args[1:]
    return apply(args[0] if args else RULES)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
