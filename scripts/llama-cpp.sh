#!/usr/bin/env bash
# llama.cpp's HIP backend (ggml, GGML_HIP=ON) built unchanged against a hip-remote install,
# its test-backend-ops run against a worker, llama-bench on a tiny GGUF model.
#
#   scripts/llama-cpp.sh build SRC PREFIX BUILD  configure with CMake's HIP language and our clang
#                                                driver ($PREFIX/lib/llvm/bin/clang++); build ggml
#                                                (its HIP backend), test-backend-ops, llama-bench
#   scripts/llama-cpp.sh run BUILD [OPS]         test-backend-ops (mode test) on ROCm0 against
#                                                $HIP_REMOTE_WORKER, or a host worker it starts
#                                                (HIP_REMOTE_CXX=clang++: ggml's device code uses
#                                                clang's vector extensions); OPS: a comma list
#                                                for -o (default: $HOST_OPS below)
#   scripts/llama-cpp.sh smoke SRC PREFIX        CI's check: llama.cpp configured against PREFIX
#                                                (find_package(hip, hipblas, rocblas),
#                                                enable_language(HIP)) and two ggml-hip objects
#                                                compiled through every pass of our hipcc
#   scripts/llama-cpp.sh ci                      the smoke step on the measured sources (the PyPI
#                                                sdist below, downloaded and checked) and an
#                                                install of this checkout's debug build
#   scripts/llama-cpp.sh pack BUILD OUT.tar.xz [SRC]
#                                                what the GPU machine needs beside
#                                                scripts/pack-device.sh's pack: the two programs,
#                                                ggml's and llama's libraries, the rocBLAS
#                                                stand-in, a tiny model (scripts/llama-tiny-model.py)
#                                                and this script, as llama/ in one archive
#                                                (with SRC: its sources too, for `native`;
#                                                TINY_MODEL=FILE packs a model written before)
#   bash device-pack/llama/llama-cpp.sh gpu      on the GPU machine (no network, no cargo): a cuda
#                                                worker from device-pack/bin, test-backend-ops
#                                                on ROCm0 ($GPU_OPS; OPS=all for every case)
#                                                and llama-bench, logs and a summary in
#                                                $OUT/llama-*
#   bash device-pack/llama/llama-cpp.sh native [SRC.tar.xz]
#                                                on the GPU machine: ggml's own CUDA build of the
#                                                same sources (nvcc, sm_90, the same options) and
#                                                the same two runs, for the comparison; then its
#                                                llama-bench over our ggml libraries (ROCm0)
#
# SRC is a llama.cpp tree; the one measured is the copy vendored in the PyPI sdist
# llama_cpp_python-0.3.36 (vendor/llama.cpp; `pip download llama-cpp-python==0.3.36
# --no-binary :all: --no-deps`). PREFIX is `hip-remote install --prefix PREFIX`.
set -euo pipefail
mode=${1:-}
shift || true

# The llama.cpp measured: the copy vendored in this PyPI sdist (CI's smoke step downloads it).
LLAMA_CPP_PYTHON_VERSION=0.3.36
LLAMA_CPP_PYTHON_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

# The options that keep the build feasible on a small machine, all llama.cpp's own: no
# flash-attention kernels (GGML_CUDA_FA=OFF: FLASH_ATTN_EXT is then "not supported"), one
# K/V type pair for the vector FA instances, one named target (our driver always adds its
# portable targets: PTX for sm_70 and the device source).
LLAMA_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DGGML_HIP=ON -DGGML_CUDA_FA=OFF -DGGML_CUDA_FA_QUANTS=f16-f16
  -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=OFF -DGPU_TARGETS=gfx90a)

# The host worker's subset (CI-sized): element-wise, normalisation, softmax, copies and row
# gathers, whose kernel files the host backend compiles in seconds to a minute each.
HOST_OPS=${HOST_OPS:-ADD,MUL,SUB,DIV,SCALE,SQR,SQRT,CLAMP,SOFT_MAX,RMS_NORM,NORM,GET_ROWS,CPY,SUM_ROWS,ARGMAX,CONCAT,ROPE}

# The GPU machine's default set: the host subset and the matrix products (every type), the
# comparison with ggml's own CUDA build in a couple of minutes.
GPU_OPS=${GPU_OPS:-$HOST_OPS,MUL_MAT}

summarize() { # LOG: test-backend-ops' own counts (passed/total), FAIL and "not supported" lines
  local log=$1 ok fail unsupported total
  ok=$(grep -c $'\e\\[1;32mOK' "$log" || true)
  fail=$(grep -v '^ *Backend' "$log" | grep -c $'\e\\[1;31mFAIL' || true)
  unsupported=$(grep -c 'not supported' "$log" || true)
  total=$(sed -n 's/^ *\([0-9]*\/[0-9]*\) tests passed.*/\1/p' "$log" | tail -1)
  echo "test-backend-ops: ${total:-?} tests passed (cases OK: $ok, FAIL: $fail, not supported: $unsupported)"
  grep -v '^ *Backend' "$log" | grep $'\e\\[1;31mFAIL' | sed 's/\x1b\[[0-9;]*m//g' | head -30 || true
}

start_worker() { # BIN BACKEND LOGDIR: a worker on a free local port; sets HIP_REMOTE_WORKER, worker_pid
  # WORKER_ARGS: more worker flags (e.g. `--devices 0`: one GPU of several). The compile and
  # JIT cache lies outside LOGDIR: session processes run as another user, who must reach it.
  local bin=$1 backend=$2 dir=$3
  # shellcheck disable=SC2086 # WORKER_ARGS is a list of flags
  "$bin" --listen 127.0.0.1:0 --backend "$backend" --allow-host-code --rtc-cache-dir "${RTC_CACHE_DIR:-/tmp/hip-remote-rtc-cache}" ${WORKER_ARGS:-} \
    >"$dir/worker.stdout" 2>"$dir/worker.log" &
  worker_pid=$!
  for _ in $(seq 200); do grep -q "listening on" "$dir/worker.stdout" 2>/dev/null && break; sleep 0.1; done
  HIP_REMOTE_WORKER=$(sed -n 's/^hip-worker listening on \([0-9.:]*\).*/\1/p' "$dir/worker.stdout" | head -1)
  [ -n "$HIP_REMOTE_WORKER" ] || { echo "the worker did not start: $(tail -3 "$dir/worker.log")" >&2; exit 1; }
  export HIP_REMOTE_WORKER
}

case "$mode" in
build)
  src=$1 prefix=$2 build=$3
  export PATH="$prefix/bin:$PATH"
  HIPCXX="$prefix/lib/llvm/bin/clang++" cmake -S "$src" -B "$build" -G "Unix Makefiles" \
    -DCMAKE_PREFIX_PATH="$prefix" "${LLAMA_OPTIONS[@]}"
  cmake --build "$build" --target ggml test-backend-ops llama-bench -j "${JOBS:-2}"
  ;;
run)
  build=$1 ops=${2:-$HOST_OPS}
  exe=$(find "$build" -name test-backend-ops -type f -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "no test-backend-ops under $build: run the build step first" >&2; exit 1; }
  log=${LOG:-$build/test-backend-ops.log}
  if [ -z "${HIP_REMOTE_WORKER:-}" ]; then
    worker=${HIP_WORKER_BIN:-$(dirname "$(command -v hipcc)")/hip-worker}
    HIP_REMOTE_CXX=${HIP_REMOTE_CXX:-$(command -v clang++-15 || command -v clang++)}
    HIP_REMOTE_CXX_TIMEOUT=${HIP_REMOTE_CXX_TIMEOUT:-1200}
    export HIP_REMOTE_CXX HIP_REMOTE_CXX_TIMEOUT
    start_worker "$worker" host "$build"
    trap 'kill $worker_pid 2>/dev/null' EXIT
  fi
  timeout "${TIMEOUT:-3600}" "$exe" test -b ROCm0 -o "$ops" >"$log" 2>&1 || true
  summarize "$log"
  ;;
smoke)
  src=$1 prefix=$2
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  export PATH="$prefix/bin:$PATH"
  HIPCXX="$prefix/lib/llvm/bin/clang++" cmake -S "$src" -B "$build" -G "Unix Makefiles" \
    -DCMAKE_PREFIX_PATH="$prefix" "${LLAMA_OPTIONS[@]}" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
    >"$build/configure.log" 2>&1 || { tail -30 "$build/configure.log"; exit 1; }
  grep -E "HIP and hipBLAS found|Including HIP backend" "$build/configure.log"
  # Two of ggml-hip's objects: one with hipBLAS, fp16 and warp reductions (softmax), one with
  # function-address template arguments (binbcast).
  for object in softmax.cu.o binbcast.cu.o; do
    make -C "$build/ggml/src/ggml-hip" "__/ggml-cuda/$object" >"$build/$object.log" 2>&1 \
      || { grep -B2 -A6 error "$build/$object.log" | head -60; exit 1; }
    echo "built ggml-hip's $object"
  done
  ;;
ci)
  # CI (scripts/test.sh): the sdist from PyPI (pinned by hash), its ggml tree only, an install
  # from this checkout's debug build, then smoke. A counted skip when PyPI cannot be reached.
  root=$(cd "$(dirname "$0")/.." && pwd)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  sdist=llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/hip-remote/llama
  mkdir -p "$cache"
  if ! echo "$LLAMA_CPP_PYTHON_SHA256  $cache/$sdist" | sha256sum -c --status 2>/dev/null; then
    python3 -m pip download -q --no-deps --no-binary :all: -d "$cache" \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >/dev/null 2>&1 \
      || { echo "SKIP: llama.cpp's sources (the PyPI sdist $sdist) could not be downloaded"; exit 77; }
    echo "$LLAMA_CPP_PYTHON_SHA256  $cache/$sdist" | sha256sum -c --status \
      || { echo "$sdist: not the measured file (sha256 differs)" >&2; exit 1; }
  fi
  tar -C "$work" -xzf "$cache/$sdist" "${sdist%.tar.gz}/vendor/llama.cpp"
  "${CARGO_TARGET_DIR:-$root/target}/debug/hip-remote" install --prefix "$work/prefix" >/dev/null
  bash "$0" smoke "$work/${sdist%.tar.gz}/vendor/llama.cpp" "$work/prefix"
  ;;
pack)
  build=$1 out=$2
  here=$(cd "$(dirname "$0")" && pwd)
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/llama/lib"
  for exe in test-backend-ops llama-bench; do
    found=$(find "$build" -name "$exe" -type f -perm -u+x | head -1)
    if [ -n "$found" ]; then cp "$found" "$stage/llama/"; else echo "note: no $exe under $build (not packed)"; fi
  done
  find "$build" \( -name 'libggml*.so*' -o -name 'libllama*.so*' -o -name 'libmtmd*.so*' \) -exec cp -P {} "$stage/llama/lib/" \;
  prefix=${PREFIX:-$(dirname "$(dirname "$(command -v hipcc)")")}
  cp -P "$prefix"/lib/librocblas.so* "$stage/llama/lib/"
  strip --strip-unneeded "$stage/llama/"test-backend-ops* "$stage/llama/"llama-bench* 2>/dev/null || true
  if [ -n "${TINY_MODEL:-}" ]; then cp "$TINY_MODEL" "$stage/llama/tiny-q8_0.gguf"  # one written before
  else "${PYTHON:-python3}" "$here/llama-tiny-model.py" "$stage/llama/tiny-q8_0.gguf"; fi  # needs pip's gguf
  cp "$here/llama-cpp.sh" "$stage/llama/llama-cpp.sh"
  if [ -n "${3:-}" ]; then # SRC: the sources for the native build on the GPU machine (~8 MB)
    tar -C "$3" --exclude='*.gguf' -cf - CMakeLists.txt cmake include ggml src common tests tools vendor licenses LICENSE app \
      | xz -T0 -6 >"$stage/llama/llama-src.tar.xz"
  fi
  tar -C "$stage" -cf - llama | xz -T0 -6 >"$out"
  du -h "$out"
  ;;
gpu | native)
  here=$(cd "$(dirname "$0")" && pwd)
  pack=$(dirname "$here")
  OUT=${OUT:-/tmp/device-out}
  mkdir -p "$OUT"
  if [ "$mode" = native ]; then
    # ggml's own CUDA backend from the same sources and options (the FA and target choices
    # above; sm_90 is the H200's), built here with nvcc: the comparison's baseline.
    srcdir=$(mktemp -d)
    tar -C "$srcdir" -xJf "${1:-$here/llama-src.tar.xz}"
    src=$srcdir
    native=$srcdir/build
    t0=$SECONDS
    cmake -S "$src" -B "$native" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DGGML_CUDA_FA=OFF \
      -DGGML_CUDA_FA_QUANTS=f16-f16 -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
      -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
      -DLLAMA_BUILD_SERVER=OFF >"$OUT/llama-native-build.log" 2>&1
    cmake --build "$native" --target test-backend-ops llama-bench -j "$(nproc)" >>"$OUT/llama-native-build.log" 2>&1
    echo "native build: $((SECONDS - t0)) s" | tee "$OUT/llama-native-summary.txt"
    ops=${OPS:-$GPU_OPS}
    [ "$ops" = all ] && ops=
    timeout "${TIMEOUT:-900}" "$native/bin/test-backend-ops" test -b CUDA0 ${ops:+-o "$ops"} >"$OUT/llama-native-test-backend-ops.log" 2>&1 || true
    summarize "$OUT/llama-native-test-backend-ops.log" | tee -a "$OUT/llama-native-summary.txt"
    "$native/bin/llama-bench" -m "$here/tiny-q8_0.gguf" -ngl 99 -p 512 -n 128 -r 3 -o md \
      >"$OUT/llama-native-bench.md" 2>"$OUT/llama-native-bench.log" || true
    tee -a "$OUT/llama-native-summary.txt" <"$OUT/llama-native-bench.md"
    # Ours: the same llama-bench and libllama over our ggml libraries (GGML_HIP, ROCm0 on a cuda
    # worker) when the pack has no llama-bench of its own: ggml's backends are found at run
    # time, and LD_LIBRARY_PATH puts ours before the build's RUNPATH.
    if [ ! -x "$here/llama-bench" ]; then
      export LD_LIBRARY_PATH="$here/lib:$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      start_worker "$pack/bin/hip-worker" "${BACKEND:-cuda}" "$OUT"
      trap 'kill $worker_pid 2>/dev/null' EXIT
      "$native/bin/llama-bench" -m "$here/tiny-q8_0.gguf" -ngl 99 -p 512 -n 128 -r 3 -o md \
        >"$OUT/llama-bench.md" 2>"$OUT/llama-bench.log" || true
      { echo "ours (ROCm0 through a cuda worker):"; cat "$OUT/llama-bench.md"; } | tee -a "$OUT/llama-native-summary.txt"
    fi
    exit 0
  fi
  export LD_LIBRARY_PATH="$here/lib:$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  start_worker "$pack/bin/hip-worker" "${BACKEND:-cuda}" "$OUT"
  trap 'kill $worker_pid 2>/dev/null' EXIT
  t0=$SECONDS
  # test-backend-ops on ROCm0, the cuda worker's GPU through our client: $GPU_OPS by default
  # (OPS=all: every case, which needs more than the few minutes a GPU session spares).
  ops=${OPS:-$GPU_OPS}
  [ "$ops" = all ] && ops=
  timeout "${TIMEOUT:-150}" "$here/test-backend-ops" test -b ROCm0 ${ops:+-o "$ops"} >"$OUT/llama-test-backend-ops.log" 2>&1 || true
  { echo "test-backend-ops (${ops:-all}): $((SECONDS - t0)) s"; summarize "$OUT/llama-test-backend-ops.log"; } | tee "$OUT/llama-summary.txt"
  if [ -x "$here/llama-bench" ]; then
    "$here/llama-bench" -m "$here/tiny-q8_0.gguf" -ngl 99 -p 512 -n 128 -r 3 -o md \
      >"$OUT/llama-bench.md" 2>"$OUT/llama-bench.log" || true
    tee -a "$OUT/llama-summary.txt" <"$OUT/llama-bench.md"
  else
    echo "llama-bench: not in this pack" | tee -a "$OUT/llama-summary.txt"
  fi
  ;;
*)
  sed -n '2,39p' "$0"
  exit 2
  ;;
esac
