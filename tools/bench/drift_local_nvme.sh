#!/bin/sh
# Seven settings of a converged local-NVMe lab node changed behind the roles' backs (run on the node, as
# root), for tools/bench/site_run_cost.py --before-each: what "a drift repair of seven settings" costs.
# The audit's drift case (molecule/local_nvme/tasks/audit_drift.yml) makes the first four.
set -e
sysctl -q -w vm.swappiness=61
ns=$(basename "$(readlink -f /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL0)")
echo 128 > "/sys/block/$ns/queue/read_ahead_kb"
ctrl=$(basename "$(dirname "$(grep -l LABMODEL0 /sys/class/nvme/nvme*/serial)")")
irq=$(awk -v q="${ctrl}q0" '{ for (i = 2; i <= NF; i++) if ($i == q || $i == q ",") { sub(":", "", $1); print $1 } }' /proc/interrupts)
echo 1 > "/proc/irq/$irq/smp_affinity_list"
mount -o remount,relatime "$(findmnt -n -o SOURCE /data/models)" /data/models
other=$(basename "$(readlink -f /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1)")
echo mq-deadline > "/sys/block/$other/queue/scheduler"
sysctl -q -w vm.dirty_ratio=30
echo '# edited by hand' >> /etc/default/irqbalance
