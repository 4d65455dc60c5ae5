#!/usr/bin/env bash
# GPU check of "Faults in shared mode" (docs/ISOLATION.md). Runs on the GPU machine from the
# packed folder (scripts/pack-device.sh packs tests/device_fault_heal and this script):
#
#   bash device-pack/device-fault-heal.sh            # cuda backend; BACKEND=hip for ROCm
#
# (WORKER_ARGS replaces `--isolation shared` for a worker that has no such flag.)
#
# Starts a `--isolation shared` worker (its sessions run in one shared session process), opens
# a session that holds memory on device 0, runs a kernel writing through a wild pointer in a
# second session (hipErrorIllegalAddress for it, on every later synchronising call), checks the
# first session gets hipErrorIllegalAddress too, that a client started afterwards is served,
# within a few seconds, by the same worker from a NEW shared process, and that the poisoned
# process exits once its clients have left. Then, on a worker with `--max-kernel-ms 2000`, a
# kernel that never returns (tests/kernel_watchdog spin): the shared process is ended,
# hipErrorLaunchTimeOut for its client within the timeout, and the next client is served by a
# new process; stream waits held past the limit are not ended. Logs in $OUT.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PROG="$PACK/tests/device_fault_heal"
SPIN="$PACK/tests/kernel_watchdog"
for p in "$PROG" "$SPIN"; do [ -x "$p" ] || { echo "FAIL: $p is missing (scripts/pack-device.sh builds it)"; exit 1; }; done
read -r -a ARGS <<< "${WORKER_ARGS---isolation shared}"

WORKERS=()
HOLDER=
trap 'kill "${WORKERS[@]}" ${HOLDER:-} 2>/dev/null; rm -f "$OUT/holder.in"' EXIT
# start_worker TAG ARGS...: a worker logging to $OUT/TAG.{stdout,log}; sets ADDR and WPID.
start_worker() {
  local tag=$1; shift
  "$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" "${ARGS[@]}" "$@" \
    > "$OUT/$tag.stdout" 2> "$OUT/$tag.log" &
  WPID=$!; WORKERS+=("$WPID")
  for _ in $(seq 300); do grep -q "listening on" "$OUT/$tag.stdout" 2>/dev/null && break; sleep 0.1; done
  ADDR=$(sed -n 's/.*listening on \([0-9.:]*\)$/\1/p' "$OUT/$tag.stdout" | head -1)
  [ -n "$ADDR" ] || { echo "FAIL: worker $tag did not start:"; cat "$OUT/$tag.log"; exit 1; }
}
start_worker fault-heal --metrics 127.0.0.1:0
export HIP_REMOTE_WORKER=$ADDR
fail=0
verdict() { if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; tail -5 "$3"; fail=1; fi; }

# Session A holds memory on the device before the fault.
rm -f "$OUT/holder.in"; mkfifo "$OUT/holder.in"
"$PROG" hold < "$OUT/holder.in" > "$OUT/holder.log" 2>&1 &
HOLDER=$!
exec 3> "$OUT/holder.in"
for _ in $(seq 300); do grep -q READY "$OUT/holder.log" && break; sleep 0.1; done
grep -q READY "$OUT/holder.log" || { echo "FAIL: the holder did not start"; cat "$OUT/holder.log"; exit 1; }

# Session B faults.
timeout 120 "$PROG" fault > "$OUT/fault.log" 2>&1; verdict $? "faulting session gets hipErrorIllegalAddress on every call" "$OUT/fault.log"

# Session A: its work on the device is lost.
echo go >&3; exec 3>&-
wait "$HOLDER"; verdict $? "session open during the fault gets hipErrorIllegalAddress" "$OUT/holder.log"; HOLDER=

# A new client, served again.
start=$(date +%s.%N)
timeout 60 "$PROG" fresh > "$OUT/fresh.log" 2>&1; rc=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
verdict $rc "a new session after the fault is served (${took}s)" "$OUT/fresh.log"

kill -0 $WPID 2>/dev/null; verdict $? "the worker is still running" "$OUT/fault-heal.log"
grep -q "device fault in the shared session process" "$OUT/fault-heal.log"; verdict $? "the worker logged the fault" "$OUT/fault-heal.log"
# The shared processes started: the poisoned one, then the fresh one.
mapfile -t PIDS < <(sed -n 's/.*shared session process started pid=\([0-9]*\).*/\1/p' "$OUT/fault-heal.log")
[ "${#PIDS[@]}" -eq 2 ] && [ "${PIDS[0]}" != "${PIDS[1]}" ]; verdict $? "the new session runs in a new shared process (pids ${PIDS[*]})" "$OUT/fault-heal.log"
poisoned_ended() { grep "shared session process ended" "$OUT/fault-heal.log" | grep -q "pid=${PIDS[0]:-none}"; }
for _ in $(seq 100); do poisoned_ended && break; sleep 0.1; done
poisoned_ended; verdict $? "the poisoned process exited after its clients left" "$OUT/fault-heal.log"
METRICS=$(sed -n 's/.*metrics on //p' "$OUT/fault-heal.stdout" | head -1)
if [ -n "$METRICS" ] && command -v curl >/dev/null; then
  curl -s "$METRICS" | grep -E "hip_worker_(device_resets|sessions_ended_by_fault)_total" | tee "$OUT/fault-heal.metrics"
fi

# The kernel watchdog in shared mode: the shared process running the spinning kernel is ended
# (a context cannot be reset under a running kernel), its client told, a new process serves.
start_worker watchdog --max-kernel-ms 2000
export HIP_REMOTE_WORKER=$ADDR
timeout 60 "$SPIN" spin > "$OUT/spin.log" 2>&1; verdict $? "a kernel past --max-kernel-ms ends with hipErrorLaunchTimeOut ($(grep -o 'TIMEOUT [0-9]*' "$OUT/spin.log") ms)" "$OUT/spin.log"
timeout 60 "$SPIN" serve > "$OUT/serve.log" 2>&1; verdict $? "the next client is served by a new shared process" "$OUT/serve.log"
# Stream waits (a masked GTE: the worker's wait kernel; an unmasked EQ: CUDA's own) held 6 s,
# a kernel behind them: a held wait is no runaway kernel.
timeout 60 "$SPIN" held 6000 > "$OUT/held.log" 2>&1; verdict $? "stream waits held past --max-kernel-ms are not timed out" "$OUT/held.log"
kill -0 "$WPID" 2>/dev/null; verdict $? "the watchdog's worker is still running" "$OUT/watchdog.log"
exit $fail
