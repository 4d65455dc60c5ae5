#!/usr/bin/env bash
# Builds hello_hip and its code objects into OUT (default: examples/hello_hip/build).
#   hello_hip      linked against this tree's libamdhip64 (release build, made if missing),
#                  with this tree's HIP headers; never a system ROCm
#   vadd.host.so   host module (any C compiler)
#   vadd.sm_80.ptx PTX for NVIDIA workers (committed; regenerated when clang-15 is present)
# HIP_REMOTE_LIBDIR=DIR links against the libamdhip64.so in DIR instead (scripts/pack-device.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$HERE/build}
if [ -n "${HIP_REMOTE_LIBDIR:-}" ]; then
  LIB=$(cd "$HIP_REMOTE_LIBDIR" && pwd)
else
  # Release, like scripts/demo.sh, which builds the worker this runs against.
  target_dir=${CARGO_TARGET_DIR:-$ROOT/target}
  case $target_dir in /*) ;; *) target_dir=$ROOT/$target_dir ;; esac
  LIB=$target_dir/release
  if [ ! -f "$LIB/libamdhip64.so" ] || [ ! -e "$LIB/libamdhip64.so.7" ]; then
    echo "building hip-remote's libamdhip64 (cargo build --release -p client-capi)"
    (cd "$ROOT" && cargo build --release -p client-capi)
  fi
fi
[ -f "$LIB/libamdhip64.so" ] || { echo "no libamdhip64.so in $LIB" >&2; exit 1; }
# A system ROCm must not leak in through the compiler's environment: our headers and our
# library (named by path, not found by -l) only.
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH HIP_PATH ROCM_PATH
mkdir -p "$OUT"
cc -std=c11 -O2 -shared -fPIC -I "$ROOT/worker/include" "$HERE/vadd_host.c" -o "$OUT/vadd.host.so"
if command -v clang-15 >/dev/null; then
  clang-15 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -O3 -S \
    -include "$HERE/cuda_shim.h" "$HERE/vadd.hip" -o "$OUT/vadd.sm_80.ptx"
else
  cp "$HERE/vadd.sm_80.ptx" "$OUT/"
fi
# Linking by path records the library's soname, NEEDED libamdhip64.so.7, which the rpath
# finds beside it (the build leaves libamdhip64.so.7 -> libamdhip64.so there).
cc -std=c11 -O2 -I "$ROOT/client-capi/include" "$HERE/main.c" -o "$OUT/hello_hip" \
  "$LIB/libamdhip64.so" -Wl,-rpath,"$LIB"
echo "built $OUT/hello_hip against $LIB; run: HIP_REMOTE_WORKER=host:port $OUT/hello_hip $OUT"
