#!/usr/bin/env bash
# Runs ansible-test against a copy of the checkout laid out as
# ansible_collections/inferops/node (ansible-test needs that path shape).
# Usage: [INFEROPS_CORE=2.X] tools/ansible-test.sh sanity|units [extra ansible-test args]
# Without INFEROPS_CORE: the ansible-core of .venv (requirements/base.txt) on Python 3.11. With
# INFEROPS_CORE=2.17 (any requirements/core/<2.X>.txt): that ansible-core, from the venv
# .cache/core/<2.X> made on demand with the Python the file names (from pyenv; docs/release.md,
# "Tested ansible-core").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
core=${INFEROPS_CORE:-}
if [[ -z $core ]]; then
  bin="$root/.venv/bin" python=3.11
else
  req="$root/requirements/core/$core.txt"
  [[ -f $req ]] || { echo "ansible-test.sh: no $req (the tested ansible-core releases: requirements/core/)" >&2; exit 2; }
  python=$(sed -n 's/^# python: *//p' "$req")
  venv="$root/.cache/core/$core" bin="$root/.cache/core/$core/bin"
  # Rebuilt only when the pinned file changes (as bootstrap.sh does for .venv).
  req_hash=$(sha256sum <"$req" | cut -c1-16)
  if [[ ! -x "$bin/python" || "$(cat "$venv/.req-hash" 2>/dev/null)" != "$req_hash" ]]; then
    pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
    interpreter=$(find "$pyenv_root/versions" -maxdepth 3 -path "*/versions/$python.*/bin/python$python" 2>/dev/null | sort -V | tail -n 1)
    [[ -n $interpreter ]] || interpreter=$(command -v "python$python" || true)
    [[ -n $interpreter ]] || { echo "ansible-test.sh: ansible-core $core needs Python $python (pyenv install $python)" >&2; exit 2; }
    echo "ansible-test.sh: creating $venv with $interpreter"
    rm -rf "$venv"
    "$interpreter" -m venv "$venv"
    "$bin/pip" install -q -r "$req"
    echo "$req_hash" >"$venv/.req-hash"
  fi
fi
# ansible-test downloads get-pip from a host this network cannot reach; the stand-in installs pip
# from the PyPI wheel instead, under the name of the pip release this ansible-test bootstraps.
pip_version=$("$bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))' |
  xargs -I{} sed -n "s/^ *pip='\([^']*\)',\$/\1/p" {}/_internal/python_requirements.py | head -n 1)
get_pip="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if ! cmp -s "$root/tools/get_pip_standin.py" "$get_pip"; then
  mkdir -p "$(dirname "$get_pip")"
  cp "$root/tools/get_pip_standin.py" "$get_pip"
fi
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
# The checkout's .venv stays on PATH behind the ansible-core's own: the unit tests' tools (moto_server).
export PATH="$bin:$root/.venv/bin:$PATH"
# Dependency collections come from the ansible bundle inside .venv, whatever the ansible-core.
site=$("$root/.venv/bin/python" -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))')
export ANSIBLE_COLLECTIONS_PATH="$scratch:$site"
ansible-test "$@" --venv --python "$python" --color no
