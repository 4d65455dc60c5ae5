#!/usr/bin/env bash
# hip-python (PyPI hip-python / rocm-bindings-hip 10.x, HIP 7.x bindings) as a real client:
# installs it into a venv, lays our libraries out under a ROCM_PATH the way hip-python
# expects ($ROCM_PATH/lib/libamdhip64.so, libhiprtc.so), starts a host-backend worker and
# runs tests/python with pytest (tests/python/cupy is scripts/cupy-test.sh's). Expects `cargo build --workspace` to have run.
# HIP_REMOTE_TEST_CHAIN=1: the tests talk to a chained worker instead, a hip-backend worker A
# running on our own libamdhip64.so whose calls go to the host-backend worker B.
# Exits 77 with a "SKIP: " line (scripts/test.sh counts it as skipped) when no venv can be made
# or hip-python cannot be installed (no network, no wheel for this Python).
set -euo pipefail
cd "$(dirname "$0")/.."
skip() { echo "python-test: SKIP: $*"; exit 77; }
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/debug
VENV=${HIP_REMOTE_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  command -v "$PY" >/dev/null || skip "no $PY"
  "$PY" -m venv "$VENV" 2>/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv && "$PY" -m venv "$VENV"; } ||
    skip "cannot create a venv with $PY (python3-venv not installable)"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check "hip-python==10.0.*" pytest ||
  skip "hip-python 10.0 / pytest not installable here (network, or no wheel for $("$VENV/bin/python" -V 2>&1))"
for lib in amdhip64 hiprtc; do
  [ -f "$TARGET/lib$lib.so" ] || { echo "python-test: $TARGET/lib$lib.so missing; run cargo build --workspace"; exit 1; }
done
ROCM=$(mktemp -d); WORK=$(mktemp -d)
cleanup() { for pid in ${WPIDS:-}; do kill "$pid" 2>/dev/null; done; rm -rf "$ROCM" "$WORK"; }
trap cleanup EXIT
mkdir -p "$ROCM/lib"
for lib in amdhip64 hiprtc; do
  if [ -f "$TARGET/lib$lib.so" ]; then
    cp "$TARGET/lib$lib.so" "$ROCM/lib/"; ln -sf "lib$lib.so" "$ROCM/lib/lib$lib.so.7"
  fi
done
# start_worker NAME ARGS...: starts a worker logging to $WORK/NAME.log; sets ADDR.
start_worker() {
  local name=$1; shift
  "$@" > "$WORK/$name.out" 2> "$WORK/$name.log" &
  WPIDS="${WPIDS:-} $!"
  for _ in $(seq 100); do grep -q "listening on" "$WORK/$name.out" 2>/dev/null && break; sleep 0.1; done
  ADDR=$(sed -n 's/.*listening on //p' "$WORK/$name.out" | head -1)
  [ -n "$ADDR" ] || { echo "python-test: worker $name did not start:"; cat "$WORK/$name.log"; exit 1; }
}
start_worker worker "$TARGET/hip-worker" --listen 127.0.0.1:0 --backend host --allow-host-code --host-memory-mib 2048
if [ "${HIP_REMOTE_TEST_CHAIN:-}" = 1 ]; then
  HIP_REMOTE_WORKER=$ADDR start_worker chained "$TARGET/hip-worker" --listen 127.0.0.1:0 --backend hip --hip-library "$ROCM/lib/libamdhip64.so"
  echo "python-test: through chained hip-backend worker $ADDR"
fi
cd tests/python
ROCM_PATH=$ROCM HIP_REMOTE_WORKER=$ADDR timeout 600 "$VENV/bin/python" -m pytest -q -p no:cacheprovider --ignore=cupy . || {
  status=$?
  for log in "$WORK"/*.log; do echo "---- $(basename "$log") ----"; cat "$log"; done
  exit "$status"
}
