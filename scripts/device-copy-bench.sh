#!/usr/bin/env bash
# The copy figures of a fast link on a GPU machine (docs/BENCHMARKS.md, "Copies on a fast
# link"): `hip-remote bench --sections link` twice (native CUDA and the client library over
# TCP, striped TCP and the same-host transport, in one process each run), then once more with
# the in-process profiler (`--profile`), whose text top lists show what limits each figure.
# Usage: scripts/device-copy-bench.sh [OUT_DIR]   (needs an NVIDIA GPU). From the pack of
# scripts/pack-device.sh (the GPU machine has no Rust toolchain): bash device-pack/device-copy-bench.sh OUT_DIR.
set -euo pipefail
out=$(realpath -m "${1:-copy-bench}")
mkdir -p "$out"
cd "$(dirname "$0")"
if [ -x bin/hip-remote ] && [ -f lib/libamdhip64.so ]; then
  bin=$PWD/bin/hip-remote lib=$PWD/lib/libamdhip64.so
  export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  cd ..
  export CARGO_INCREMENTAL=0
  cargo build --release -p client-capi -p hip-remote --features hip-remote/profiling
  bin=$PWD/target/release/hip-remote lib=$PWD/target/release/libamdhip64.so
fi
unset HIP_REMOTE_WORKER
for run in 1 2; do
  "$bin" bench --backend "${BACKEND:-cuda}" --lib "$lib" --sections link --json "$out/link-$run.json" --markdown "$out/link-$run.md" 2>> "$out/bench.log"
done
# Profiles: the text top lists only (the flamegraphs stay behind: at most 8 small files
# come back from the GPU machine).
"$bin" bench --backend "${BACKEND:-cuda}" --lib "$lib" --sections link --profile "$out/profile" --markdown "$out/link-profiled.md" 2>> "$out/bench.log" || true
if [ -d "$out/profile" ]; then
  find "$out/profile" -name '*.svg' -delete
  tar -czf "$out/profile-text.tar.gz" -C "$out" profile && rm -rf "$out/profile"
fi
grep -h '^| ' "$out/link-1.md" | head -60
