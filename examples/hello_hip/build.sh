#!/usr/bin/env bash
# Builds hello_hip and its code objects into OUT (default: examples/hello_hip/build).
#   vadd.host.so   host module (any C compiler)
#   vadd.sm_80.ptx PTX for NVIDIA workers (committed; regenerated when clang-15 is present)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$HERE/build}; LIB=${HIP_REMOTE_LIBDIR:-$ROOT/target/debug}
mkdir -p "$OUT"
cc -std=c11 -O2 -shared -fPIC -I "$ROOT/worker/include" "$HERE/vadd_host.c" -o "$OUT/vadd.host.so"
if command -v clang-15 >/dev/null; then
  clang-15 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -O3 -S \
    -include "$HERE/cuda_shim.h" "$HERE/vadd.hip" -o "$OUT/vadd.sm_80.ptx"
else
  cp "$HERE/vadd.sm_80.ptx" "$OUT/"
fi
cc -std=c11 -O2 -I "$ROOT/client-capi/include" "$HERE/main.c" -o "$OUT/hello_hip" \
  -L "$LIB" -lamdhip64 -Wl,-rpath,"$LIB"
echo "built $OUT/hello_hip; run: HIP_REMOTE_WORKER=host:port $OUT/hello_hip $OUT"
