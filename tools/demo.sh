#!/usr/bin/env bash
# The main job on the embedded default: a lab node shaped like the local-NVMe
# site, converged with site.yml, showing what changed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash tools/bootstrap.sh
export PATH="$root/.venv/bin:$PATH" ANSIBLE_CONFIG="$root/ansible.cfg"
lab=${LAB_NAME:-demo}
inventory=".cache/lab/$lab/inventory.yml"
if ! tools/inferops-lab status --name "$lab" >/dev/null 2>&1; then
  tools/inferops-lab up --name "$lab" --spec tools/lab/presets/local_nvme.yml
fi
ansible-playbook -i "$inventory" -i inventories/lab site.yml --diff "$@"
cat <<MSG

The lab node is still running. Look around:
  tools/inferops-lab ssh --name $lab node1 -- cat /proc/mdstat
Run site.yml again (it should report changed=0):
  bash tools/demo.sh
Stop it:
  tools/inferops-lab down --name $lab
MSG
