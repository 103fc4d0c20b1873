# shellcheck shell=bash
# A real tritonserver on the controller, the one nvidia-pytriton ships (2.51, CPU, python backend), for the
# tests that need a server answering: the triton fixtures' recorder (tests/unit/fixtures/triton) and the
# rollout's verify gates (tests/rollout/run.sh). Sourced; needs PYTHON (the venv's python, with
# nvidia-pytriton: tools/bootstrap.sh), WORK (a scratch directory) and PORT.
#   triton_start NAME REPOSITORY [ARGS...]   start it on 127.0.0.1:$PORT (HTTP only), wait until it is live
#                                            (up to 120 s), its log in $WORK/NAME.log; SERVER is its pid
#   triton_stop                              stop it
SERVER=

# The python backend needs its stub built for this Python beside it, and the stub needs the Python
# library directory on LD_LIBRARY_PATH (pytriton's layout).
triton_backends() {
  local pyver
  TRITON_ROOT=$("$PYTHON" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("pytriton").origin), "tritonserver"))')
  pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  TRITON_LIBS=$(dirname "$TRITON_ROOT")/../nvidia_pytriton.libs
  mkdir -p "$WORK/backends"
  cp -r "$TRITON_ROOT/backends/python" "$WORK/backends/python"
  cp "$TRITON_ROOT/python_backend_stubs/$pyver/triton_python_backend_stub" "$WORK/backends/python/"
}

triton_start() {
  local name=$1 repository=$2
  shift 2
  [ -d "$WORK/backends" ] || triton_backends
  LD_LIBRARY_PATH="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))'):$TRITON_LIBS" \
    PATH="$(dirname "$PYTHON"):$PATH" \
    "$TRITON_ROOT/bin/tritonserver" --model-repository="$repository" --backend-directory="$WORK/backends" \
    --http-address=127.0.0.1 --http-port="$PORT" --allow-grpc=false --allow-metrics=false \
    --exit-on-error=false "$@" >"$WORK/$name.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 120); do
    # Python's urllib rather than curl, which bootstrap.sh does not install.
    if "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "http://127.0.0.1:$PORT/v2/health/live" 2>/dev/null; then return 0; fi
    sleep 1
  done
  cat "$WORK/$name.log" >&2
  echo "tritonserver ($name) not live after 120 s" >&2
  return 1
}

triton_stop() {
  if [ -n "$SERVER" ]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
  fi
  SERVER=
}
