#!/usr/bin/env bash
# Regenerates this directory's code objects (committed, so the tests run without hipcc). Needs
# Debian 12's `hipcc` (ROCm 5.2: `apt-get install hipcc`).
#
#   mixed-gfx90a-v4.co   mixed.hip for gfx90a, code object v4 (ROCm 5.2's default)
#   mixed-gfx1030-v5.co  mixed.hip for gfx1030, code object v5 (newer ROCm's default)
#
# Bare code objects (--no-gpu-bundle-output), as `hipModuleLoadData` receives them;
# tests/hipcc_metadata.rs also builds bundles with hipcc itself when hipcc is installed.
set -euo pipefail
cd "$(dirname "$0")"
build() { hipcc --offload-arch="$1" -mcode-object-version="$2" -O2 --cuda-device-only --no-gpu-bundle-output -c -o "$3" mixed.hip; }
build gfx90a 4 mixed-gfx90a-v4.co
build gfx1030 5 mixed-gfx1030-v5.co
ls -l ./*.co
