#!/usr/bin/env bash
# CuPy for ROCm (PyPI cupy-rocm-7-0 14.2.0, a cp311/cp312 wheel built for ROCm 7) as a real,
# unchanged client: installs it into a venv, lays hip-remote out as a ROCm installation
# (`hip-remote install --prefix DIR`: lib/ with libamdhip64.so.7, libhiprtc.so.7 and the shim
# libraries, include/, bin/hipcc), points ROCM_PATH/ROCM_HOME/LD_LIBRARY_PATH at it and its bin/
# first on PATH (CuPy runs `hipcc` from PATH), starts a host-backend worker and runs
# tests/python/cupy with pytest.
# Expects `cargo build --workspace` to have run. What stops CuPy and why: docs/CUPY.md.
# Exits 77 with a "SKIP: " line (scripts/test.sh counts it as skipped) when no venv can be made
# or the wheel cannot be installed (no network, no wheel for this Python).
set -euo pipefail
cd "$(dirname "$0")/.."
skip() { echo "cupy-test: SKIP: $*"; exit 77; }
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/debug
VENV=${HIP_REMOTE_CUPY_VENV:-$ROOT/.venv-cupy}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  command -v "$PY" >/dev/null || skip "no $PY"
  "$PY" -m venv "$VENV" 2>/dev/null || skip "cannot create a venv with $PY (python3-venv missing)"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check "cupy-rocm-7-0==14.2.0" numpy pytest ||
  skip "cupy-rocm-7-0 14.2.0 not installable here (network, or no wheel for $("$VENV/bin/python" -V 2>&1))"
for f in libamdhip64.so libhiprtc.so hipcc hip-worker hip-remote; do
  [ -e "$TARGET/$f" ] || { echo "cupy-test: $TARGET/$f missing; run cargo build --workspace"; exit 1; }
done

ROCM=$(mktemp -d); WORK=$(mktemp -d)
chmod 755 "$ROCM"  # an installation is world-readable (mktemp makes it private)
cleanup() { for pid in ${WPIDS:-}; do kill "$pid" 2>/dev/null; done; rm -rf "$ROCM" "$WORK"; }
trap cleanup EXIT
"$TARGET/hip-remote" install --prefix "$ROCM" >"$WORK/install.log" 2>&1 ||
  { echo "cupy-test: hip-remote install --prefix $ROCM failed:"; cat "$WORK/install.log"; exit 1; }
export ROCM_PATH=$ROCM ROCM_HOME=$ROCM LD_LIBRARY_PATH=$ROCM/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# CuPy runs plain `hipcc -x hip -E -v /dev/null` for include directories: ours must come
# first (Debian's hipcc, which scripts/test.sh installs, wants AMD device libraries).
export PATH=$ROCM/bin:$PATH

# Every ROCm library CuPy's extension modules link must be in the layout (docs/CUPY.md):
# name those missing instead of failing later on an ImportError deep in a test.
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
missing=$(find "$SITE/cupy" "$SITE/cupy_backends" -name '*.so' -exec readelf -d {} + 2>/dev/null |
  sed -n 's/.*NEEDED.*\[\(lib\(amdhip\|hip\|roc\|rccl\)[^]]*\)\].*/\1/p' | sort -u |
  while read -r so; do [ -e "$ROCM/lib/$so" ] || echo "$so"; done | tr '\n' ' ')
if [ -n "$missing" ]; then
  echo "cupy-test: not in the layout (docs/CUPY.md says which part provides each): $missing"
  # libhipblas.so.3 only stops cupy.matmul/dot (skipped with a reason); any other stops import.
  [ "$(echo "$missing" | tr ' ' '\n' | grep -cv -e '^$' -e '^libhipblas.so.3$')" = 0 ] || {
    echo "cupy-test: CuPy cannot be imported without them"; exit 1; }
fi

# start_worker NAME ARGS...: starts a worker logging to $WORK/NAME.log; sets ADDR.
start_worker() {
  local name=$1; shift
  "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
  WPIDS="${WPIDS:-} $!"
  for _ in $(seq 100); do grep -q "listening on" "$WORK/$name.out" 2>/dev/null && break; sleep 0.1; done
  ADDR=$(sed -n 's/.*listening on //p' "$WORK/$name.out" | head -1)
  [ -n "$ADDR" ] || { echo "cupy-test: worker $name did not start:"; cat "$WORK/$name.log"; exit 1; }
}
# Two devices: test_multi_gpu.py runs CuPy's copies between devices, peer access and
# per-device streams (it skips with one).
start_worker worker "$TARGET/hip-worker" --listen 127.0.0.1:0 --backend host --allow-host-code --host-memory-mib 2048 --host-devices 2
# CuPy's kernel cache under the temporary directory: every run compiles afresh.
export CUPY_CACHE_DIR=$WORK/cupy-cache CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1
cd tests/python/cupy
HIP_REMOTE_WORKER=$ADDR timeout 900 "$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs . || {
  status=$?
  for log in "$WORK"/*.log; do echo "---- $(basename "$log") ----"; tail -n 50 "$log"; done
  exit "$status"
}
