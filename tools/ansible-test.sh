#!/usr/bin/env bash
# Runs ansible-test against a copy of the checkout laid out as
# ansible_collections/inferops/node (ansible-test needs that path shape).
# Usage: tools/ansible-test.sh sanity|units [extra ansible-test args]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Outside the checkout (git would hide an ignored copy from ansible-test), and
# one per run so concurrent runs do not clobber each other.
scratch=$(mktemp -d /tmp/inferops-ansible-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
tree="$scratch/ansible_collections/inferops/node"
mkdir -p "$tree"
# Exactly the files git would ship: tracked plus untracked-but-not-ignored, less the
# playbook-adjacent links to the checkout itself (collections/, playbooks/collections/, for AWX
# projects: docs/awx.md): ansible-test checks what the artifact ships, and the artifact leaves
# them out (build_ignore).
(cd "$root" && git ls-files -co --exclude-standard -z) |
  grep -zv '^\(playbooks/\)\?collections/ansible_collections/' |
  rsync -a --from0 --ignore-missing-args --files-from=- "$root/" "$tree/"
cd "$tree"
export PATH="$root/.venv/bin:$PATH"
# Dependency collections come from the ansible bundle inside the venv.
site=$("$root/.venv/bin/python" -c 'import ansible_collections, os; print(os.path.dirname(os.path.dirname(ansible_collections.__path__[0])))')
export ANSIBLE_COLLECTIONS_PATH="$scratch:$site"
ansible-test "$@" --venv --python 3.11 --color no
