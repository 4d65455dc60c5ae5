#!/usr/bin/env bash
# Client instructions per HIP call, counted by callgrind (deterministic: the machine's load
# does not change them, which it does to wall time). Runs benches/c/call_cost.c against a
# running host-backend worker, once with COUNT calls and once with COUNT/10, and prints
# (instructions(COUNT) - instructions(COUNT/10)) / (0.9 COUNT) per mode: what is left is
# the per-call cost on every thread of the client process (the caller's and the library's).
#
#   scripts/call-instructions.sh LIBDIR WORKER [COUNT]
#
# LIBDIR holds libamdhip64.so.7 and libhiprtc.so.7 (the build to measure, e.g. a release
# target dir with the two links made); WORKER is HIP_REMOTE_WORKER (host:port over TCP, or
# shm:///socket). Readers block instead of polling (HIP_REMOTE_TCP_SPIN_US=0,
# HIP_REMOTE_SYNC_SPIN_US=0): a poll loop's count would follow the wait, not the work. The worker must run the host backend with --allow-host-code (the kernels
# are compiled there by hiprtc). MODES overrides the list of modes.
# Needs valgrind and a C compiler. Callgrind files are left in $CG_DIR (default a temp dir)
# for callgrind_annotate.
set -euo pipefail
LIBDIR=$(cd "$1" && pwd)
WORKER=$2
COUNT=${3:-20000}
MODES=${MODES:-launch launch_args sync h2d d2h}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CG_DIR=${CG_DIR:-$(mktemp -d)}
mkdir -p "$CG_DIR"
EXE="$CG_DIR/call_cost"
cc -std=c11 -O2 -g -I "$ROOT/client-capi/include" -I "$ROOT/tests/c" "$ROOT/benches/c/call_cost.c" -o "$EXE" \
  -L"$LIBDIR" -l:libamdhip64.so.7 -l:libhiprtc.so.7
SHM=off
case $WORKER in shm://*) SHM=auto ;; esac
count() { # mode calls -> instructions in the window
  HIP_REMOTE_WORKER=$WORKER HIP_REMOTE_SHM=$SHM LD_LIBRARY_PATH=$LIBDIR \
    HIP_REMOTE_TCP_SPIN_US=0 HIP_REMOTE_SYNC_SPIN_US=0 \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$CG_DIR/$1-$2.out" \
    "$EXE" "$1" "$2" 2>&1 >/dev/null | awk '/Collected :/ {print $4}'
}
echo "| call | instructions per call |"
echo "|---|---:|"
for mode in $MODES; do
  big=$(count "$mode" "$COUNT")
  small=$(count "$mode" $((COUNT / 10)))
  awk -v m="$mode" -v b="$big" -v s="$small" -v n="$COUNT" 'BEGIN { printf "| %s | %.0f |\n", m, (b - s) / (0.9 * n) }'
done
echo "(callgrind files: $CG_DIR)" >&2
