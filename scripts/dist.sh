#!/usr/bin/env bash
# Builds hip-remote for TARGET and writes dist/hip-remote-<version>-<TARGET>.tar.gz (.zip for
# Windows): the layout `hip-remote install` makes (tools/cli/src/install.rs; `--platform`
# macos|windows for a client built for those systems) in a folder of that name.
#   scripts/dist.sh TARGET [--profile dist|release|dev] [--stage DIR [--archive]] [--no-build]
# TARGET: x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, x86_64-pc-windows-gnu,
#         aarch64-apple-darwin, x86_64-apple-darwin.
# --profile: cargo's; `dist` (the default) is release code without debug information, what a
#   user downloads; `dev` is what CI checks (quick to build, large).
# --stage DIR: lay the files out in DIR and make no archive (scripts/windows-test.sh and
#   scripts/macos-link.sh check the layout this way, with the dev profile); with --archive,
#   the archive too (from DIR). scripts/dist-check.sh checks an archive's contents.
# The build machine's own target (x86_64 Linux here) builds into cargo's plain profile
# directory (target/debug for dev), so a tree already built for the tests is reused;
# --no-build takes that directory as it is (CI: `cargo build --workspace --all-targets` made
# every file, with the features the whole workspace unifies, which a build of these packages
# alone would redo).
# How each is built here, on Linux: Windows with MinGW-w64 (apt gcc-mingw-w64-x86-64); macOS
# and aarch64 Linux with cargo-zigbuild, zig being the C compiler (ring, the shims) and the
# linker (a real Mach-O linker for macOS), both from PyPI in .venv-zig. Release builds are
# large: `rm -rf target/<TARGET>/release` when done.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
usage() { echo "usage: scripts/dist.sh TARGET [--profile release|dev] [--stage DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
target=$1; shift
profile=dist stage= archive_too=0 no_build=0
while [ $# -gt 0 ]; do
  case $1 in
    --profile) profile=${2:?}; shift 2 ;;
    --stage) stage=${2:?}; shift 2 ;;
    --archive) archive_too=1; shift ;;
    --no-build) no_build=1; shift ;;
    *) usage ;;
  esac
done
case $profile in
  dev) profile_dir=debug profile_flag=() ;;
  release | dist) profile_dir=$profile profile_flag=(--profile "$profile") ;;
  *) usage ;;
esac

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
apt_install() { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; }

# cargo-zigbuild and zig (PyPI) in a venv of their own, on PATH.
zig_tools() {
  local venv=${HIP_REMOTE_ZIG_VENV:-$ROOT/.venv-zig}
  if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
    python3 -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check ziglang cargo-zigbuild
  fi
  export PATH="$venv/bin:$PATH"
}

client_packages=(-p client-capi -p client-hiprtc -p client-hipblas -p hip-remote-hipcc -p hip-remote)
case $target in
  x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu)
    platform=linux
    # As `hip-remote install` wants them (its BUILD_COMMAND), with the shims.
    packages=("${client_packages[@]}" -p client-amdsmi -p hip-remote-shims -p hip-worker) ;;
  x86_64-pc-windows-gnu) platform=windows packages=("${client_packages[@]}") ;;
  aarch64-apple-darwin | x86_64-apple-darwin) platform=macos packages=("${client_packages[@]}") ;;
  *) echo "dist: unknown target $target (see scripts/dist.sh's header)" >&2; exit 2 ;;
esac
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
host=$(rustc -vV | sed -n 's/^host: //p')
# The host's own target without --target: cargo's plain profile directory, shared with every
# other build of this tree.
target_flag=(--target "$target") target_dir=$target/
[ "$target" = "$host" ] && target_flag=() target_dir=

build=(cargo build)
case $target in
  x86_64-unknown-linux-gnu) command -v cc >/dev/null || apt_install gcc ;;
  x86_64-pc-windows-gnu) command -v x86_64-w64-mingw32-gcc >/dev/null || apt_install gcc-mingw-w64-x86-64 ;;
  *)
    zig_tools
    build=(cargo zigbuild) ;;
esac
[ "$no_build" = 1 ] || "${build[@]}" "${target_flag[@]}" "${profile_flag[@]}" "${packages[@]}"
from=${CARGO_TARGET_DIR:-$ROOT/target}/$target_dir$profile_dir

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
name=hip-remote-$version-$target
keep_stage=1
if [ -z "$stage" ]; then
  keep_stage=0
  stage=$(mktemp -d)/$name
fi
rm -rf "$stage"
mkdir -p "$stage"

# The layout, by `hip-remote install`: this machine's hip-remote lays out any target's files.
if [ "$target" = "$host" ]; then
  installer=("$from/hip-remote")
else
  cargo build -q -p hip-remote
  installer=("${CARGO_TARGET_DIR:-$ROOT/target}/debug/hip-remote")
fi
"${installer[@]}" install --prefix "$stage" --from "$from" --platform "$platform"

if [ "$platform" = windows ]; then
  # Import libraries under AMD's names for AMD's DLL names: cargo's libamdhip64.dll.a names
  # amdhip64.dll, so each is made from the DLL's own export table by MinGW's dlltool.
  mkdir -p "$stage/lib"
  for pair in amdhip64:amdhip64_7 hiprtc:hiprtc0702 hipblas:hipblas; do
    lib=${pair%%:*} dll=${pair##*:}.dll
    def=$(mktemp)
    {
      echo "LIBRARY $dll"
      echo EXPORTS
      x86_64-w64-mingw32-objdump -p "$stage/bin/$dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] //p'
    } >"$def"
    [ "$(wc -l <"$def")" -gt 2 ] || { echo "dist: $dll exports nothing" >&2; exit 1; }
    x86_64-w64-mingw32-dlltool -d "$def" -l "$stage/lib/$lib.lib" -D "$dll"
    rm -f "$def"
  done
fi

if [ "$keep_stage" = 1 ]; then
  echo "dist: $target laid out in $stage"
  [ "$archive_too" = 1 ] || exit 0
fi
mkdir -p dist
parent=$(dirname "$stage")
# Dev builds (what CI checks) are large and thrown away after the check: fastest compression.
level=6
[ "$profile" = dev ] && level=1
if [ "$platform" = windows ]; then
  archive=$ROOT/dist/$name.zip
  rm -f "$archive"
  # The folder in the archive is named as the archive, whatever the stage's name.
  python3 - "$archive" "$stage" "$name" "$level" <<'PY'
import os, sys, zipfile
archive, stage, name, level = sys.argv[1:]
with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=int(level)) as z:
    for folder, _, files in os.walk(stage):
        for f in sorted(files):
            path = os.path.join(folder, f)
            z.write(path, os.path.join(name, os.path.relpath(path, stage)))
PY
else
  archive=$ROOT/dist/$name.tar.gz
  # The folder in the archive is named as the archive, whatever the stage's name.
  tar -C "$parent" -I "gzip -$level" -cf "$archive" --transform "s#^$(basename "$stage")#$name#" "$(basename "$stage")"
fi
[ "$keep_stage" = 1 ] || rm -rf "$parent"
echo "dist: wrote $archive ($(du -h "$archive" | cut -f1))"
