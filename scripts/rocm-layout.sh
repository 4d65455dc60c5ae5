#!/usr/bin/env bash
# rocm-layout.sh BUILD_DIR PREFIX: lays hip-remote out under PREFIX as a ROCm installation
# from the binaries in BUILD_DIR (target/debug or target/release). Uses `hip-remote install`
# where the tree has it; otherwise writes the core of the same layout itself: lib/ with
# libamdhip64.so(.7) and libhiprtc.so(.7), include/ (hip/, hip_remote/), bin/ with hipcc,
# hipconfig, hip-worker and hip-remote.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$1 PREFIX=$2
if "$BUILD/hip-remote" install --help >/dev/null 2>&1; then
  exec "$BUILD/hip-remote" install --prefix "$PREFIX"
fi
mkdir -p "$PREFIX/lib" "$PREFIX/bin"
for lib in amdhip64 hiprtc; do
  cp "$BUILD/lib$lib.so" "$PREFIX/lib/"; ln -sf "lib$lib.so" "$PREFIX/lib/lib$lib.so.7"
done
rm -rf "$PREFIX/include"; cp -r client-capi/include "$PREFIX/include"
for exe in hipcc hipconfig hip-worker hip-remote; do
  [ -e "$BUILD/$exe" ] && cp "$BUILD/$exe" "$PREFIX/bin/"
done
echo "rocm-layout: no \`hip-remote install\` in this tree: wrote $PREFIX's core (lib, include, bin) by hand"
