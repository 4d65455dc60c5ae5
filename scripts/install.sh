#!/usr/bin/env bash
# Installs hip-remote as a ROCm-style layout into DIR (lib/, include/, bin/): builds the release
# libraries and programs (cargo does nothing when they are current), then runs
# `hip-remote install --prefix DIR`. Afterwards ROCM_PATH=DIR ROCM_HOME=DIR
# LD_LIBRARY_PATH=DIR/lib is all a program needs.
#   scripts/install.sh DIR [--from BUILD_DIR]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/install.sh DIR" >&2; exit 2; }
prefix=$1; shift
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
cd "$(dirname "$0")/.."
command -v cc >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc; }
cargo build --profile dist -p client-capi -p client-hiprtc -p client-hipblas -p client-amdsmi -p hip-remote-hipcc -p hip-worker -p hip-remote
target_dir=${CARGO_TARGET_DIR:-target}
exec "$target_dir/dist/hip-remote" install --prefix "$prefix" "$@"
