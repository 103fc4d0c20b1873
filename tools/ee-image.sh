#!/usr/bin/env bash
# Build the execution environment of ee/execution-environment.yml with no network (docs/awx.md,
# "The execution environment"):
#  1. the base image: a Debian 13 root filesystem (mmdebstrap, minbase: Python 3.13, the SSH client)
#     with a virtual environment, /opt/ee, first on PATH, imported into podman as
#     localhost/inferops-ee-base:trixie; kept while its recipe is unchanged (a label). The venv,
#     because Debian disables ensurepip for the system Python and ansible-builder's first step runs
#     it (ee/execution-environment.yml's python_path is the venv's);
#  2. /offline, a volume of the build only: the wheels of ansible-core, ansible-runner, the
#     collection's controller requirements (meta/ee-requirements.txt) and ansible-builder's own
#     (bindep, PyYAML, packaging) for the base's Python, from the package index this host uses;
#     the collection tarballs of ee/requirements.yml: inferops.node built from the checkout, its
#     dependencies packed from the installed `ansible` bundle that CI tests;
#  3. ansible-builder build with podman and --network=none: every step that would fetch fails.
# Rebuilt on every call (--no-cache): the volume's content is not part of podman's layer cache; the
# build stages and the image it replaces are pruned after it (podman image prune: every untagged image).
#   tools/ee-image.sh [TAG]      # default localhost/inferops-ee:latest; prints the image ID
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tag=${1:-localhost/inferops-ee:latest}
work=$root/.cache/ee
offline=$work/offline
base=localhost/inferops-ee-base:trixie
base_packages=python3,python3-venv,openssh-client,ca-certificates
python_version=3.13  # trixie's python3
# podman's default rlimits for root's containers are above what this host lets a process raise to
# (no CAP_SYS_RESOURCE): runc fails "error setting rlimit type 7". Lower, explicit limits work.
limits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
mkdir -p "$work"
# The collection is built and the tarballs inspected with ansible-core's defaults: a caller's ANSIBLE_*
# settings (molecule sets the collections path, callbacks, ...) are not the image's.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ANSIBLE_')

# 1. The base image, rebuilt when its recipe (suite, packages, hook) changes.
# shellcheck disable=SC2016  # $1 is mmdebstrap's root directory, expanded by its hook shell
venv_hook='chroot "$1" python3 -m venv /opt/ee'
key=$(printf '%s\n' trixie "$base_packages" "$venv_hook" | sha256sum | cut -c1-16)
have=$(podman image inspect --format '{{ index .Labels "org.inferops.content-hash" }}' "$base" 2>/dev/null || true)
if [[ $have != "$key" ]]; then
  echo "ee-image: building the base image $base (mmdebstrap trixie: $base_packages)"
  mmdebstrap --variant=minbase --include="$base_packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --customize-hook="$venv_hook" trixie "$work/base.tar" >"$work/base.log" 2>&1 ||
    { tail -n 20 "$work/base.log"; exit 1; }
  podman import -q --change "LABEL org.inferops.content-hash=$key" --change 'CMD ["/bin/bash"]' \
    --change 'ENV PATH=/opt/ee/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/base.tar" "$base" >/dev/null
  rm -f "$work/base.tar"
fi

# 2. Wheels for the base's Python, and the collection tarballs.
rm -rf "$offline"
mkdir -p "$offline/wheels" "$offline/collections"
printf '[global]\nno-index = true\nfind-links = /offline/wheels\n' >"$offline/pip.conf"
definition=$root/ee/execution-environment.yml
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/empty.cfg"
ANSIBLE_CONFIG="$scratch/empty.cfg" ansible-galaxy collection build "$root" --output-path "$scratch" >/dev/null
mv "$scratch"/inferops-node-*.tar.gz "$offline/collections/inferops-node.tar.gz"
bundle=$(python3 -c 'import ansible_collections.community.general as c, os
print(os.path.dirname(os.path.dirname(c.__path__[0])))')
for name in community.general community.docker community.library_inventory_filtering_v1; do
  python3 "$root/tools/pack_installed_collection.py" "$bundle/${name/.//}" "$offline/collections/${name/./-}.tar.gz" >/dev/null
done

# What the image's pip installs: ansible-builder's introspection of the four collections installed to
# a scratch path (the same step the build runs), ansible-core and ansible-runner, and its own tools
# (bindep, PyYAML and packaging in its builder stage; dumb-init, pinned by ansible-builder 3.2, the
# final image's entrypoint).
ANSIBLE_CONFIG="$scratch/empty.cfg" ansible-galaxy collection install -p "$scratch/collections" --no-deps \
  "$offline"/collections/*.tar.gz >"$scratch/install.log" 2>&1 || { cat "$scratch/install.log"; exit 1; }
ansible-builder introspect --sanitize --write-pip "$scratch/requirements.txt" "$scratch/collections" >/dev/null
pins=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]))["dependencies"]
print(d["ansible_core"]["package_pip"], d["ansible_runner"]["package_pip"])' "$definition")
# shellcheck disable=SC2086  # two requirement words
pip download -q --disable-pip-version-check --dest "$offline/wheels" --only-binary=:all: \
  --python-version "$python_version" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  $pins -r "$scratch/requirements.txt" bindep PyYAML packaging dumb-init==1.2.5 >"$scratch/pip.log" 2>&1 ||
  { grep -v '^WARNING: Location' "$scratch/pip.log"; exit 1; }

# 3. The image.
wheels=$(find "$offline/wheels" -name '*.whl' | wc -l)
echo "ee-image: ansible-builder build -t $tag (podman, --network=none, /offline: $wheels wheels, 4 collections)"
ansible-builder build -f "$definition" -c "$work/context" -t "$tag" --container-runtime podman --no-cache --prune-images \
  --extra-build-cli-args "--network=none --volume=$offline:/offline:ro ${limits[*]}" -v 1 >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; echo "ee-image: the build failed (log: $work/build.log)"; exit 1; }
podman image inspect --format '{{ .Id }}' "$tag"
