#!/usr/bin/env bash
# Before/after on the GPU machine, in one run: `hip-remote bench` of an earlier build
# (device-pack/perf-before/{hip-remote,libamdhip64.so}, packed by hand from the commit named in
# device-pack/perf-before/COMMIT) alternated with the current pack's, ROUNDS times each, on the
# sections that exercise the client's hot paths. Reports go to $OUT as before-N.md / after-N.md.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}; mkdir -p "$OUT"
ROUNDS=${ROUNDS:-2}
SECTIONS=${SECTIONS:-latency,async,kernels,copies}
BACKEND=${BACKEND:-cuda}
echo "before: $(cat "$PACK/perf-before/COMMIT" 2>/dev/null || echo unknown); after: $("$PACK/bin/hip-remote" --version)"
for round in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    if [ $side = before ]; then bin="$PACK/perf-before/hip-remote" lib="$PACK/perf-before/libamdhip64.so"
    else bin="$PACK/bin/hip-remote" lib="$PACK/lib/libamdhip64.so"; fi
    echo "== round $round: $side"
    timeout 240 "$bin" bench --backend "$BACKEND" --lib "$lib" --sections "$SECTIONS" \
      --markdown "$OUT/$side-$round.md" > /dev/null 2> "$OUT/$side-$round.log" \
      || { echo "FAIL $side round $round"; tail -5 "$OUT/$side-$round.log"; }
    grep -E '^\|' "$OUT/$side-$round.md" 2>/dev/null | head -40
  done
done
rm -f "$OUT"/*.log
