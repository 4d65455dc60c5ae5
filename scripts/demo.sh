#!/usr/bin/env bash
# The main job on a fresh machine: build the worker, the drop-in libamdhip64 and the CLI,
# then run a HIP workload through the real library against a worker on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cc >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc; }
cargo build --release -p hip-worker -p client-capi -p hip-remote
exec ./target/release/hip-remote demo "$@"
