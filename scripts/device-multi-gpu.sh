#!/usr/bin/env bash
# Several GPUs of one machine (from the device pack, on a machine of two GPUs or more):
#   bash scripts/pack-device.sh                 # here, builds device-pack/
#   bash device-pack/device-multi-gpu.sh        # on the GPU machine
# 1. One worker serving both GPUs: tests/c/multi_device (peer queries and codes, hipMemcpyPeer
#    and hipMemcpyPeerAsync both ways, a kernel on device 1 reading and writing device 0's
#    memory after hipDeviceEnablePeerAccess, hipMemPoolSetAccess for the peer device and a
#    kernel on device 1 reading that pool's memory, modules per device), over the same-host
#    transport and over TCP. Then tests/c/visible_devices under HIP_VISIBLE_DEVICES,
#    CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES (GPUs 1,0 reversed, by index and by UUID;
#    one GPU; none), each GPU known by its pciBusID.
# 2. Peer-copy bandwidth: `hip-remote bench --sections peer` (hipMemcpyPeer through the client
#    library against the backend's cuMemcpyPeerAsync in-process, one run).
# 3. Two workers on this host, one GPU each, as one device list: device-multi-worker.sh and
#    device-cross-worker.sh (copies and events between the workers, their bandwidth against a
#    copy within one worker).
# The topology (`nvidia-smi topo -m`) goes with the results. NVLink multicast is never used.
# Output: $OUT/multi-gpu/ (summary.txt, peer-bench.{md,json}, the logs). Exit status 0 passed,
# 1 failed, 77 fewer than two GPUs (with a SKIP line).
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
ROOT_OUT=${OUT:-/tmp/device-out}
OUT=$ROOT_OUT/multi-gpu
BACKEND=${BACKEND:-cuda}
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then echo "device-multi-gpu: SKIP: ${gpus:-0} GPU(s), it needs 2"; exit 77; fi
{ nvidia-smi -L; nvidia-smi topo -m; } > "$OUT/topology.txt" 2>&1
failed=0
say() { echo "$*" | tee -a "$OUT/summary.txt"; }

WPID=""
trap '[ -n "$WPID" ] && kill "$WPID" 2>/dev/null' EXIT
"$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend "$BACKEND" > "$OUT/worker.stdout" 2> "$OUT/worker.log" &
WPID=$!
for _ in $(seq 100); do grep -q "listening on" "$OUT/worker.stdout" 2>/dev/null && break; sleep 0.1; done
ADDR=$(sed -n 's/.*listening on //p' "$OUT/worker.stdout" | head -1)
[ -n "$ADDR" ] || { say "device-multi-gpu: the worker did not start"; cat "$OUT/worker.log"; exit 1; }
for transport in shm tcp; do
  shm=auto; [ "$transport" = tcp ] && shm=off
  if HIP_REMOTE_WORKER=$ADDR HIP_REMOTE_SHM=$shm timeout 300 "$PACK/tests/multi_device" > "$OUT/multi_device-$transport.log" 2>&1; then
    say "PASS multi_device ($transport, one worker, GPUs 0 and 1)"
  else
    say "FAIL multi_device ($transport): $(grep -m1 FAIL "$OUT/multi_device-$transport.log")"; failed=1
  fi
done
# The visibility variables, applied by the client to the worker's two GPUs: the program gets
# each GPU's pciBusID and UUID with both visible, then checks what each setting leaves.
VIS=$PACK/tests/visible_devices
if HIP_REMOTE_WORKER=$ADDR timeout 120 "$VIS" uuids > "$OUT/visible-ids.log" 2>&1; then
  bus0=$(awk '$1 == "BUS" && $2 == 0 {print $3}' "$OUT/visible-ids.log")
  bus1=$(awk '$1 == "BUS" && $2 == 1 {print $3}' "$OUT/visible-ids.log")
  uuid1=$(awk '$1 == "UUID" {print $2}' "$OUT/visible-ids.log" | sed -n 2p)
  n=0
  while read -r variable value expected; do
    n=$((n + 1))
    [ "$expected" = none ] && expected=""
    # shellcheck disable=SC2086 # the expected devices are separate arguments
    if env "$variable=$value" HIP_REMOTE_WORKER="$ADDR" timeout 120 "$VIS" $expected > "$OUT/visible-$n.log" 2>&1; then
      say "PASS visible_devices $variable=$value"
    else
      say "FAIL visible_devices $variable=$value: $(grep -m1 FAIL "$OUT/visible-$n.log")"; failed=1
    fi
  done <<CASES
HIP_VISIBLE_DEVICES 1,0 $bus1:0 $bus0:0
CUDA_VISIBLE_DEVICES 1 $bus1:0
ROCR_VISIBLE_DEVICES 1,0,7 $bus1:0 $bus0:0
HIP_VISIBLE_DEVICES $uuid1,0 $bus1:0 $bus0:0
HIP_VISIBLE_DEVICES -1 none
CASES
else
  say "FAIL visible_devices: could not read the GPUs' ids: $(grep -m1 FAIL "$OUT/visible-ids.log")"; failed=1
fi
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=""

# The bench's embedded worker serves every GPU, as the native backend does.
if (unset HIP_REMOTE_WORKER; timeout 300 "$PACK/bin/hip-remote" bench --backend "$BACKEND" --lib "$PACK/lib/libamdhip64.so" --sections peer \
    --json "$OUT/peer-bench.json" --markdown "$OUT/peer-bench.md" > /dev/null 2> "$OUT/peer-bench.log"); then
  say "PASS peer bench"; grep -E '^\| [0-9]+ MiB' "$OUT/peer-bench.md" | tee -a "$OUT/summary.txt"
else
  say "FAIL peer bench (see peer-bench.log)"; tail -5 "$OUT/peer-bench.log"; failed=1
fi

for script in device-multi-worker.sh device-cross-worker.sh; do
  if OUT=$OUT BACKEND=$BACKEND bash "$PACK/$script" > "$OUT/${script%.sh}.log" 2>&1; then
    say "PASS $script"
  else
    say "FAIL $script"; failed=1
  fi
  grep -E "BENCH|passed|FAILED|skipped" "$OUT/${script%.sh}.log" | tee -a "$OUT/summary.txt"
done
[ "$failed" = 0 ] || { say "device-multi-gpu: FAILED (see $OUT)"; exit 1; }
say "device-multi-gpu: passed"
