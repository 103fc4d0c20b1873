#!/usr/bin/env bash
# Builds the collection artifact, installs it into a scratch path, and checks
# that the installed playbook inferops.node.site resolves.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ansible-galaxy collection build "$root" --output-path "$scratch" --force
tarball=$(ls "$scratch"/inferops-node-*.tar.gz)
tar -tzf "$tarball" | grep -E '^(\.venv|\.cache|tests|tools|molecule)/' && { echo "artifact ships dev files"; exit 1; }
ansible-galaxy collection install "$tarball" -p "$scratch/collections" --no-deps
site=$(python -c 'import ansible_collections, os; print(os.path.dirname(os.path.dirname(ansible_collections.__path__[0])))')
cd "$scratch"
ANSIBLE_COLLECTIONS_PATH="$scratch/collections:$site" ANSIBLE_CONFIG=/dev/null \
  ansible-playbook -i localhost, --syntax-check inferops.node.site
echo "artifact OK: $(basename "$tarball")"
