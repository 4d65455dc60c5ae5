#!/usr/bin/env bash
# The WAN benchmark on a GPU machine (docs/BENCHMARKS.md, "Over a WAN"): an embedded cuda
# worker, the client library through `hip-remote proxy` at RTT 0, 2, 20 and 100 ms with 1 GiB
# of weights; then the content store and compression rows at 20 ms and 100 Mbit/s.
# Usage: scripts/device-wan-bench.sh [OUT_DIR]   (needs an NVIDIA GPU). From a checkout it
# builds release binaries; from the pack scripts/pack-device.sh writes (the GPU machine has no
# Rust toolchain) it uses the packed ones: bash device-pack/device-wan-bench.sh OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")"
if [ -x bin/hip-remote ] && [ -f lib/libamdhip64.so ]; then
  bin=$PWD/bin/hip-remote
  export HIP_REMOTE_LIB=$PWD/lib/libamdhip64.so LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  cd ..
  export CARGO_INCREMENTAL=0
  cargo build --release -p client-capi -p hip-remote
  bin=$PWD/target/release/hip-remote
fi
out=${1:-wan-bench}
mkdir -p "$out"
"$bin" wan-bench --backend cuda --rtt 0,2,20,100 --weights-mib 1024 --steps 10 --train-steps 5 \
  --json "$out/wan.json" | tee "$out/wan.md"
for kind in "" --compressible-weights; do
  "$bin" wan-bench --backend cuda --rtt 20 --bandwidth 100mbit --weights-mib 256 --steps 3 --train-steps 3 \
    --content-store off $kind | tee -a "$out/wan-compression.md"
done
"$bin" wan-bench --backend cuda --rtt 20 --bandwidth 100mbit --weights-mib 256 --steps 3 --train-steps 3 \
  | tee "$out/wan-content-store.md"
