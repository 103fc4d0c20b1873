# Managed by inferops.node (role irq_affinity); local changes are overwritten.
"""Re-apply the IRQ pinning rules of the irq_affinity role and tell irqbalance to leave the
pinned IRQs alone.

Installed as the __main__.py of /usr/local/lib/inferops-irq-pin.pyz and run through the wrapper
/usr/local/sbin/inferops-irq-pin (python3 -ES):

  inferops-irq-pin [apply] [RULES_JSON]   pin every IRQ matched by the rules (default
                                          /etc/inferops/irq-affinity.json); run by
                                          inferops-irq-pin.service at boot and whenever
                                          irqbalance (re)starts
  inferops-irq-pin DEVPATH IRQ            irqbalance --policyscript mode: prints ban=true
                                          for an IRQ matched by a rule

Rules: [{"selector": regex searched in the IRQ name - or one device selector, "serial",
"by_id", "pci_address" or "md_array": [...], resolved at every run to the devices' PCI
functions and their MSI vectors (kernel names change between boots) - "policy":
"cpus"|"spread"|"local", "cpus": "0-3,8" or null}], first match wins; IRQ names come from
/sys/kernel/irq/N/actions (else the last column of /proc/interrupts). Kernel-managed
IRQs refuse affinity writes with EIO: reported as managed, not an error. What the kernel
answered is recorded per IRQ name with this boot's id in /run/inferops/irq-managed.json,
so that the irq_pin module's check mode knows the managed IRQs of this boot without
writing. An IRQ whose effective_affinity_list is still outside its new affinity is
reported as pending (the kernel moves it at its next interrupt).

The pinning itself is the collection's plugins/module_utils/interrupts/irq.py - the code of the
inferops.node.irq_pin module - installed with its siblings (irq_devices.py, sysfs.py,
cpulist.py, ...) as the package inferops in the same zip application
(inferops.node.boot_package).
"""
import hashlib
import json
import sys

# The package inferops is in the same zip application as this script (inferops.node.boot_package).
try:
    from inferops.interrupts import irq
except ImportError:  # unit tests: the collection itself
    from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq

RULES = '/etc/inferops/irq-affinity.json'


def load_rules(path):
    """The rules file, compiled (selector, policy, CPU list; not yet checked against online CPUs), and the
    SHA-256 of its bytes."""
    with open(path, 'rb') as handle:
        data = handle.read()
    rules = json.loads(data.decode('utf-8'))
    return [irq.compile_rule(rule, index) for index, rule in enumerate(rules)], hashlib.sha256(data).hexdigest()


def resolve(rules):
    """Resolve the device selectors on this boot's devices; returns the problems (such a rule then
    matches nothing: a drive that is missing or not yet assembled pins nothing rather than the wrong IRQs)."""
    if all(rule['kind'] == 'selector' for rule in rules):
        return []
    return irq.resolve_rules(rules, irq.irq_devices.identity_table())


def read_names():
    return irq.irq_names(irq.sysfs.read_attr('/proc/interrupts') or '')


def apply(path):
    try:
        rules, rules_sha256 = load_rules(path)
        online = irq.online_cpus()
    except (OSError, ValueError, irq.IrqError) as exc:
        print('inferops-irq-pin: %s' % exc)
        return 1
    names = read_names()
    problems = resolve(rules)
    for problem in problems:
        print('inferops-irq-pin: %s' % problem)
    irq.match_rules(rules, names)
    # What policy() would answer for each IRQ, before irqbalance (ordered after this unit) asks.
    save(irq.BAN_LIST, irq.ban_list(rules_sha256, names, set(n for rule in rules for n in rule['matched'])))
    counts = {'changed': 0, 'unchanged': 0, 'managed': 0, 'failed': 0, 'pending': 0}
    usable = []
    for rule in rules:
        if irq.not_online(rule['cpus'], online):
            print('rule %d (%s): CPUs %s not online (online %s), skipped' % (
                rule['index'], rule['selector'] or '%s %s' % (rule['kind'], ','.join(rule['values'])),
                irq.format_cpulist(rule['cpus']), irq.format_cpulist(online)))
            counts['failed'] += len(rule['matched'])
        else:
            usable.append(rule)
    entries = irq.apply(irq.plan(usable, names, online))
    counts['pending'] = len(irq.mark_pending(entries))
    for entry in entries:
        counts[entry['status']] += 1
        if entry['status'] == 'changed':
            print('IRQ %d (%s) -> %s%s' % (entry['irq'], entry['name'], entry['target'],
                                           ' (move pending)' if entry['pending'] else ''))
        elif entry['status'] == 'failed':
            print('IRQ %d (%s): %s' % (entry['irq'], entry['name'], entry['msg']))
    record(entries)
    print('inferops-irq-pin: %(changed)d pinned, %(unchanged)d already pinned, '
          '%(managed)d kernel-managed, %(failed)d failed, %(pending)d move(s) pending' % counts)
    return 1 if counts['failed'] or problems else 0


def record(entries):
    """Merge what the kernel answered into the record of this boot (irq.RECORD)."""
    new = irq.update_record(irq.sysfs.read_attr(irq.RECORD), irq.boot_id(), entries)
    if new is not None:
        save(irq.RECORD, new)


def save(path, content):
    """A runtime file; one that cannot be written is reported, the pins stand."""
    try:
        irq.save_record(irq.sysfs.host_path(path), content)
    except OSError as exc:
        print('inferops-irq-pin: cannot write %s: %s' % (path, exc))


def policy(number):
    """irqbalance policy script: ban the IRQs the rules pin."""
    try:
        rules = load_rules(RULES)[0]
    except (OSError, ValueError, irq.IrqError):
        return 0
    name = irq.irq_name(number) or read_names().get(number)
    resolve(rules)
    if name is not None and any(rule['matched'] for rule in irq.match_rules(rules, {number: name})):
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
