#!/usr/bin/env bash
# Tenants sharing one GPU (docs/BENCHMARKS.md, "Tenants sharing one GPU"): 8 client processes
# with equal work (`hip-remote tenants`), small (16-block) and GPU-filling kernels, in four
# modes, each measured twice, printed as one table:
#
#   native        8 native CUDA processes (contexts of their own, time-sliced)
#   native-threads  8 threads of one native process sharing one context, a stream each: the
#                 most one context launches with no worker in between (the ceiling of `shared`)
#   shared        one worker, sessions sharing its context   (hip-worker --isolation shared)
#   process       one worker, a session process per client   (hip-worker --isolation process)
#   process+mps   the same under CUDA MPS                    (... --isolation process --mps)
#   shared-no-time  `shared` with device-time accounting off (HIP_WORKER_DEVICE_TIME=off): what
#                 accounting costs
#
# After each worker mode the tenants' device time from /metrics is printed (it must be > 0).
#
# A mode the worker does not offer (no --isolation flag, no MPS) is reported as n/a with the
# reason. On the GPU machine, after scripts/pack-device.sh:  bash device-pack/device-tenants.sh
# Settings: TENANT_CLIENTS (8), TENANT_SECONDS (3 per kernel and round), TENANT_ROUNDS (2),
# TENANT_KERNELS (small,fill); TENANT_BATCHES (launches between synchronizations, "32"; e.g.
# "32 1": a second pass of small kernels with every launch waited for, shown as MODE/b1);
# TENANT_BACKEND=host checks the script without a GPU (host emulation, --allow-host-code; from a
# pack or with TENANT_PACK=target/release-like dir holding bin/ and lib/).
set -uo pipefail
cd "$(dirname "$0")"
PACK=${TENANT_PACK:-$PWD}
BACKEND=${TENANT_BACKEND:-cuda}
EXTRA=()
[ "$BACKEND" = host ] && EXTRA=(--allow-host-code --host-memory-mib 1024)
BIN=$PACK/bin
export LD_LIBRARY_PATH=$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HIP_REMOTE_LIB=$PACK/lib/libamdhip64.so
CLIENTS=${TENANT_CLIENTS:-8}
SECONDS_EACH=${TENANT_SECONDS:-3}
ROUNDS=${TENANT_ROUNDS:-2}
KERNELS=${TENANT_KERNELS:-small,fill}
BATCHES=${TENANT_BATCHES:-32}
BATCH=32
PORT=${TENANT_PORT:-18640}
WORK=$(mktemp -d)
RESULTS=$WORK/results
trap 'stop_worker; rm -rf "$WORK"' EXIT
: > "$RESULTS"
WORKER_PID=

stop_worker() {
  if [ -n "$WORKER_PID" ]; then
    kill -TERM "$WORKER_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$WORKER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$WORKER_PID" 2>/dev/null
    wait "$WORKER_PID" 2>/dev/null
    WORKER_PID=
  fi
}

# start_worker LOG ARGS...: a cuda worker on 127.0.0.1:$PORT; returns 1 (log kept) if it
# does not say it listens.
start_worker() {
  local log=$1; shift
  PORT=$((PORT + 1))
  env ${WORKER_ENV:-} "$BIN/hip-worker" --backend "$BACKEND" --listen "127.0.0.1:$PORT" --shm-socket "$WORK/shm-$PORT.sock" \
    --metrics "127.0.0.1:$((PORT + 1000))" "${EXTRA[@]}" "$@" >"$log" 2>&1 &
  WORKER_PID=$!
  for _ in $(seq 100); do
    grep -q "hip-worker listening on 127.0.0.1" "$log" 2>/dev/null && return 0
    kill -0 "$WORKER_PID" 2>/dev/null || break
    sleep 0.1
  done
  WORKER_PID=
  return 1
}

na() { echo "TENANTS mode=$1 kernel=- clients=$CLIENTS kernels_per_s=n/a spread=n/a counts=- why=$2" >> "$RESULTS"; }

run_mode() {
  local mode=$1 round=$2; shift 2
  local kernels=$KERNELS
  # Passes other than the first batch size measure small kernels only, labelled MODE/bN.
  if [ "$BATCH" != "${BATCHES%% *}" ]; then mode=$mode/b$BATCH; kernels=small; fi
  local out=$WORK/${mode//\//_}-$round.out
  if [ "${mode%%/*}" = native ] || [ "${mode%%/*}" = native-threads ]; then
    "$BIN/hip-remote" tenants --side "${mode%%/*}" --backend "$BACKEND" --clients "$CLIENTS" --seconds "$SECONDS_EACH" --kernel "$kernels" --batch "$BATCH" --label "$mode" >"$out" 2>&1 \
      || { na "$mode" "$(tail -1 "$out")"; return; }
  else
    local log=$WORK/${mode//\//_}-$round.log
    if ! start_worker "$log" "$@"; then
      na "$mode" "$(grep -m1 -E 'hip-worker: |error' "$log" || tail -1 "$log")"
      return
    fi
    "$BIN/hip-remote" tenants --worker "127.0.0.1:$PORT" --clients "$CLIENTS" --seconds "$SECONDS_EACH" --kernel "$kernels" --batch "$BATCH" --label "$mode" >"$out" 2>&1 \
      || na "$mode" "$(tail -1 "$out")"
    local seconds
    seconds=$("$BIN/hip-remote" smi --json --worker "127.0.0.1:$((PORT + 1000))" 2>/dev/null | tr -d ' \n' | grep -o '"device_seconds":[0-9.e+-]*' | awk -F: '{ s += $2 } END { if (NR) print s }')
    echo "DEVICE_TIME mode=$mode round=$round tenant_device_seconds=${seconds:-none}" >> "$WORK/device-time"
    stop_worker
  fi
  grep '^TENANTS ' "$out" >> "$RESULTS"
}

isolation=no
"$BIN/hip-worker" --help 2>/dev/null | grep -q -- '--isolation' && isolation=yes
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "clients $CLIENTS, ${SECONDS_EACH} s per kernel, $ROUNDS rounds; worker --isolation: $isolation"
started=$(date +%s)
for BATCH in $BATCHES; do
for round in $(seq "$ROUNDS"); do
  run_mode native "$round"
  run_mode native-threads "$round"
  if [ $isolation = yes ]; then
    run_mode shared "$round" --isolation shared
    WORKER_ENV=HIP_WORKER_DEVICE_TIME=off run_mode shared-no-time "$round" --isolation shared
    run_mode process "$round" --isolation process
    run_mode process+mps "$round" --isolation process --mps
  else
    # Today's worker: sessions share its context.
    run_mode shared "$round"
    WORKER_ENV=HIP_WORKER_DEVICE_TIME=off run_mode shared-no-time "$round"
    na process "this hip-worker has no --isolation flag"
    na process+mps "this hip-worker has no --isolation flag"
  fi
done
done
echo
printf '%-12s %-6s %7s %14s %16s  %s\n' mode kernel clients kernels/s fastest/slowest "per client"
sort -s -k2,2 -k3,3 "$RESULTS" | while read -r _ mode kernel clients rate spread counts why; do
  printf '%-12s %-6s %7s %14s %16s  %s %s\n' "${mode#mode=}" "${kernel#kernel=}" "${clients#clients=}" "${rate#kernels_per_s=}" \
    "${spread#spread=}" "${counts#counts=}" "${why:+(${why#why=})}"
done
echo
echo "device time the tenants were charged (sum over tenants, seconds; shared-no-time: none expected):"
cat "$WORK/device-time" 2>/dev/null
echo "($(($(date +%s) - started)) s)"
