#!/usr/bin/env bash
# llama.cpp's HIP backend (ggml, GGML_HIP=ON) built unchanged against a hip-remote install,
# and its test-backend-ops run against a worker.
#
#   scripts/llama-cpp.sh build SRC PREFIX BUILD   configure with CMake's HIP language and our
#                                                 clang driver ($PREFIX/lib/llvm/bin/clang++),
#                                                 build test-backend-ops only
#   scripts/llama-cpp.sh run BUILD [OPS]          run test-backend-ops (mode test) on the HIP
#                                                 backend against $HIP_REMOTE_WORKER; OPS is a
#                                                 comma list for -o (default: a few-minute set)
#   scripts/llama-cpp.sh pack BUILD PACK PREFIX   copy what the GPU machine needs (the test,
#                                                 ggml's libraries, the install's rocBLAS
#                                                 stand-in) into PACK/llama; PACK is
#                                                 scripts/pack-device.sh's (our libraries in
#                                                 PACK/lib, the worker in PACK/bin)
#   PACK/llama/llama-cpp.sh gpu                   on the GPU machine (no network, no cargo):
#                                                 starts a cuda worker from PACK/bin, runs all
#                                                 of test-backend-ops, writes $OUT/llama-*.log
#
# SRC is a llama.cpp checkout (the one measured: llama-cpp-python 0.3.36's vendored copy,
# see docs/BENCHMARKS.md); PREFIX is `hip-remote install --prefix PREFIX`.
set -euo pipefail
mode=${1:-}
shift || true

# The subset the host backend runs in a few minutes (ops whose kernels compile quickly there).
HOST_OPS=${HOST_OPS:-ADD,MUL,SCALE,SQR,SQRT,CPY,GET_ROWS,SOFT_MAX,RMS_NORM,NORM,SUM_ROWS,ARGMAX,UNARY,CONCAT,CLAMP}

summarize() { # LOG: pass/fail counts as test-backend-ops prints them
  local log=$1
  local ok fail
  ok=$(grep -c ' OK$' "$log" || true)
  fail=$(grep -c 'FAIL$' "$log" || true)
  echo "$ok passed, $fail failed"
  grep 'FAIL$' "$log" | head -20 || true
}

case "$mode" in
build)
  src=$1 prefix=$2 build=$3
  export PATH="$prefix/bin:$PATH"
  HIPCXX="$prefix/lib/llvm/bin/clang++" cmake -S "$src" -B "$build" -G "Unix Makefiles" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DGGML_HIP=ON -DGGML_CUDA_FA_ALL_QUANTS=OFF \
    -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGPU_TARGETS="${GPU_TARGETS:-gfx90a}"
  cmake --build "$build" --target test-backend-ops -j "${JOBS:-2}"
  ;;
run)
  build=$1 ops=${2:-$HOST_OPS}
  exe=$(find "$build" -name test-backend-ops -type f -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "no test-backend-ops under $build: run the build step first" >&2; exit 1; }
  log=${LOG:-$build/test-backend-ops.log}
  timeout "${TIMEOUT:-1800}" "$exe" test -b ROCm0 -o "$ops" 2>&1 | tee "$log" | grep -E 'FAIL|Backend|passed' || true
  summarize "$log"
  ;;
pack)
  build=$1 pack=$2 prefix=$3
  mkdir -p "$pack/llama/lib"
  cp -P "$prefix"/lib/librocblas.so* "$pack/llama/lib/"
  cp "$(find "$build" -name test-backend-ops -type f -perm -u+x | head -1)" "$pack/llama/"
  find "$build" -name 'libggml*.so*' -exec cp -P {} "$pack/llama/lib/" \;
  cp "$0" "$pack/llama/llama-cpp.sh"
  ;;
gpu)
  here=$(cd "$(dirname "$0")" && pwd)
  pack=$(dirname "$here")
  OUT=${OUT:-/tmp/device-out}
  mkdir -p "$OUT"
  export LD_LIBRARY_PATH="$here/lib:$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  "$pack/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" > "$OUT/llama-worker.stdout" 2> "$OUT/llama-worker.log" &
  wpid=$!
  trap 'kill $wpid 2>/dev/null' EXIT
  for _ in $(seq 100); do grep -q "listening on" "$OUT/llama-worker.stdout" 2>/dev/null && break; sleep 0.1; done
  export HIP_REMOTE_WORKER=$(sed -n 's/.*listening on //p' "$OUT/llama-worker.stdout" | head -1)
  timeout "${TIMEOUT:-3000}" "$here/test-backend-ops" test -b ROCm0 > "$OUT/llama-test-backend-ops.log" 2>&1 || true
  summarize "$OUT/llama-test-backend-ops.log" | tee "$OUT/llama-summary.txt"
  ;;
*)
  sed -n '2,20p' "$0"
  exit 2
  ;;
esac
