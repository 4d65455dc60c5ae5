#!/usr/bin/env bash
# TLS's cost on the GPU machine, in one run (runs taken apart are too noisy to compare):
# ROUNDS (default 2) alternating rounds of `hip-remote bench` with its embedded worker plain
# and with `--tls` (a throwaway CA; the client library trusts it through HIP_REMOTE_TLS_CA).
#   bash device-pack/device-tls.sh [extra bench options]
# Results: $OUT/tls/{plain,tls}-R.{json,md}.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}
BACKEND=${BACKEND:-cuda}
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/tls"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/tls/machine.txt" 2>&1
status=0
for r in $(seq "${ROUNDS:-2}"); do
  for side in plain tls; do
    flag=(); [ "$side" = tls ] && flag=(--tls)
    env -u HIP_REMOTE_WORKER timeout 420 "$PACK/bin/hip-remote" bench --backend "$BACKEND" --lib "$PACK/lib/libamdhip64.so" \
      --no-processes "${flag[@]}" "$@" --json "$OUT/tls/$side-$r.json" --markdown "$OUT/tls/$side-$r.md" \
      > /dev/null 2> "$OUT/tls/$side-$r.err" || { echo "bench $side round $r failed (see $side-$r.err)"; status=1; }
  done
done
exit $status
