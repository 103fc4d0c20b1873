#!/usr/bin/env bash
# playbooks/rollout.yml's mechanics on three hosts that are the controller itself
# (no guest): a clean rollout in the planned waves, a failure injected into the
# second wave halting with the third host untouched, and the rerun resuming;
# then an NVMe-oF pool's tiers (targets before initiators) on four such hosts;
# last, the built-in verify gate (gates.yml) against a real tritonserver on the
# controller (tests/triton_host_server.sh).
#
# --ci: the subset CI runs (stage preflight of tools/test.sh, about 70 s): the
# failure within a budget, the bad input refused and the pool's bad input, halt
# and resume, the verify gate - nine of the thirteen ansible-playbook runs; the mechanics group's clean
# rollout, its rerun and its halt and resume are left to a full run (and to the
# unit tests of the plan and the record; molecule/rollout runs them on guests).
set -uo pipefail
ci=false
[[ ${1:-} == --ci ]] && ci=true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit
work=$(mktemp -d)
# shellcheck source=tests/triton_host_server.sh
. tests/triton_host_server.sh
trap 'triton_stop; rm -rf "$work"' EXIT
status=0
gates=$root/tests/rollout
# One ansible-playbook run of the rollout, its output in $work/<name>.out: the inventory's site groups
# are given no roles (the mechanics are under test, not the roles), the gates log to $work/log.
rollout() {  # name, inventory, group(s), site groups as JSON, state file, extra args...
  local name=$1 inventory=$2 group=$3 sites=$4 state=$5; shift 5
  ansible-playbook -i "$inventory" playbooks/rollout.yml \
    -e "{\"__inferops_site_roles\": $sites}" \
    -e "inferops_rollout_group=$group" -e "inferops_rollout_state_file=$state" \
    -e '{"inferops_rollout_waves": [1, "100%"]}' -e inferops_rollout_max_wave=1 \
    -e "inferops_rollout_drain_tasks=$gates/drain.yml" -e "inferops_rollout_verify_tasks=$gates/verify.yml" \
    -e "inferops_rollout_undrain_tasks=$gates/undrain.yml" -e "rollout_test_log=$work/log" "$@" \
    >"$work/$name.out" 2>&1
}
run() {  # name, extra args...: the mechanics group, three hosts
  local name=$1; shift
  rollout "$name" tests/rollout/inventory.yml mechanics '{"mechanics": []}' "$work/state.json" "$@"
}
check() {  # description, command...
  local what=$1; shift
  if "$@"; then echo "pass: $what"; else echo "FAIL: $what"; status=1; fi
}
log() { tr '\n' ',' <"$work/log"; }
state() { python3 -c "import json,sys; s=json.load(open('$work/state.json')); print(($1,))"; }

if ! $ci; then
# 1. clean: node1 (canary), node2, node3, each drain -> verify -> undrain
run clean; rc=$?
check "clean rollout exits 0" test "$rc" = 0
check "clean rollout in three waves, each host drained, verified, undrained in turn" test "$(log)" = \
  "drain node1,verify node1,undrain node1,drain node2,verify node2,undrain node2,drain node3,verify node3,undrain node3,"
check "state records all three done" test "$(state "s['done']")" = "(['node1', 'node2', 'node3'],)"
run again; rc=$?
check "a rerun of a finished rollout changes nothing" grep -q "all 3 host(s) done already" "$work/again.out"
check "... and touches no host" test "$(wc -l <"$work/log")" = 9

# 2. failure in the second wave: halt, node3 untouched, node2 left drained
rm -f "$work/state.json" "$work/log"
run fail -e rollout_test_fail_host=node2; rc=$?
check "the halted rollout fails (rc $rc)" test "$rc" != 0
check "node3 untouched, node2 not undrained" test "$(log)" = \
  "drain node1,verify node1,undrain node1,drain node2,verify node2,"
check "the halt names host, step, task and the untouched host" grep -q \
  'halted after wave 2 of 3: 1 failed host(s) exceed the failure budget of 0. node2 failed at step verify (task "Fail where the test injects a failure"): injected failure on node2. Done: node1. Left untouched: node3.' \
  "$work/fail.out"
check "state: node1 done, node2 failed at verify, node3 untouched" test \
  "$(state "s['done'], s['failed']['node2']['step'], s['halted']['untouched']")" = "(['node1'], 'verify', ['node3'])"

# 3. the rerun after the fix resumes: node2 first, then node3; node1 not touched
: >"$work/log"
run resume; rc=$?
check "the resumed rollout exits 0" test "$rc" = 0
check "it resumes with node2, then node3" test "$(log)" = \
  "drain node2,verify node2,undrain node2,drain node3,verify node3,undrain node3,"
check "state: all done, nothing failed, no halt" test \
  "$(state "s['done'], s['failed'], s['halted']")" = "(['node1', 'node2', 'node3'], {}, None)"

fi

# 4. within a failure budget of 1 the rollout goes on past node2, and the run still ends failed
rm -f "$work/state.json" "$work/log"
run budget -e rollout_test_fail_host=node2 -e inferops_rollout_failure_budget=1; rc=$?
check "within the budget: node3 converged after node2 failed, node2 left drained" test "$(log)" = \
  "drain node1,verify node1,undrain node1,drain node2,verify node2,drain node3,verify node3,undrain node3,"
check "... and the run ends failed (rc $rc) naming the host left drained" test "$rc" != 0 -a \
  "$(grep -c 'failed (left drained; a rerun retries them): node2' "$work/budget.out")" -ge 1

# 5. bad input is refused before any host is touched
rm -f "$work/state.json" "$work/log"
run bad -e inferops_rollout_wave=2 -e '{"inferops_rollout_max_wave": "all"}' --skip-tags warmup; rc=$?
check "bad input refused (rc $rc), naming variable, value and fix" grep -qF \
  'inferops_rollout_max_wave = "all": not a host count or a percentage; use a whole number of hosts (2) or a percentage of the fleet ("10%")' \
  "$work/bad.out"
check "... the misspelt variable too" grep -qF 'inferops_rollout_wave = "2": not a rollout variable (misspelt?)' "$work/bad.out"
check "... and --skip-tags" grep -qF -- '--skip-tags warmup: the rollout converges every role of the site' "$work/bad.out"
check "... and no host was touched" test ! -e "$work/log"

# 6. an NVMe-oF pool in one rollout: every target before any initiator; a target failing within the
#    budget halts at the end of the targets' tier with the initiators untouched; the rerun resumes
# The initiators are Kubernetes workers (pool_inventory.yml), so they converge a role, their labels: the
# built-in audit gate, which runs on a host with roles, is off - its reads need systemd and the node's
# hardware, which the controller standing in for the hosts does not have (md_info's systemctl fails).
pool() {  # name, extra args...: the pool's two groups, listed initiators first, a failure budget of 1
  local name=$1; shift
  rollout "$name" tests/rollout/pool_inventory.yml nvmeof_initiators:nvmeof_targets \
    '{"nvmeof_targets": [], "nvmeof_initiators": [], "k8s_workers": ["k8s_node_labels"]}' "$work/pool.json" \
    -e inferops_rollout_failure_budget=1 -e "rollout_test_work=$work" -e '{"inferops_rollout_audit_severities": []}' "$@"
}
rm -f "$work/log"
pool pool_bad -e k8s_node_labels_expiry_hours=0; rc=$?
check "pool: the preflight checks the workers' labels input though k8s_workers is not named (rc $rc)" grep -qF \
  'k8s_node_labels: invalid input, nothing was changed: k8s_node_labels_expiry_hours = "0"' "$work/pool_bad.out"
check "... and no host was touched" test ! -e "$work/log" -a ! -e "$work/labels-i1" -a ! -e "$work/pool.json"
pool pool_fail -e rollout_test_fail_host=t2; rc=$?
check "pool: the targets first, t2 fails within the budget, no initiator touched (rc $rc)" test "$rc" != 0 -a \
  "$(log)" = "drain t1,verify t1,undrain t1,drain t2,verify t2,"
check "... the halt says why" grep -qF 'nvmeof_targets not all done (failed: t2), and nvmeof_initiators must not start' \
  "$work/pool_fail.out"
: >"$work/log"
pool pool_resume; rc=$?
check "pool: the rerun retries t2, then the initiators (rc $rc)" test "$rc" = 0 -a "$(log)" = \
  "drain t2,verify t2,undrain t2,drain i1,verify i1,undrain i1,drain i2,verify i2,undrain i2,"
# The initiators are workers (pool_inventory.yml): their labels role ran although the rollout does not
# name k8s_workers, after nvmeof_initiator's (empty) roles, and no target got one.
check "pool: each initiator relabelled by the rollout, no target" test \
  "$(cd "$work" && echo labels-*)" = "labels-i1 labels-i2"
check "... the feature file with its expiry" grep -q '^# +expiry-time=20' "$work/labels-i1"

# 7. the built-in verify gate (playbooks/tasks/rollout_verify.yml) against a real tritonserver on the
#    controller (tests/triton_host_server.sh, the lab's toy model identity), warmed up by the warmup role
PYTHON=${PYTHON:-$root/.venv/bin/python} WORK=$work/triton PORT=${GATE_PORT:-28660}
mkdir -p "$WORK/models"
cp -r molecule/serving/files/models/identity "$WORK/models/identity"
gate() {  # case: tests/rollout/gates.yml on the controller, its output in $work/gate_<case>.out
  ansible-playbook -i gates, -c local tests/rollout/gates.yml -e "ansible_python_interpreter=$PYTHON" \
    -e "gate_case=$1" -e "gate_url=http://127.0.0.1:$PORT" -e "gate_repository=$WORK/models" -e "gate_work=$work" \
    >"$work/gate_$1.out" 2>&1
}
# passed TASK CASE: the gate task ran and passed in that case's output (not skipped, not failed)
# shellcheck disable=SC2317  # called through check
passed() { "$PYTHON" - "$work/gate_$2.out" "$1" <<'PY'
import re, sys
text, task = open(sys.argv[1]).read(), sys.argv[2]
block = re.search(r'TASK \[' + re.escape(task) + r'\][^\n]*\n(.*?)(?=\nTASK |\nPLAY RECAP)', text, re.S)
sys.exit(0 if block and re.search(r'^ok: ', block.group(1), re.M) and 'failed:' not in block.group(1)
         and 'fatal:' not in block.group(1) else 1)
PY
}
if triton_start gates "$WORK/models"; then
  gate healthy; rc=$?
  check "gate: a healthy Triton node passes the built-in verify gate (rc $rc)" test "$rc" = 0
  for task in "Gate - every Triton instance ready" "Gate - every model ready on every instance" \
      "Gate - the warm-up P99 of every model within inferops_rollout_warmup_p99_ms"; do
    check "... $task ran and passed" passed "$task" healthy
  done
  gate slow; rc=$?
  check "gate: a warm-up P99 above the bound stops the host (rc $rc), naming model, endpoint, P99 and bound" \
    test "$rc" != 0 -a "$(grep -cE "warm-up of model identity on http://127.0.0.1:$PORT: P99 [0-9.]+ ms \(steady_p99_ms\) above the bound of 0.001 ms" "$work/gate_slow.out")" -ge 1
  gate missing_model; rc=$?
  check "gate: a model the servers do not serve stops the host at the model gate (rc $rc)" test "$rc" != 0 -a \
    "$(grep -c "/v2/models/missing/ready" "$work/gate_missing_model.out")" -ge 1
  check "... after the instance gate passed" passed "Gate - every Triton instance ready" missing_model
  triton_stop
  gate down; rc=$?
  check "gate: a server that does not answer stops the host at the instance gate (rc $rc)" test "$rc" != 0 -a \
    "$(grep -A3 "TASK \[Gate - every Triton instance ready\]" "$work/gate_down.out" | grep -c "failed:")" -ge 1
else
  check "gate: tritonserver started on the controller ($WORK/gates.log)" false
fi

if [ "$status" != 0 ]; then
  for out in "$work"/*.out; do echo "== $out"; tail -40 "$out"; done
fi
exit "$status"
