#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian 12 / Ubuntu 22.04+
# machine: Debian packages and the pinned Python venv.
# Re-running it is quick and changes nothing when all is in place.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"

apt_packages=(
  qemu-system-x86 qemu-utils mmdebstrap fdisk grub-pc-bin e2fsprogs
  openssh-client python3-venv python3-dev gcc git rsync
  podman runc fio vmtouch iproute2 procps
  # Unit tests of the node audit's outputs: promtool checks the node_exporter
  # textfile (Debian ships it only in the prometheus package), headless
  # chromium renders the HTML report.
  prometheus chromium
  # amtool checks the shipped Alertmanager routing (stage alert_rules); tests/monitoring/alerts_e2e.py runs
  # Alertmanager itself on loopback.
  prometheus-alertmanager
  # ansible-test's shellcheck sanity test skips itself when shellcheck is missing.
  shellcheck
  # molecule/model_sync re-creates the models array's XFS (on a loop device) with mkfs.xfs.
  xfsprogs
)

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Only promtool is wanted from the prometheus package, not a server on :9090.
  if [[ " ${missing[*]} " == *" prometheus "* && -d /run/systemd/system ]]; then
    systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  fi
  # Nor an Alertmanager on :9093 (tests start their own on a free port).
  if [[ " ${missing[*]} " == *" prometheus-alertmanager "* && -d /run/systemd/system ]]; then
    systemctl disable --now prometheus-alertmanager.service >/dev/null 2>&1 || true
  fi
fi

# The venv is rebuilt only when the pinned requirements change.
req_hash=$(cat "$root"/requirements/*.txt | sha256sum | cut -c1-16)
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.req-hash" 2>/dev/null)" != "$req_hash" ]]; then
  echo "bootstrap: creating venv $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  for req in "$root"/requirements/*.txt; do
    "$venv/bin/pip" install -q -r "$req"
  done
  echo "$req_hash" >"$venv/.req-hash"
fi

# No link to make: the checkout resolves as inferops.node through the committed
# collections/ansible_collections/inferops/node (ansible.cfg's collections_path).

# ansible-test downloads get-pip from a host this network cannot reach: tools/ansible-test.sh
# puts tools/get_pip_standin.py in its place, for the pip release each ansible-core bootstraps.
echo "bootstrap: ready ($venv)"
