#!/usr/bin/env bash
# Several GPU workers as one device list, on the GPU machine (from the device pack):
#   bash device-pack/device-multi-worker.sh
# Starts two workers of BACKEND (default cuda) on this machine: with two GPUs or more, worker a
# serves GPU 0 and worker b GPU 1 (--devices); with one, both serve GPU 0 (two workers, one
# GPU). Then runs tests/c/multi_worker with HIP_REMOTE_WORKER=a,b: device count and
# properties, memory, a hiprtc kernel on each device, streams, events and host callbacks
# used from another device, a cross-worker hipStreamWaitEvent, peer answers across workers,
# refused cross-worker copies. Output: $OUT/multi-worker/{run,worker-a,worker-b}.log.
# WORKER_ARGS: more worker flags (BACKEND=host WORKER_ARGS=--allow-host-code runs it without a GPU).
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}/multi-worker
BACKEND=${BACKEND:-cuda}
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
second=0; [ "${gpus:-0}" -ge 2 ] && second=1
TOKEN=multi-worker-check-$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
start() { # start NAME PORT DEVICE
  # shellcheck disable=SC2086 # WORKER_ARGS is a list of flags
  HIP_REMOTE_TOKEN=$TOKEN "$PACK/bin/hip-worker" --listen "127.0.0.1:$2" --backend "$BACKEND" --devices "$3" ${WORKER_ARGS:-} \
    > "$OUT/worker-$1.log" 2>&1 &
  pids+=($!)
}
start a 18615 0
start b 18616 "$second"
for _ in $(seq 100); do
  grep -q "listening" "$OUT/worker-a.log" 2>/dev/null && grep -q "listening" "$OUT/worker-b.log" 2>/dev/null && break
  sleep 0.2
done
HIP_REMOTE_WORKER=127.0.0.1:18615,127.0.0.1:18616 HIP_REMOTE_TOKEN=$TOKEN HIP_REMOTE_DEBUG=1 \
  timeout 300 "$PACK/tests/multi_worker" a:0 b:0 > "$OUT/run.log" 2>&1
status=$?
echo "GPUs: ${gpus:-0}; worker b on GPU $second" >> "$OUT/run.log"
tail -n 5 "$OUT/run.log"
grep -q "PASS multi_worker" "$OUT/run.log" && [ "$status" = 0 ] || { echo "device-multi-worker: FAILED (see $OUT)"; exit 1; }
echo "device-multi-worker: passed"
