#!/usr/bin/env bash
# The whole test suite: static checks, sanity, unit tests, the collection
# build, and every molecule scenario on lab guests. Installs what it needs.
# Usage: tools/test.sh [stage ...]   (default: all stages; see `stages` below)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit
logs="$root/.cache/test-logs"
mkdir -p "$logs"

bash tools/bootstrap.sh || { echo "summary: 0 passed, 1 failed"; exit 1; }
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 NO_COLOR=1

stage_yamllint() { yamllint -s .; }
stage_ansible_lint() { ansible-lint --profile production --offline; }
stage_changelog() { antsibull-changelog lint; }
stage_role_docs() { python tools/role_readme.py --check; }
# promtool check/test rules on monitoring/prometheus/ (docs/monitoring.md), about 1 s.
stage_alert_rules() { tools/check-alert-rules.sh; }
# The rollout's mechanics and verify gate ride along, the whole of tests/rollout/run.sh (about 3 min;
# its --ci subset until stop 38): no guest, hosts that are the controller itself. Since stop 38 they
# stand in CI for molecule/rollout, the same rollouts on three guests (molecule/by_hand.txt).
stage_preflight() {
  local status=0
  bash tests/preflight/run.sh || status=1
  bash tests/rollout/run.sh || status=1
  return "$status"
}
# ansible-test passes a sanity test whose program is missing (with a warning),
# pytest passes with skipped tests: neither may count as passed in CI.
fail_on_skips() {
  local pattern=$1 message=$2 out rc
  shift 2
  out=$(mktemp)
  "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if grep -qE "$pattern" "$out"; then
    echo "$message"
    rc=1
  fi
  rm -f "$out"
  return "$rc"
}
stage_sanity() {
  fail_on_skips 'Required program .* not found' \
    "sanity: a test was skipped because its program is missing (above): install it in tools/bootstrap.sh" \
    tools/ansible-test.sh sanity
}
stage_units() {
  fail_on_skips '^=+ .*[0-9]+ skipped' \
    "units: tests were skipped (above): install what they need in tools/bootstrap.sh or tests/unit/requirements.txt" \
    tools/ansible-test.sh units
}
stage_build() { tools/check-build.sh; }
stage_ee() { tools/check-ee.sh; }
stage_awx_project() { tools/check-awx-project.sh; }
# A fresh clone without bootstrap: ansible, ansible-doc, ansible-playbook, with and without the
# ansible bundle (README, "From a clone"), 20-30 s.
stage_fresh_clone() { tools/check-clone.sh; }
stage_docs() { tools/check-docs.sh; }
# Both suites' images, before the guest lanes start: a recipe change rebuilt trixie's inside seed_node's create
# otherwise, beside three busy guests (645 s of its critical path in session 31's run; about 100 s here alone).
stage_lab_image() { tools/inferops-lab image && tools/inferops-lab image --suite trixie; }
# Molecule's "[<scenario> > <action>] Executing" lines get the stage's elapsed time,
# so a log shows which action took the time; ansible.posix.profile_tasks adds each task's
# time (tools/bench/molecule_profile.py <log> sums them per action and lists the slowest).
stage_molecule() {
  local line start=$SECONDS
  ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks molecule test -s "$1" 2>&1 | while IFS= read -r line || [[ -n $line ]]; do
    [[ $line == *"[$1 > "*"] Executing"* ]] && line+=" (at +$((SECONDS - start))s)"
    printf '%s\n' "$line"
  done
  return "${PIPESTATUS[0]}"
}

# A scenario that does not pass yet is listed in molecule/pending.txt
# ("<scenario> <reason>"): it is reported as not run, never counted as passed.
# A scenario that passes but does not fit CI's two cores beside the others is listed in
# molecule/by_hand.txt ("<scenario> <what CI runs instead>"): reported as not run in CI, run by
# `tools/test.sh molecule:<scenario>` (docs/development.md, "CI time").
scenarios=() pending=() by_hand=()
for file in molecule/*/molecule.yml; do
  name=$(basename "$(dirname "$file")")
  if grep -q "^$name " molecule/pending.txt 2>/dev/null; then
    pending+=("$name")
  elif grep -q "^$name " molecule/by_hand.txt 2>/dev/null && (($# == 0)); then
    by_hand+=("$name")
  else
    scenarios+=("$name")
  fi
done

# The other ansible-core releases (requirements/core/<2.X>.txt; docs/release.md, "Tested ansible-core"):
# units@2.X and sanity@2.X are the stages units and sanity with that ansible-core (INFEROPS_CORE=2.X,
# tools/ansible-test.sh). tools/check-build.sh holds requires_ansible to the files. CI runs the ends of
# the range beside 2.19's own stages - units on the lowest and the highest, sanity on the highest: each
# extra stage took 146-420 s beside a QEMU guest, and the static lane shares 2 cores with three guest
# lanes (the last CI run was 4768 s of its 5400). `tools/test.sh units@2.18 sanity@2.20 ...` runs the
# others by hand (all passed on 2026-12-06; docs/release.md).
cores=()
for file in requirements/core/*.txt; do cores+=("$(basename "$file" .txt)"); done
core_stages=()
((${#cores[@]})) && core_stages+=("units@${cores[0]}" "units@${cores[-1]}" "sanity@${cores[-1]}")

stages=(yamllint ansible_lint changelog role_docs alert_rules preflight sanity units "${core_stages[@]}" build ee
  awx_project fresh_clone docs lab_image)
# Four lanes run at once (see the end of this file): three guest lanes that take the guest
# scenarios from one queue, in this order, each the next one as soon as it is free, and the
# static lane (the stages above, then every scenario without a guest). nvmeof_pool (two
# guests), local_nvme and seed_node (one each; seed_node replaced serving_docker, which it contains) start together. rollout (three guests of 1 vCPU)
# left the queue at stop 38: stops 36 and 37 ran out of CI's 90 min with it (4422 s with local_nvme
# failing early, 5188 s), two cores carrying four guest lanes and the static lane (docs/development.md,
# "CI time"). Four 2-vCPU guests at once: the guests run
# on single-threaded TCG (one host thread each), and on 2026-12-06 this machine ran local_nvme,
# nvmeof_pool, serving_docker and a fourth busy guest at once, all passing (docs/development.md,
# "CI time"). Stop 20's CI, on multi-threaded TCG, had a fourth guest's kernel stall beside three
# others. Up to stop 34 a fixed lane ran nvmeof_pool then serving_docker: the critical path
# (2708 s + more than 2400 s in stop 34's CI run, which ran out of its 5400 s).
# ee (one small guest, about 4 min alone: the execution environment built offline and a playbook run
# in it) is last: it goes to the lane that frees first, long before seed_node ends.
guest_queue=(seed_node nvmeof_pool local_nvme ee)
for s in "${scenarios[@]}"; do stages+=("molecule:$s"); done
(($#)) && stages=("$@")

# Each stage's time limit in seconds (about 1.5x its slowest run in a clean-clone CI run,
# at most CI's own 5400 s less the bootstrap): a hung connection or a guest that never
# comes back costs minutes, not the whole CI budget. INFEROPS_STAGE_LIMIT_SCALE=2 doubles
# them all on a slow host. Stop 20's CI run (four guests at once): local_nvme 3693 s,
# nvmeof_pool 3388 s up to its last bad-input case, serving 563 s. local_nvme now carries
# kernel_tuning's checks too (about 80 guest tasks more) beside one guest less. serving_docker:
# 1000-1250 s alone, about 2000 s in session 16's CI run (beside local_nvme and rollout); 3600 s since
# 2026-12-06, when a clean-clone run on this machine type ran every guest stage 1.6-2x slower than the
# week before and serving_docker hit 3000 s in its verify (beside six other guests, one run of mine);
# 5100 s since stop 34's CI run, where it took 4674 s of its 4800 beside nvmeof_pool and local_nvme; seed_node
# (serving_docker with the storage roles and the health check) keeps that limit.
declare -A limit=(
  [molecule:local_nvme]=5100
  [molecule:nvmeof_pool]=5100 [units]=2400 [preflight]=1200
  [molecule:rollout]=1500 [molecule:seed_node]=5100
)
default_limit=600
scale=${INFEROPS_STAGE_LIMIT_SCALE:-1}
for fn in fail_on_skips $(compgen -A function stage_); do export -f "${fn?}"; done

# After a time-out: the guests' consoles say whether a guest hung, panicked or
# never came back; then the guests are stopped (molecule's destroy never ran).
report_timeout() {
  local lab="$root/.cache/lab/$1" console
  for console in "$lab"/*-console.log; do
    [[ -e $console ]] || continue
    echo "    --- last lines of $console"
    tail -n 30 "$console" | sed 's/^/    # /'
  done
  tools/inferops-lab down --name "$1" >/dev/null 2>&1 || true
}

# One stage: its result line (and, on failure, the failing task and the log's
# tail) printed as one block, its verdict appended to $results.
results="$logs/results"
run_stage() {
  local stage=$1 log="$logs/${1//:/-}.log" report rc took start seconds
  # units@2.X and sanity@2.X have the limits of units and sanity (the same tests; measured: units@2.X
  # 379-420 s, sanity@2.X 162-276 s with the first run's venvs).
  seconds=$(( ${limit[$stage]:-${limit[${stage%@*}]:-$default_limit}} * scale ))
  # In the lanes, every stage but the longest scenario (guest_queue's first) runs at nice 5, its guests'
  # QEMU too (inherited): the longest one gets about twice the CPU share of each other, so that it does
  # not run on alone at the end with a core idle (stop 37's CI: seed_node 4796 s of 4875, the other
  # guest stages done at 3132 s and 2854 s).
  local niceness=0
  [[ -n ${lanes:-} && $stage != "molecule:${guest_queue[0]}" ]] && niceness=5
  # A static stage at nice 5 beside four guests gets a fraction of its share alone: its limit doubles (stop 38's
  # CI: sanity timed out at 600 s, 243 s in the run before at nice 0; ansible_lint 557 s, 109 s before).
  [[ $niceness == 5 && $stage != molecule:* ]] && seconds=$((seconds * 2))
  start=$SECONDS
  if [[ $stage == molecule:* ]]; then
    # shellcheck disable=SC2016  # $1 is the inner shell's argument
    nice -n "$niceness" timeout --kill-after=30 "$seconds" bash -c 'stage_molecule "$1"' _ "${stage#molecule:}" >"$log" 2>&1
  elif [[ $stage == *@* ]]; then
    INFEROPS_CORE=${stage#*@} nice -n "$niceness" timeout --kill-after=30 "$seconds" bash -c "stage_${stage%@*}" >"$log" 2>&1
  else
    INFEROPS_CORE='' nice -n "$niceness" timeout --kill-after=30 "$seconds" bash -c "stage_$stage" >"$log" 2>&1
  fi
  rc=$?
  took=$((SECONDS - start))
  report=$(mktemp)
  if ((rc == 0)); then
    printf '%-28s PASS  %4ds\n' "$stage" "$took" >"$report"
    echo "PASS $stage" >>"$results"
  else
    echo "FAIL $stage" >>"$results"
    {
      if ((rc == 124 || rc == 137)); then
        printf '%-28s FAIL  %4ds  timed out after the stage limit of %ds (log: %s)\n' \
          "$stage" "$took" "$seconds" "$log"
        [[ $stage == molecule:* ]] && report_timeout "${stage#molecule:}"
      else
        printf '%-28s FAIL  %4ds  (log: %s)\n' "$stage" "$took" "$log"
      fi
      # The failing task's own message first (a tail shows only recaps): the last
      # failures, since refused bad inputs fail on purpose earlier in the log.
      grep -E -A 25 '^(fatal|failed): ' "$log" | tail -n 100 | sed 's/^/    ! /'
      tail -n 40 "$log" | sed 's/^/    | /'
    } >"$report"
  fi
  cat "$report"
  rm -f "$report"
}
run_lane() { local stage; for stage in "$@"; do run_stage "$stage"; done; }

: >"$results"
if (($#)); then
  run_lane "${stages[@]}"
else
  # Three lanes at once, so that the longest chains start first (see
  # docs/development.md, "CI time"). The lab image comes first: the guests boot
  # from it.
  run_stage lab_image
  lanes=1
  queued=() static_lane=()
  for stage in "${stages[@]}"; do
    case $stage in
      lab_image) ;;
      molecule:*)
        if [[ " ${guest_queue[*]} " == *" ${stage#molecule:} "* ]]; then
          queued+=("$stage")
        else
          static_lane+=("$stage")
        fi ;;
      *) static_lane+=("$stage") ;;
    esac
  done
  # The queue file, in guest_queue's order; a lane takes its first line under a lock.
  queue="$logs/guest-queue"
  for name in "${guest_queue[@]}"; do
    [[ " ${queued[*]} " == *" molecule:$name "* ]] && echo "molecule:$name"
  done >"$queue"
  next_guest_stage() {
    # shellcheck disable=SC2016 # $1 is the inner shell's argument
    flock "$queue.lock" bash -c 'head -n 1 "$1"; sed -i 1d "$1"' _ "$queue"
  }
  guest_lane() {
    local stage
    while stage=$(next_guest_stage) && [[ -n $stage ]]; do run_stage "$stage"; done
  }
  guest_pids=()
  for ((lane = 0; lane < 3; lane++)); do
    guest_lane &
    guest_pids+=($!)
  done
  run_lane "${static_lane[@]}"
  wait "${guest_pids[@]}"
fi

passed=$(grep -c '^PASS ' "$results")
mapfile -t failed_names < <(sed -n 's/^FAIL //p' "$results")
failed=${#failed_names[@]}
((failed)) && echo "failed stages: ${failed_names[*]}"
for name in "${pending[@]}"; do
  echo "not run (pending): molecule:$(grep "^$name " molecule/pending.txt)"
done
for name in "${by_hand[@]}"; do
  echo "not run in CI (by hand): molecule:$(grep "^$name " molecule/by_hand.txt)"
done
echo "summary: $passed passed, $failed failed"
((failed == 0))
