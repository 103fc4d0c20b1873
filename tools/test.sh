#!/usr/bin/env bash
# The whole test suite: static checks, sanity, unit tests, the collection
# build, and every molecule scenario on lab guests. Installs what it needs.
# Usage: tools/test.sh [stage ...]   (default: all stages; see `stages` below)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
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
stage_preflight() { bash tests/preflight/run.sh; }
stage_sanity() { tools/ansible-test.sh sanity; }
stage_units() { tools/ansible-test.sh units; }
stage_build() { tools/check-build.sh; }
stage_lab_image() { tools/inferops-lab image; }
stage_molecule() { molecule test -s "$1"; }

# A scenario that does not pass yet is listed in molecule/pending.txt
# ("<scenario> <reason>"): it is reported as not run, never counted as passed.
scenarios=() pending=()
for file in molecule/*/molecule.yml; do
  name=$(basename "$(dirname "$file")")
  if grep -q "^$name " molecule/pending.txt 2>/dev/null; then
    pending+=("$name")
  else
    scenarios+=("$name")
  fi
done

stages=(yamllint ansible_lint changelog role_docs preflight sanity units build lab_image)
for s in "${scenarios[@]}"; do stages+=("molecule:$s"); done
(($#)) && stages=("$@")

passed=0 failed=0 failed_names=()
for stage in "${stages[@]}"; do
  log="$logs/${stage//:/-}.log"
  start=$SECONDS
  if [[ $stage == molecule:* ]]; then
    stage_molecule "${stage#molecule:}" >"$log" 2>&1
  else
    "stage_$stage" >"$log" 2>&1
  fi
  rc=$?
  took=$((SECONDS - start))
  if ((rc == 0)); then
    passed=$((passed + 1))
    printf '%-28s PASS  %4ds\n' "$stage" "$took"
  else
    failed=$((failed + 1))
    failed_names+=("$stage")
    printf '%-28s FAIL  %4ds  (log: %s)\n' "$stage" "$took" "$log"
    # The failing task's own message first (a tail shows only recaps): the last
    # failures, since refused bad inputs fail on purpose earlier in the log.
    grep -E -A 25 '^(fatal|failed): ' "$log" | tail -n 100 | sed 's/^/    ! /'
    tail -n 40 "$log" | sed 's/^/    | /'
  fi
done
((failed)) && echo "failed stages: ${failed_names[*]}"
for name in "${pending[@]}"; do
  echo "not run (pending): molecule:$(grep "^$name " molecule/pending.txt)"
done
echo "summary: $passed passed, $failed failed"
((failed == 0))
