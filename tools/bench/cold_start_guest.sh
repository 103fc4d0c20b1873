#!/usr/bin/env bash
# Benchmark, not a test: tools/bench/cold_start_bench.py in a lab guest, where the server is
# the lab's Triton image started by the guest's Docker engine (docker run, as triton_compose
# runs it) and the page cache preload is page_cache's module path, both on the guest's kernel.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: tools/bench/cold_start_guest.sh [--name LAB] [--keep] [--weights-size SIZE] [--repeat N] [--json FILE]

Boots one trixie guest (tools/lab/presets/cold_start_bench.yml: 2 vCPUs, 6 GiB), loads the
Triton image into its engine (tools/inferops-lab triton-load; both images are built on this
host when missing), copies tools/bench and plugins/module_utils of this checkout into it and
runs cold_start_bench.py --docker there: cold, preload and warm, start to model ready.

  --name LAB           lab name (default: cold-start-bench)
  --keep               leave the guest running (tools/inferops-lab down --name LAB stops it)
  --weights-size SIZE  the model's weights file (default: 2G)
  --repeat N           rounds (default: 3)
  --json FILE          copy the samples (JSON) to FILE on this host
  -h, --help           this text
USAGE
}

name=cold-start-bench keep=0 weights=2G repeat=3 json=
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --weights-size) weights=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lab="$root/tools/inferops-lab"
# SSH joins its arguments into one command line for the guest's shell: pass one string.
guest() { "$lab" ssh --name "$name" node1 -- "$@"; }

"$lab" image --suite trixie >/dev/null
tag=$("$lab" triton-image | python3 -c 'import json, sys; print(json.load(sys.stdin)["tag"])')
[[ $keep == 1 ]] || trap '"$lab" down --name "$name" >/dev/null' EXIT
"$lab" up --name "$name" --spec "$root/tools/lab/presets/cold_start_bench.yml" >/dev/null
"$lab" triton-load --name "$name" node1 >/dev/null
tar -C "$root" -cf - tools/bench plugins/module_utils | guest 'rm -rf /root/inferops && mkdir -p /root/inferops && tar -C /root/inferops -xf -'
guest "cd /root/inferops && python3 tools/bench/cold_start_bench.py --docker $tag --dir /var/tmp/inferops-cold-start-bench \
  --weights-size $weights --repeat $repeat --json /var/tmp/inferops-cold-start-bench/samples.json"
if [[ -n $json ]]; then
  guest 'cat /var/tmp/inferops-cold-start-bench/samples.json' >"$json"
fi
