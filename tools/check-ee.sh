#!/usr/bin/env bash
# The execution environment definitions (docs/awx.md), offline, without a
# container runtime or a registry:
#  1. `ansible-builder create` of ee/execution-environment.yml, with no network,
#     gives exactly the committed ee/Containerfile (a new ansible-builder or a
#     changed definition shows up as a diff: review it, then copy it over);
#  2. the collection artifact carries its controller requirements: ansible-builder's
#     introspection of the installed tarball finds meta/execution-environment.yml's
#     Python and system requirements;
#  3. each Python requirement of the EE is one CI installs (requirements/*.txt);
#  4. the image's ansible-core is the newest release CI tests (requirements/core/), its
#     ansible-runner the one CI runs it with (requirements/ee.txt).
# Building the image and running a playbook in it against a lab guest: molecule/ee.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Without a network namespace (unshare -n needs root or user namespaces) the step runs with the
# network, and says so: "offline" is then not what was shown.
if unshare -n true 2>/dev/null; then
  offline=(unshare -n) network="offline"
else
  offline=() network="WITH the network (unshare -n is not permitted here; offline not shown)"
fi

"${offline[@]}" ansible-builder create -f "$root/ee/execution-environment.yml" -c "$scratch/context" >/dev/null
if ! diff -u "$root/ee/Containerfile" "$scratch/context/Containerfile"; then
  echo "ee/Containerfile differs from what ansible-builder $(ansible-builder --version) creates (diff above);"
  echo "if the change is wanted: cp $scratch/context/Containerfile ee/Containerfile (after review)"
  exit 1
fi
echo "ee: ansible-builder create ($network) matches ee/Containerfile"

touch "$scratch/empty.cfg"
ANSIBLE_CONFIG="$scratch/empty.cfg" ansible-galaxy collection build "$root" --output-path "$scratch" --force >/dev/null
# (its warning that the scratch path is not a configured collections path is expected)
ANSIBLE_CONFIG="$scratch/empty.cfg" ansible-galaxy collection install "$scratch"/inferops-node-*.tar.gz \
  -p "$scratch/collections" --no-deps --force >"$scratch/install.log" 2>&1 || { cat "$scratch/install.log"; exit 1; }
found=$(ansible-builder introspect --sanitize "$scratch/collections")
status=0
while read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  if grep -qF -- "- '$line  # from collection inferops.node'" <<<"$found"; then
    echo "ee: the artifact declares: $line"
  else
    echo "ee: ansible-builder does not find '$line' in the installed artifact:"; echo "$found"; status=1
  fi
done < <(cat "$root/meta/ee-requirements.txt" "$root/meta/ee-bindep.txt")

pinned=$(cat "$root"/requirements/*.txt | sed -e 's/#.*//' -e 's/[<>=!~ ;\[].*//' | tr 'A-Z_' 'a-z-')
while read -r name; do
  if grep -qx -- "$name" <<<"$pinned"; then
    echo "ee: $name is pinned in requirements/ (CI tests it)"
  else
    echo "ee: $name (meta/ee-requirements.txt) is not in requirements/*.txt: CI does not test it"; status=1
  fi
done < <(sed -e 's/#.*//' -e 's/[<>=!~ ;\[].*//' "$root/meta/ee-requirements.txt" | tr 'A-Z_' 'a-z-' | grep .)
newest=$(find "$root/requirements/core" -name '*.txt' | sort -V | tail -n 1)
for pin in "$(grep -h '^ansible-core==' "$newest")" "$(grep -h '^ansible-runner==' "$root/requirements/ee.txt")"; do
  if grep -qx -- "    package_pip: $pin" "$root/ee/execution-environment.yml"; then
    echo "ee: the image's $pin is what CI tests"
  else
    echo "ee: ee/execution-environment.yml does not pin $pin (${newest#"$root"/}, requirements/ee.txt)"; status=1
  fi
done
exit "$status"
