#!/usr/bin/env bash
# The WAN benchmark on a GPU machine (docs/BENCHMARKS.md, "Over a WAN"): an embedded cuda
# worker, the client library through `hip-remote proxy` at RTT 0, 2, 20 and 100 ms with 1 GiB
# of weights; then the content store and compression rows at 20 ms and 100 Mbit/s.
# Usage: scripts/device-wan-bench.sh [OUT_DIR]   (release build; needs an NVIDIA GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/wan-bench}
mkdir -p "$out"
export CARGO_INCREMENTAL=0
cargo build --release -p client-capi -p hip-remote
bin=target/release/hip-remote
"$bin" wan-bench --backend cuda --rtt 0,2,20,100 --weights-mib 1024 --steps 10 --train-steps 5 \
  --json "$out/wan.json" | tee "$out/wan.md"
for kind in "" --compressible-weights; do
  "$bin" wan-bench --backend cuda --rtt 20 --bandwidth 100mbit --weights-mib 256 --steps 3 --train-steps 3 \
    --content-store off $kind | tee -a "$out/wan-compression.md"
done
"$bin" wan-bench --backend cuda --rtt 20 --bandwidth 100mbit --weights-mib 256 --steps 3 --train-steps 3 \
  | tee "$out/wan-content-store.md"
