# Managed by inferops.node (role nic_queues); local changes are overwritten.
"""Re-apply the NIC queue settings of the nic_queues role: RPS/XPS masks per queue and the queue IRQs
of each chosen interface, after telling a running irqbalance to leave those IRQs alone.

Installed as the __main__.py of /usr/local/lib/inferops-nic-queues.pyz and run through the wrapper
/usr/local/sbin/inferops-nic-queues (python3 -ES) by inferops-nic-queues.service:

  inferops-nic-queues [CONFIG_JSON]    default /etc/inferops/nic-queues.json:
                                       {"interfaces": [...], "cpu_groups": [...], "irqbalance_ban": bool}

The interfaces are found again by their selector (MAC, PCI address or name), so renamed interfaces
and renumbered IRQs do not matter. The code is the collection's plugins/module_utils/interrupts/nic_queues.py -
the code of the inferops.node.nic_queues module - installed with its siblings as the package
inferops in the same zip application (inferops.node.boot_package).
"""
import json
import sys

# The package inferops is in the same zip application as this script (inferops.node.boot_package).
try:
    from inferops.interrupts import irq, nic_queues
except ImportError:  # unit tests: the collection itself
    from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq, nic_queues

CONFIG = '/etc/inferops/nic-queues.json'


def apply(path):
    try:
        with open(path) as handle:
            config = json.load(handle)
        online = irq.online_cpus()
    except (OSError, ValueError, irq.IrqError) as exc:
        print('inferops-nic-queues: %s' % exc)
        return 1
    wanted, errors = nic_queues.select(config.get('interfaces') or [], 'interfaces', config.get('cpu_groups') or None, online)
    for error in errors:
        # An interface that is not there (yet): the udev rule starts this again when it appears.
        print('inferops-nic-queues: skipped: %s' % error)
    planned = nic_queues.plan(wanted)
    vectors = nic_queues.irq_plan(planned, online)
    if config.get('irqbalance_ban', True) and vectors:
        try:
            # irqbalance opens its socket some seconds after it starts (this unit runs after it).
            nic_queues.irqbalance_ban([e['irq'] for e in vectors], wait=nic_queues.IRQBALANCE_WAIT)
        except nic_queues.NicError as exc:
            print('inferops-nic-queues: %s' % exc)
    nic_queues.apply(planned['queues'])
    irq.apply(vectors)
    failed = 0
    for entry in planned['queues']:
        if entry['status'] == 'changed':
            print('%s %s -> %s (CPUs %s)' % (entry['interface'], entry['queue'], entry['target'], entry['cpus']))
        elif entry['status'] == 'failed':
            failed += 1
            print('%s %s: %s' % (entry['interface'], entry['queue'], entry['msg']))
    for entry in vectors:
        if entry['status'] == 'changed':
            print('IRQ %d (%s) -> %s' % (entry['irq'], entry['name'], entry['target']))
        elif entry['status'] == 'failed':
            failed += 1
            print('IRQ %d (%s): %s' % (entry['irq'], entry['name'], entry['msg']))
    print('inferops-nic-queues: %d interface(s), %d queue(s), %d IRQ(s), %d failed, %d skipped' % (
        len(wanted), len(planned['queues']), len(vectors), failed, len(errors)))
    return 1 if failed else 0


def main(argv):
    return apply(argv[1] if len(argv) > 1 else CONFIG)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
