#!/usr/bin/env bash
# A fresh clone works with no bootstrap step (README, "From a clone"): ansible, ansible-doc and
# ansible-playbook resolve inferops.node through ansible.cfg's collections_path, whose first entry
# is the committed link collections/ansible_collections/inferops/node -> the clone's root, and
# whose other entries are ansible-core's defaults (~/.ansible/collections, where dependencies are
# usually installed). Every command runs in the clone with an empty environment: no ANSIBLE_*
# variable, an empty home, PATH without the venv (its programs by their full paths).
#  1. ansible-core with the `ansible` bundle (the venv's, collections in site-packages).
#  2. Plain ansible-core: ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false hides the bundle's collections
#     (what a pip install of ansible-core alone has); site.yml must fail until the dependencies
#     are installed with `ansible-galaxy collection install -r`, into the home's
#     ~/.ansible/collections, then pass. Galaxy is not reachable here: the requirements file
#     names requirements.yml's collections (and what they depend on) as local directories, the
#     bundle's copies, installed --offline.
#  3. The same install run inside the clone, with no -p, lands in the clone's collections/
#     (collections_path's first entry): git must not see it (.gitignore), and site.yml passes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$(dirname "$(command -v ansible-playbook)")
bundle=$("$bin/python" -c 'import ansible_collections, os; print(list(ansible_collections.__path__)[0])')
scratch=$(mktemp -d /tmp/inferops-clone.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
clone="$scratch/clone"
git clone -q --no-hardlinks "$root" "$clone"
[[ -z $(git -C "$root" status --porcelain) ]] ||
  echo "clone: the working tree has uncommitted changes: this checks the commit $(git -C "$root" rev-parse --short HEAD)"

run() {  # dir home [VAR=value ...] program args...: in dir, with an empty environment
  local dir=$1 home=$2
  shift 2
  (cd "$dir" && env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@")
}
# The three commands; $1: the home, the rest: extra environment.
three_commands() {
  local home=$1 out
  shift
  out=$(run "$clone" "$home" "$@" "$bin/ansible" localhost -m inferops.node.page_cache \
    -a 'paths=README.md state=resident' --check 2>&1) ||
    { echo "$out"; echo "clone: ansible -m inferops.node.page_cache failed"; return 1; }
  grep -q '^localhost | SUCCESS' <<<"$out" || { echo "$out"; echo "clone: no SUCCESS from page_cache"; return 1; }
  out=$(run "$clone" "$home" "$@" "$bin/ansible-doc" inferops.node.page_cache 2>&1) ||
    { echo "$out"; echo "clone: ansible-doc inferops.node.page_cache failed"; return 1; }
  grep -q "$clone/collections/ansible_collections/inferops/node/plugins/modules/page_cache.py" <<<"$out" ||
    { echo "$out"; echo "clone: ansible-doc did not read the clone's page_cache"; return 1; }
  # site.yml (its playbook-adjacent collections/ would do alone) and a playbook elsewhere,
  # which only collections_path serves.
  run "$clone" "$home" "$@" "$bin/ansible-playbook" --syntax-check site.yml tests/rollout/gates.yml
}

mkdir "$scratch/home1" "$scratch/home2" "$scratch/home3"
echo "clone: 1. ansible-core with the ansible bundle, no bootstrap"
three_commands "$scratch/home1"

echo "clone: 2. plain ansible-core (the bundle hidden)"
plain=(ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false)
if run "$clone" "$scratch/home2" "${plain[@]}" "$bin/ansible-playbook" --syntax-check site.yml >"$scratch/out" 2>&1; then
  cat "$scratch/out"
  echo "clone: site.yml passed without its dependencies: the bundle's collections are not hidden"
  exit 1
fi
echo "clone: without the dependencies site.yml fails, as expected: $(grep -m1 -o "couldn't resolve module/action '[^']*'" "$scratch/out" || tail -n 1 "$scratch/out")"
# requirements.yml's collections and, recursively, what their MANIFEST.json says they depend on.
"$bin/python" - "$root/requirements.yml" "$bundle" >"$scratch/requirements.yml" <<'PY'
import json
import os
import sys

import yaml

bundle = sys.argv[2]
todo = [c["name"] for c in yaml.safe_load(open(sys.argv[1]))["collections"]]
seen = []
while todo:
    name = todo.pop()
    if name in seen:
        continue
    seen.append(name)
    path = os.path.join(bundle, *name.split("."))
    todo += json.load(open(os.path.join(path, "MANIFEST.json")))["collection_info"]["dependencies"] or []
print(yaml.safe_dump({"collections": [
    {"name": os.path.join(bundle, *name.split(".")), "type": "dir"} for name in seen]}))
PY
run "$scratch" "$scratch/home2" "${plain[@]}" "$bin/ansible-galaxy" collection install --offline \
  -r "$scratch/requirements.yml" >/dev/null
[[ -d $scratch/home2/.ansible/collections/ansible_collections/community/general ]] ||
  { echo "clone: ansible-galaxy did not install into ~/.ansible/collections"; exit 1; }
three_commands "$scratch/home2" "${plain[@]}"

echo "clone: 3. plain ansible-core, the dependencies installed from inside the clone"
run "$clone" "$scratch/home3" "${plain[@]}" "$bin/ansible-galaxy" collection install --offline \
  -r "$scratch/requirements.yml" >/dev/null
[[ -d $clone/collections/ansible_collections/community/general ]] ||
  { echo "clone: ansible-galaxy did not install into the clone's collections/"; exit 1; }
if [[ -n $(git -C "$clone" status --porcelain) ]]; then
  git -C "$clone" status --short | head
  echo "clone: git sees the installed dependencies: .gitignore must hide collections/ansible_collections/*"
  exit 1
fi
run "$clone" "$scratch/home3" "${plain[@]}" "$bin/ansible-playbook" --syntax-check site.yml tests/rollout/gates.yml
echo "clone: a fresh clone resolves inferops.node for ansible, ansible-doc and ansible-playbook (with and without the bundle)"
