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
# meta/runtime.yml's requires_ansible claims the ansible-core releases the project tests, no other
# (docs/release.md, "Tested ansible-core"): the one installed here (requirements/base.txt) and each
# requirements/core/<2.X>.txt (tools/test.sh's units@2.X and sanity@2.X stages; CI runs the range's
# ends), with no release missing between; not the one before the lowest nor the one after the highest.
python - "$root/meta/runtime.yml" "$root"/requirements/core/*.txt "$root"/roles/*/meta/main.yml <<'PY'
import os
import sys

import yaml
from ansible.release import __version__
from packaging.specifiers import SpecifierSet
from packaging.version import Version

claim = yaml.safe_load(open(sys.argv[1]))["requires_ansible"]
installed = Version(__version__)
tested = {(installed.major, installed.minor)}
for path in [p for p in sys.argv[2:] if p.endswith(".txt")]:
    major, minor = os.path.basename(path)[:-len(".txt")].split(".")
    tested.add((int(major), int(minor)))
tested = sorted(tested)
names = ", ".join("%d.%d" % release for release in tested)
(low_major, low), (high_major, high) = tested[0], tested[-1]
if low_major != high_major or len(tested) != high - low + 1:
    sys.exit("CI tests ansible-core %s: a release between is missing (requirements/core/)" % names)
spec = SpecifierSet(claim)
admitted = ["%d.%d.%s" % (major, minor, patch) for major, minor in tested for patch in ("0", "99")]
untested = ["%d.%d.99" % (low_major, low - 1), "%d.%d.0" % (high_major, high + 1)]
if any(Version(v) not in spec for v in admitted) or any(Version(v) in spec for v in untested):
    sys.exit("requires_ansible %r is not the ansible-core releases CI tests (%s): it must admit %s and "
             "neither of %s" % (claim, names, " to ".join(admitted[::len(admitted) - 1]), ", ".join(untested)))
print("requires_ansible %r: the ansible-core releases CI tests (%s)" % (claim, names))
# Each role's meta/main.yml min_ansible_version (what Galaxy shows per role) is the lowest tested release.
lowest = "%d.%d" % (low_major, low)
roles = [path for path in sys.argv[2:] if path.endswith("/meta/main.yml")]
versions = dict((path.split("/")[-3], yaml.safe_load(open(path))["galaxy_info"].get("min_ansible_version")) for path in roles)
wrong = sorted("%s: %s" % (role, version) for role, version in versions.items() if str(version) != lowest)
if wrong:
    sys.exit("roles' min_ansible_version must be %s, the lowest ansible-core CI tests: %s" % (lowest, "; ".join(wrong)))
PY
ansible-galaxy collection install "$tarball" -p "$scratch/collections" --no-deps --force
bundle=$(python -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))')
cd "$scratch"
ANSIBLE_COLLECTIONS_PATH="$scratch/collections:$bundle" ansible-playbook -i localhost, --syntax-check inferops.node.site
echo "artifact OK: $(basename "$tarball")"
