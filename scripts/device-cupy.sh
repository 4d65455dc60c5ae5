#!/usr/bin/env bash
# CuPy for ROCm (cupy-rocm-7-0 14.2.0, cp312) on the GPU machine against a `--backend cuda`
# worker: CuPy's hiprtc sources compiled by NVRTC through the worker's compatibility header.
# Runs from a pack made by `HIP_REMOTE_PACK_CUPY=1 scripts/pack-device.sh` (CuPy's packages
# for python3.12, the installed layout in rocm/, tests/python/cupy), on its own
# (`bash device-pack/device-cupy.sh`) or from device-test.sh with HIP_REMOTE_WORKER set.
# Writes cupy-tests.log (and cupy-worker.log when it starts the worker) to $OUT.
# Exit status: 0 passed, 1 failed, 77 could not run here (with a "SKIP: " line).
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
skip() { echo "cupy: SKIP: $*"; exit 77; }
# CuPy's packages as pack-device.sh installs them for one Python: cupy/site-py<MAJOR><MINOR>.tar.xz.
ARCHIVE=$(ls "$PACK"/cupy/site-py*.tar.xz 2>/dev/null | head -1)
[ -n "$ARCHIVE" ] || skip "no CuPy in this pack (HIP_REMOTE_PACK_CUPY=1 scripts/pack-device.sh)"
PY=${PYTHON:-python3}
tag=$(basename "$ARCHIVE" .tar.xz); tag=${tag#site-py}
[ "$("$PY" -c 'import sys; print("%d%d" % sys.version_info[:2])' 2>/dev/null)" = "$tag" ] ||
  skip "the packed CuPy is for python ${tag:0:1}.${tag:1}; $PY is $("$PY" -V 2>&1)"
SITE=${HIP_REMOTE_CUPY_SITE:-/tmp/hip-remote-cupy-site-py$tag}
if [ ! -d "$SITE/cupy" ]; then
  rm -rf "$SITE"; mkdir -p "$SITE"
  # Python's own tarfile/lzma: no xz binary needed there.
  "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
    "$ARCHIVE" "$SITE" || { echo "cupy: could not unpack"; exit 1; }
fi
ROCM=$PACK/rocm
export ROCM_PATH=$ROCM ROCM_HOME=$ROCM PATH=$ROCM/bin:$PATH
export LD_LIBRARY_PATH=$ROCM/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUPY_CACHE_DIR=$(mktemp -d) CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1
WPID=""
trap '[ -n "$WPID" ] && kill "$WPID" 2>/dev/null; rm -rf "$CUPY_CACHE_DIR"' EXIT
if [ -z "${HIP_REMOTE_WORKER:-}" ]; then
  "$ROCM/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" >"$OUT/cupy-worker.stdout" 2>"$OUT/cupy-worker.log" &
  WPID=$!
  for _ in $(seq 100); do grep -q "listening on" "$OUT/cupy-worker.stdout" 2>/dev/null && break; sleep 0.1; done
  HIP_REMOTE_WORKER=$(sed -n 's/.*listening on //p' "$OUT/cupy-worker.stdout" | head -1)
  rm -f "$OUT/cupy-worker.stdout"
  [ -n "$HIP_REMOTE_WORKER" ] || { echo "cupy: worker did not start"; cat "$OUT/cupy-worker.log"; exit 1; }
fi
export HIP_REMOTE_WORKER
# CuPy's multi-GPU tests (cupy.testing.multi_gpu) run up to this many devices.
export CUPY_TEST_GPU_LIMIT=${CUPY_TEST_GPU_LIMIT:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)}
# CuPy runs `hipcc -x hip -E -v /dev/null` for include directories (answered without a
# compiler); our hipcc names the clang it drives on a `Compiler:` line, when it finds one.
"$ROCM/bin/hipcc" --version 2>/dev/null | grep -q "^Compiler: " ||
  echo "cupy: our hipcc finds no clang here (it answers CuPy's \`hipcc -E -v\` query without one)"
if (cd "$PACK/cupy/tests" && PYTHONPATH=$SITE timeout 600 "$PY" -m pytest -q -p no:cacheprovider -rs . >"$OUT/cupy-tests.log" 2>&1); then
  echo "PASS CuPy for ROCm against $HIP_REMOTE_WORKER ($(tail -n 1 "$OUT/cupy-tests.log"))"
else
  echo "FAIL CuPy for ROCm (see cupy-tests.log)"; grep -E "^(FAILED|ERROR)" "$OUT/cupy-tests.log" | head -20; tail -n 3 "$OUT/cupy-tests.log"
  exit 1
fi
