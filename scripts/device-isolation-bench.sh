#!/usr/bin/env bash
# One client in `--isolation process` against `--isolation shared` on a GPU worker
# (docs/BENCHMARKS.md, "Process isolation against shared serving"): sync-call p50, empty-kernel
# launch rate, and 256 MiB copies (pageable and pinned) over TCP (striped as by default) and
# over the same-host transport, ROUNDS rounds, the modes interleaved. From the packed folder
# (scripts/pack-device.sh): bash device-pack/device-isolation-bench.sh
# BACKEND (default cuda) picks the worker's backend; `host` tries the script without a GPU.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BACKEND=${BACKEND:-cuda}
ROUNDS=${ROUNDS:-2}
BENCH="$PACK/bench/session-process-bench"
[ -x "$BENCH" ] || { echo "missing $BENCH: pack with scripts/pack-device.sh"; exit 1; }
# Session processes of a root worker run as `nobody`: scratch and caches under /tmp.
export TMPDIR=/tmp
WORK=$(mktemp -d /tmp/hip-isolation-bench.XXXXXX)
chmod 755 "$WORK"
WORKERS=()
trap 'kill "${WORKERS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
echo "default:bench-token" > "$WORK/tokens"; chmod 600 "$WORK/tokens"
extra=()
[ "$BACKEND" = host ] && extra=(--allow-host-code --host-memory-mib 1024)
declare -A tcp shm
port=17820
for mode in shared process; do
  port=$((port + 1))
  "$PACK/bin/hip-worker" --listen "127.0.0.1:$port" --backend "$BACKEND" --isolation "$mode" --token-file "$WORK/tokens" \
    --rtc-cache-dir "$WORK/rtc-$mode" --shm-socket "$WORK/$mode.sock" "${extra[@]}" > "$WORK/$mode.log" 2>&1 &
  WORKERS+=($!)
  tcp[$mode]="127.0.0.1:$port"; shm[$mode]="shm://$WORK/$mode.sock"
done
for mode in shared process; do
  for _ in $(seq 100); do grep -q "listening on shm://" "$WORK/$mode.log" && break; sleep 0.1; done
  grep -q "listening on shm://" "$WORK/$mode.log" || { echo "the $mode worker did not start:"; cat "$WORK/$mode.log"; exit 1; }
done
export HIP_REMOTE_TOKEN=bench-token
fails=0
for round in $(seq "$ROUNDS"); do
  for transport in tcp shm; do
    for mode in shared process; do
      if [ "$transport" = tcp ]; then addr=${tcp[$mode]}; shm_env=off; else addr=${shm[$mode]}; shm_env=auto; fi
      if line=$(HIP_REMOTE_WORKER=$addr HIP_REMOTE_SHM=$shm_env timeout 300 "$BENCH" 2000 20000 5 2>"$WORK/err"); then
        printf '%s %s %s %s\n' "$round" "$transport" "$mode" "$line"
      else
        printf '%s %s %s FAILED: %s\n' "$round" "$transport" "$mode" "$(tail -2 "$WORK/err" | tr '\n' ' ')"; fails=$((fails + 1))
      fi
    done
  done
done
for mode in shared process; do
  grep -iE "panick|error" "$WORK/$mode.log" | head -5
done
exit "$fails"
