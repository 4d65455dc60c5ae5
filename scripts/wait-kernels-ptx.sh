#!/usr/bin/env bash
# Regenerates worker/src/backend/cuda/wait_kernels.ptx from wait_kernels.cu (the cuda
# backend's masked stream waits), or writes it to the path given as $1 (the worker's unit test
# compares the two). Needs clang 15 with the NVPTX target; no CUDA install (the source declares
# what it uses). PTX ISA 6.3 for `nanosleep`; sm_70 for `ld.acquire.sys`.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../worker/src/backend/cuda" && pwd)"
OUT=${1:-$SRC/wait_kernels.ptx}
CLANG=${CLANG:-clang++-15}
"$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O2 \
  -Xclang -target-feature -Xclang +ptx63 -S "$SRC/wait_kernels.cu" -o "$OUT"
echo "wrote $OUT"
