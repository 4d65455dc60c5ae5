#!/usr/bin/env bash
# First launch of a hipcc-built program (benches/hip/first_launch.hip, built into the device
# pack) on the GPU machine: the cuda backend with the driver's JIT cache cold, warm and off,
# and the host backend with its compile cache cold and warm. Each line is one run of the
# program: first_launch_ms (module load + compile or cache hit + first kernel) and
# next_launch_ms (a launch of the loaded module). Usage: bash device-pack/device-first-launch.sh
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/first-launch}; mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run_with_worker() { # run_with_worker LABEL RUNS WORKER-ARGS...: starts a worker, runs the program RUNS times
  local label=$1 runs=$2; shift 2
  "$PACK/bin/hip-worker" --listen 127.0.0.1:0 "$@" > "$OUT/$label.stdout" 2> "$OUT/$label.log" &
  local pid=$!
  for _ in $(seq 100); do grep -q "listening on" "$OUT/$label.stdout" 2>/dev/null && break; sleep 0.1; done
  local addr; addr=$(sed -n 's/.*listening on //p' "$OUT/$label.stdout" | head -1)
  for i in $(seq "$runs"); do
    echo "$label run $i: $(HIP_REMOTE_WORKER=$addr timeout 120 "$PACK/bench/first_launch" 2>&1 | tail -1)"
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
cache=$(mktemp -d)
CUDA_CACHE_PATH=$cache/nv run_with_worker cuda-jit-cache 3 --backend cuda
CUDA_CACHE_DISABLE=1 run_with_worker cuda-jit-no-cache 2 --backend cuda
run_with_worker host-compile-cache 3 --backend host --allow-host-code --rtc-cache-dir "$cache/rtc"
rm -rf "$cache"
