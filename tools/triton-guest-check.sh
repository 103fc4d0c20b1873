#!/usr/bin/env bash
# Proof of the serving lab's pieces together: the Debian 13 guest image, the locally built
# Triton image, docker load into the guest's real engine, tritonserver started with docker run
# on a tiny python-backend model, ready and answering inside the guest. Prints the timings.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: tools/triton-guest-check.sh [--name LAB] [--keep] [--rebuild] [--timeout SECONDS]

Builds (if missing) the trixie guest image and the Triton image on this host, boots one
trixie guest (preset tools/lab/presets/serving.yml), loads the Triton image into its Docker
engine (tools/inferops-lab triton-load), starts tritonserver in a container (host network,
the model repository molecule/serving/files/models/add mounted read-only) and waits, inside
the guest, until /v2/health/ready answers; then one inference, a write into the model
repository that must fail, and the guest goes down again.

  --name LAB         lab name (default: triton-check)
  --keep             leave the guest running (tools/inferops-lab down --name LAB stops it)
  --rebuild          rebuild both images even when cached (to time the builds)
  --timeout SECONDS  readiness wait inside the guest (default: 600)
  -h, --help         this text

Output: one "name: value" line per figure (image builds, guest boot, load, container start
to ready, and a CPU-bound Python loop on the host and in the guest: the TCG slowdown).
EOF
}

name=triton-check
keep=0
rebuild=()
timeout=600
while (($#)); do
  case $1 in
    --name) name=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --rebuild) rebuild=(--rebuild); shift ;;
    --timeout) timeout=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lab="$root/tools/inferops-lab"
logs="$root/.cache/lab/$name-check"
mkdir -p "$logs"
container=inferops-triton-check
port=8000

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
say() { printf '%s: %s\n' "$1" "$2"; }
# SSH joins its arguments into one command line for the guest's shell: pass one string.
guest() { "$lab" ssh --name "$name" node1 -- "$@"; }

# The same CPU-bound work on both sides; their ratio is what TCG costs a build in the guest.
bench='import time; t = time.monotonic(); sum(i * i for i in range(3000000)); print("%.2f" % (time.monotonic() - t))'

# Both images at once: each is mostly one mmdebstrap, and neither needs the other.
started=$(now)
"$lab" image --suite trixie "${rebuild[@]}" >"$logs/guest-image.out" 2>"$logs/guest-image.log" &
guest_build=$!
"$lab" triton-image --check "${rebuild[@]}" >"$logs/triton-image.json" 2>"$logs/triton-image.log" &
triton_build=$!
# Wait for both even when one fails: a build cut short leaves its mmdebstrap tree behind.
failed=0
wait "$triton_build" || { cat "$logs/triton-image.log" >&2; failed=1; }
say triton_image_build_s "$(since "$started")"
wait "$guest_build" || { cat "$logs/guest-image.log" >&2; failed=1; }
say guest_image_build_s "$(since "$started")"
((failed == 0)) || exit 1
say guest_image "$(cat "$logs/guest-image.out")"
tag=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["tag"])' <"$logs/triton-image.json")
say triton_image "$tag ($(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["image_id"], d["size_bytes"] >> 20, "MiB")' <"$logs/triton-image.json"))"

[[ $keep == 1 ]] || trap '"$lab" down --name "$name"' EXIT
started=$(now)
"$lab" up --name "$name" --spec "$root/tools/lab/presets/serving.yml" >/dev/null
say guest_boot_s "$(since "$started")"

# shellcheck disable=SC2016 # expanded by the guest's shell
say guest_engine "$(guest 'echo "docker $(docker version --format "{{.Server.Version}}"), compose $(docker compose version --short), docker.service $(systemctl is-enabled docker)/$(systemctl is-active docker)"')"
say host_python_loop_s "$(python3 -c "$bench")"
say guest_python_loop_s "$(guest "python3 -c '$bench'")"

started=$(now)
"$lab" triton-load --name "$name" node1 >"$logs/load.json"
say triton_load_s "$(since "$started")"
# A second load finds the same image ID and sends nothing.
"$lab" triton-load --name "$name" node1 >"$logs/reload.json"
say triton_reload_changed "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["changed"])' <"$logs/reload.json")"

tar -C "$root/molecule/serving/files/models" -cf - add | guest 'rm -rf /srv/models && mkdir -p /srv/models && tar -C /srv/models -xf -'

# Timed inside the guest: from docker run to /v2/health/ready, without SSH round trips.
guest bash -s -- "$tag" "$container" "$port" "$timeout" <<'EOF' | tee "$logs/guest-run.out"
set -euo pipefail
tag=$1 container=$2 port=$3 timeout=$4
docker rm -f "$container" >/dev/null 2>&1 || true
start=$(date +%s.%N)
docker run -d --name "$container" --network host --shm-size 256m -v /srv/models:/models:ro "$tag" \
  tritonserver --model-repository=/models --http-address=127.0.0.1 --http-port="$port" \
  --allow-grpc=false --allow-metrics=false --exit-on-error=true >/dev/null
python3 - "$container" "$port" "$timeout" "$start" <<'PY'
import json, subprocess, sys, time, urllib.request
container, port, timeout, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
base = "http://127.0.0.1:%d" % port
while True:
    try:
        with urllib.request.urlopen(base + "/v2/health/ready", timeout=5) as response:
            if response.status == 200:
                break
    except OSError:
        pass
    running = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", container],
                             capture_output=True, text=True).stdout.strip()
    if running != "true" or time.time() - start > timeout:
        logs = subprocess.run(["docker", "logs", "--tail", "40", container], capture_output=True, text=True)
        sys.exit("container %s not ready (running=%s) after %.0f s:\n%s%s"
                 % (container, running, time.time() - start, logs.stdout, logs.stderr))
    time.sleep(0.5)
print("container_start_to_ready_s: %.1f" % (time.time() - start))
with urllib.request.urlopen(base + "/v2", timeout=10) as response:
    print("server: %s %s" % (lambda d: (d["name"], d["version"]))(json.load(response)))
body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [4], "data": [1, 2, 3, 4]},
                              {"name": "INPUT1", "datatype": "INT32", "shape": [4], "data": [10, 20, 30, 40]}]})
request = urllib.request.Request(base + "/v2/models/add/infer", data=body.encode(),
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=60) as response:
    output = json.load(response)["outputs"][0]["data"]
print("inference: add([1, 2, 3, 4], [10, 20, 30, 40]) = %s" % output)
assert output == [11, 22, 33, 44], output
PY
if denied=$(docker exec "$container" touch /models/add/written 2>&1); then
  echo "model repository writable from the container" >&2
  exit 1
fi
echo "read_only_models: ${denied##*: }"
docker rm -f "$container" >/dev/null
EOF
