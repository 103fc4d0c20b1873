#!/usr/bin/env bash
# playbooks/preflight.yml against the example inventories (must pass) and
# tests/preflight/bad_inventory (each bad host must fail, for its reason), then
# with the host checks on tests/preflight/host_checks.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit
status=0

for inventory in inventories/*/; do
  if ansible-playbook -i "$inventory" playbooks/preflight.yml >"/tmp/preflight.$$" 2>&1; then
    echo "pass: $inventory"
  else
    echo "FAIL: $inventory is an example inventory and must pass:"; cat "/tmp/preflight.$$"; status=1
  fi
done

ansible-playbook -i tests/preflight/bad_inventory playbooks/preflight.yml >"/tmp/preflight.$$" 2>&1
out=$(sed -e ':a' -e 'N' -e '$!ba' -e 's/\n\s*/ /g' "/tmp/preflight.$$")  # one line: messages are folded
rm -f "/tmp/preflight.$$"
expect() {  # host, text its refusal must contain (one refusal lists every refused host)
  if grep -qE "preflight refused [^.]*\b$1\b" <<<"$out" && grep -qF -- "$2" <<<"$out"; then
    echo "refused: $1 ($2)"
  else
    echo "FAIL: $1 was not refused with: $2"; status=1
  fi
}
expect misspelt-var 'nvme_sched_readahead_kb is not a variable of role nvme_sched (did you mean nvme_sched_read_ahead_kb?)'
expect wrong-type "argument 'nvme_sched_read_ahead_kb' is of type str"
expect wrong-choice 'value of kernel_tuning_thp must be one of: always, madvise, never'
expect unknown-transport 'nvmeof_initiator_connections[0] (traddr=10.0.0.1): value of transport must be one of: tcp, rdma, fc, got: infiniband'
expect several-problems 'md_raid_xfs_arrays[1] (name=index): value of level must be one of: 0, 1, 10, got: 5'
expect several-problems "irq_affinity: argument 'irq_affinity_irqbalance' is of type str"
if grep -qF 'problem(s)' <<<"$out" && grep -qE 'several-problems.*\(2 problem\(s\)\)' <<<"$out"; then
  echo "refused: several-problems with both problems in one message"
else
  echo "FAIL: several-problems must be refused with both problems at once"; status=1
fi
expect bad-k8s-worker 'value of transport must be one of: tcp, rdma, got: infiniband'
expect misspelt-serving 'warmup_qsp is not a variable of role warmup (did you mean warmup_qps?)'
expect bad-node-health 'value of node_health_node_exporter must be one of: install, existing, got: docker'
if grep -qE 'good-local +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0' <<<"$out"; then
  echo "pass: good-local"
else
  echo "FAIL: good-local must pass"; status=1
fi

# The host checks: a refusal rescued on target1 must not cut off compute1's
# checks (k8s_node_labels' validation runs to its end), and ghost, unreachable,
# is refused with the others in the one verdict.
ansible-playbook -i tests/preflight/host_checks playbooks/preflight.yml -e inferops_preflight_on_hosts=true \
  >"/tmp/preflight.$$" 2>&1
out=$(sed -e ':a' -e 'N' -e '$!ba' -e 's/\n\s*/ /g' "/tmp/preflight.$$")
rm -f "/tmp/preflight.$$"
expect target1 'host NQN unknown for compute1, ghost'
expect compute1 'value of transport must be one of: tcp, rdma, fc, got: infiniband'
expect ghost 'ghost: its host checks did not finish (unreachable'
# warmup's endpoints come from triton_compose at run time: the preflight still checks its rates.
expect serving1 'warmup_qps = 0: must be a number above 0 and at most 10000'
expect serving1 'triton_compose_bind_address = "300.1.1.1": must be an IP address'
expect serving1 'node_health_sysstat_interval_minutes = 30: must be a whole number of minutes from 1 to 10'
if grep -qE 'TASK \[inferops.node.k8s_node_labels : Validate the prefix[^]]*\] \** ok: \[compute1\]' <<<"$out"; then
  echo "pass: compute1's k8s_node_labels checks ran beside target1's rescued refusal"
else
  echo "FAIL: compute1's k8s_node_labels checks must run to the end"; status=1
fi

# The host checks follow --skip-tags: a run that leaves k8s_node_labels out does not run its host
# checks (an engine managed elsewhere, --skip-tags docker_engine, is the same rule); the inputs are
# still all checked (compute1's transport).
ansible-playbook -i tests/preflight/host_checks playbooks/preflight.yml -e inferops_preflight_on_hosts=true \
  --skip-tags k8s_node_labels >"/tmp/preflight.$$" 2>&1
out=$(sed -e ':a' -e 'N' -e '$!ba' -e 's/\n\s*/ /g' "/tmp/preflight.$$")
rm -f "/tmp/preflight.$$"
expect compute1 'value of transport must be one of: tcp, rdma, fc, got: infiniband'
if grep -qF 'TASK [inferops.node.k8s_node_labels : ' <<<"$out"; then
  echo "FAIL: --skip-tags k8s_node_labels must skip k8s_node_labels' host checks"; status=1
elif grep -qF 'TASK [inferops.node.nvmeof_target : ' <<<"$out"; then
  echo "pass: --skip-tags k8s_node_labels skipped its host checks, the other roles' ran"
else
  echo "FAIL: the other roles' host checks must still run with --skip-tags k8s_node_labels"; status=1
fi
exit $status
