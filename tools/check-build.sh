#!/usr/bin/env bash
# Builds the collection artifact, installs it into a scratch path (ignoring
# the checkout's own link), and checks that inferops.node.site resolves.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/empty.cfg"
export ANSIBLE_CONFIG="$scratch/empty.cfg"
ansible-galaxy collection build "$root" --output-path "$scratch" --force
tarball=$(ls "$scratch"/inferops-node-*.tar.gz)
listing=$(tar -tzf "$tarball")
if grep -E '^(\.venv|\.cache|\.ci|\.config|\.git|tests|tools|molecule|ee|requirements|collections|playbooks/collections)/|^(\.ansible-lint|\.yamllint|ansible\.cfg|\.gitignore)$|\.tar\.gz$' <<<"$listing"; then
  echo "artifact ships development files (above): add them to galaxy.yml's build_ignore"
  exit 1
fi
# Galaxy shows the license and the changelog from the artifact (docs/release.md).
for file in LICENSE README.md CHANGELOG.rst changelogs/changelog.yaml meta/runtime.yml; do
  grep -qx "$file" <<<"$listing" || { echo "artifact lacks $file"; exit 1; }
done
# meta/runtime.yml's requires_ansible claims the ansible-core minor release CI tests, no other
# (docs/release.md): the one installed here, not the one before it nor the next.
python - "$root/meta/runtime.yml" <<'PY'
import sys

import yaml
from ansible.release import __version__
from packaging.specifiers import SpecifierSet
from packaging.version import Version

claim = yaml.safe_load(open(sys.argv[1]))["requires_ansible"]
tested = Version(__version__)
spec = SpecifierSet(claim)
untested = ["%d.%d.0" % (tested.major, tested.minor + 1), "%d.%d.99" % (tested.major, tested.minor - 1)]
if tested not in spec or any(Version(v) in spec for v in untested):
    sys.exit("requires_ansible %r is not the ansible-core CI tests (%s, the %d.%d releases): it must admit "
             "%s and neither of %s" % (claim, tested, tested.major, tested.minor, tested, ", ".join(untested)))
print("requires_ansible %r: the ansible-core release CI tests (%s)" % (claim, tested))
PY
ansible-galaxy collection install "$tarball" -p "$scratch/collections" --no-deps --force
bundle=$(python -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))')
cd "$scratch"
ANSIBLE_COLLECTIONS_PATH="$scratch/collections:$bundle" ansible-playbook -i localhost, --syntax-check inferops.node.site
echo "artifact OK: $(basename "$tarball")"
