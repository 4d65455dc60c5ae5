#!/usr/bin/env bash
# Copies between workers of one device list, on the GPU machine (from the device pack):
#   bash scripts/pack-device.sh            # here, builds device-pack/
#   bash device-pack/device-cross-worker.sh   # on the GPU machine
# 1. Two host-backend workers serving sessions in their own process, --dial-workers, on
#    loopback: tests/c/multi_worker `copies` (both ways, sync and async, stream order, a copy
#    after another worker's event, each verified against a pattern) and `bench` (bandwidth of
#    copies between the workers against a copy within one: BENCH line in bench.log).
# 2. Two GPU workers of BACKEND (default cuda; GPU 0 and GPU 1, or both GPU 0): their sessions
#    run in session processes, which take no part in copies between workers; `copies` must
#    fail at once with hipErrorNotSupported and the message naming session processes (no hang,
#    no partial copy), and tests/c/multi_worker's full run passes (device-multi-worker.sh).
# Output: $OUT/cross-worker/{copies,bench,gpu-copies}.log and the workers' logs.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}/cross-worker
BACKEND=${BACKEND:-cuda}
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
TOKEN=cross-worker-check-$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; pids=(); }
trap cleanup EXIT
start() { # start NAME PORT ARGS...
  local name=$1 port=$2
  shift 2
  HIP_REMOTE_TOKEN=$TOKEN "$PACK/bin/hip-worker" --listen "127.0.0.1:$port" "$@" > "$OUT/worker-$name.log" 2>&1 &
  pids+=($!)
}
wait_listening() {
  for _ in $(seq 150); do
    grep -q "listening" "$OUT/worker-$1.log" 2>/dev/null && grep -q "listening" "$OUT/worker-$2.log" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
client() { # client LOG ARGS...
  local log=$1
  shift
  HIP_REMOTE_WORKER=127.0.0.1:18625,127.0.0.1:18626 HIP_REMOTE_TOKEN=$TOKEN HIP_REMOTE_DEBUG=1 \
    timeout 300 "$PACK/tests/multi_worker" "$@" > "$OUT/$log" 2>&1
}
failed=0

start host-a 18625 --backend host --host-memory-mib 1024 --dial-workers
start host-b 18626 --backend host --host-memory-mib 1024 --dial-workers
wait_listening host-a host-b || { echo "device-cross-worker: host workers did not start (see $OUT)"; exit 1; }
client copies.log copies && grep -q "PASS multi_worker copies" "$OUT/copies.log" || { echo "copies (host workers): FAILED"; failed=1; }
client bench.log bench 256 8 && grep "BENCH" "$OUT/bench.log" || { echo "bench (host workers): FAILED"; failed=1; }
cleanup

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
second=0; [ "${gpus:-0}" -ge 2 ] && second=1
start gpu-a 18625 --backend "$BACKEND" --devices 0 --dial-workers
start gpu-b 18626 --backend "$BACKEND" --devices "$second" --dial-workers
wait_listening gpu-a gpu-b || { echo "device-cross-worker: GPU workers did not start (see $OUT)"; exit 1; }
client gpu-copies.log copies
if grep -q "hipErrorNotSupported" "$OUT/gpu-copies.log" && grep -q "session processes" "$OUT/gpu-copies.log"; then
  echo "GPU workers: copies between them refused with hipErrorNotSupported, as documented"
else
  echo "GPU workers: expected a clear hipErrorNotSupported refusal: FAILED"; failed=1
fi
client gpu-full.log a:0 b:0 && grep -q "PASS multi_worker" "$OUT/gpu-full.log" || { echo "multi_worker on GPU workers: FAILED"; failed=1; }
cleanup
[ "$failed" = 0 ] || { echo "device-cross-worker: FAILED (see $OUT)"; exit 1; }
echo "device-cross-worker: passed"
