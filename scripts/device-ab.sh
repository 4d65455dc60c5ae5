#!/usr/bin/env bash
# A/B benchmark on the GPU machine, in one run (these machines are too noisy to compare runs
# taken apart): the whole device-test.sh with the current pack (unless SKIP_SUITES=1), then
# ROUNDS (default 1) alternating rounds of `hip-remote bench` with a baseline pack (bin/ and
# lib/ of an older commit, built with scripts/pack-device.sh there and copied to
# device-pack-base/) and with the current pack.
#   bash device-pack/device-ab.sh [BASE_PACK]
# Results: $OUT/new (device-test.sh's), $OUT/ab/base-R.json and $OUT/ab/new-R.json.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
BASE=${1:-$PACK/../device-pack-base}
OUT=${OUT:-/tmp/device-out}
BACKEND=${BACKEND:-cuda}

# Starts a worker from pack $1, runs its bench into $2 (bench.json, bench.md), stops it.
bench_with() {
  local pack=$1 out=$2
  mkdir -p "$out"
  LD_LIBRARY_PATH="$pack/lib" "$pack/bin/hip-worker" --listen 127.0.0.1:0 --backend "$BACKEND" > "$out/.worker.stdout" 2> /dev/null &
  local wpid=$!
  for _ in $(seq 100); do grep -q "listening on" "$out/.worker.stdout" 2>/dev/null && break; sleep 0.1; done
  local addr
  addr=$(sed -n 's/.*listening on //p' "$out/.worker.stdout" | head -1)
  HIP_REMOTE_WORKER=$addr LD_LIBRARY_PATH="$pack/lib" timeout 420 "$pack/bin/hip-remote" bench --backend "$BACKEND" \
    --lib "$pack/lib/libamdhip64.so" --json "$out/bench.json" --markdown "$out/bench.md" --plots /tmp/ab-plots-$$ 2> /dev/null \
    || echo "bench with $pack failed"
  kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
  rm -f "$out/.worker.stdout"
}

status=0
if [ "${SKIP_SUITES:-0}" != 1 ]; then
  OUT=$OUT/new bash "$PACK/device-test.sh"
  status=$?
fi
if [ -x "$BASE/bin/hip-remote" ]; then
  mkdir -p "$OUT/ab"
  for r in $(seq "${ROUNDS:-1}"); do
    for side in base new; do
      pack=$PACK; [ "$side" = base ] && pack=$BASE
      bench_with "$pack" "/tmp/ab-$side-$r"
      cp "/tmp/ab-$side-$r/bench.json" "$OUT/ab/$side-$r.json" 2>/dev/null
    done
  done
else
  echo "no baseline pack at $BASE: A/B skipped"
fi
exit $status
