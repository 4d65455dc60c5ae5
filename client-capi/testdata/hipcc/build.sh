#!/usr/bin/env bash
# Regenerates this directory's binaries (committed; the tests do not run hipcc). Needs Debian 12's
# `hipcc` (ROCm 5.2: `apt-get install hipcc`), `objcopy`, `zstd` and python3.
#
#   vadd-gfx90a          hipcc --offload-arch=gfx90a                        (stripped)
#   vadd-gfx90a-gfx1030  hipcc --offload-arch=gfx90a --offload-arch=gfx1030 (stripped)
#   vadd-2arch.bundle    the .hip_fatbin section of vadd-gfx90a-gfx1030 (one plain bundle)
#   vadd-2arch.ccob-v1-zstd, -v2-zlib, -v3-zstd
#                        that bundle as compressed offload bundles ("CCOB"). ROCm 5.2's clang
#                        has no --offload-compress, so they are made here byte for byte as
#                        clang-offload-bundler writes them (header layout in
#                        code-object/src/fatbin.rs),
#                        with the real zstd tool and zlib.
set -euo pipefail
cd "$(dirname "$0")"
hipcc --offload-arch=gfx90a -O2 -o vadd-gfx90a vadd.hip
hipcc --offload-arch=gfx90a --offload-arch=gfx1030 -O2 -o vadd-gfx90a-gfx1030 vadd.hip
strip vadd-gfx90a vadd-gfx90a-gfx1030
objcopy -O binary --only-section=.hip_fatbin vadd-gfx90a-gfx1030 vadd-2arch.bundle
zstd -q -19 -f -o vadd-2arch.zst vadd-2arch.bundle
python3 - <<'PY'
import struct, zlib
plain = open("vadd-2arch.bundle", "rb").read()
zst = open("vadd-2arch.zst", "rb").read()
zl = zlib.compress(plain, 9)
hash_ = 0x0123456789ABCDEF  # clang's truncated MD5; nobody checks it on load
def write(name, version, method, payload):
    if version == 1:
        head = b"CCOB" + struct.pack("<HHIQ", 1, method, len(plain), hash_)
    elif version == 2:
        head = b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(payload), len(plain), hash_)
    else:
        head = b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(payload), len(plain), hash_)
    open(name, "wb").write(head + payload)
write("vadd-2arch.ccob-v1-zstd", 1, 1, zst)
write("vadd-2arch.ccob-v2-zlib", 2, 0, zl)
write("vadd-2arch.ccob-v3-zstd", 3, 1, zst)
PY
rm vadd-2arch.zst
ls -l
