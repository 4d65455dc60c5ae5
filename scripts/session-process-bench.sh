#!/usr/bin/env bash
# Relay against handover (docs/BENCHMARKS.md, "Session processes: relay against handover"):
# one client's sync-call p50, launch rate and 256 MiB copies against a host-backend worker
# whose sessions run in its own process ("shared"), in session processes handed their
# connections ("handed over", the default with --allow-host-code), and in session processes
# whose connections the worker relays (as for TLS and RDMA; HIP_WORKER_RELAY_SESSIONS=1), over
# TCP on loopback and over the same-host transport. ROUNDS runs of each, interleaved.
#
#   cargo build --release -p hip-worker -p client-capi && scripts/session-process-bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${TARGET_DIR:-$root/target/release}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
workers=()
trap 'kill "${workers[@]}" 2>/dev/null || true; wait; rm -rf "$work"' EXIT
bench=${BENCH_EXE:-$work/bench}
if [ -z "${BENCH_EXE:-}" ]; then
  cc -std=c11 -O2 -I "$root/client-capi/include" "$root/scripts/session-process-bench.c" -o "$bench" \
    -L"$target" -lhiprtc -lamdhip64 -Wl,-rpath,"$target"
fi
echo "default:bench-token" > "$work/tokens"
chmod 600 "$work/tokens"
port=17710
declare -A tcp shm
for mode in shared handed relayed; do
  port=$((port + 1))
  args=(--listen "127.0.0.1:$port" --backend host --host-memory-mib 1024 --token-file "$work/tokens" --shm-socket "$work/$mode.sock")
  [ "$mode" = shared ] || args+=(--allow-host-code)
  env_relay=0
  [ "$mode" = relayed ] && env_relay=1
  HIP_WORKER_RELAY_SESSIONS=$env_relay "$target/hip-worker" "${args[@]}" > "$work/$mode.log" 2>&1 &
  workers+=($!)
  tcp[$mode]="127.0.0.1:$port"
  shm[$mode]="shm://$work/$mode.sock"
done
sleep 1
for mode in shared handed relayed; do
  grep -q "hip-worker listening on shm://" "$work/$mode.log" || { echo "the $mode worker did not start:" >&2; cat "$work/$mode.log" >&2; exit 1; }
done
export HIP_REMOTE_TOKEN=bench-token HIP_REMOTE_STRIPES=0
for round in $(seq "$rounds"); do
  for transport in tcp shm; do
    for mode in shared handed relayed; do
      if [ "$transport" = tcp ]; then addr=${tcp[$mode]}; shm_env=off; else addr=${shm[$mode]}; shm_env=auto; fi
      printf '%s %s %s %s\n' "$round" "$transport" "$mode" "$(HIP_REMOTE_WORKER=$addr HIP_REMOTE_SHM=$shm_env "$bench")"
    done
  done
done
