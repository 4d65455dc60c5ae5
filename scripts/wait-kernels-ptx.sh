#!/usr/bin/env bash
# Regenerates worker/src/backend/cuda/wait_kernels.ptx from wait_kernels.cu (the cuda
# backend's masked stream waits). Needs clang 15 with the NVPTX target; no CUDA install (the
# source declares what it uses). PTX ISA 6.3 for `nanosleep`; sm_70 for `ld.acquire.sys`.
set -euo pipefail
cd "$(dirname "$0")/../worker/src/backend/cuda"
CLANG=${CLANG:-clang++-15}
"$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O2 \
  -Xclang -target-feature -Xclang +ptx63 -S wait_kernels.cu -o wait_kernels.ptx
echo "wrote $(pwd)/wait_kernels.ptx"
