#!/usr/bin/env bash
# rdma-test.sh — hip-remote over real verbs (Soft-RoCE in a QEMU guest), end to end.
#
#   scripts/rdma-test.sh          build with --features rdma, boot one VM, run tests/rdma/in-vm.sh
#
# Steps (each timed): build the worker, the drop-in library and transport-rdma's verbs test
# with the `rdma` feature (into $RDMA_TARGET_DIR, default target/rdma, so the ordinary
# target/debug artifacts stay TCP-only); compile the C clients; boot the guest once
# (scripts/rdma-vm/run-in-rxe-vm.sh) and run everything inside.
#
# RDMA_TEST_PROGRAMS="device_query errors" picks the tests/c conformance programs run over
# rdma:// (default: device_query memory streams_events errors threads; memory alone takes
# ~2 min under TCG, mostly its own pattern checks — it takes 50 s over TCP in the same VM).
#
# Skips (exit 77, with a "SKIP: " line; scripts/test.sh counts it as skipped) only where the
# VM cannot run: not root, the VM harness missing, build packages not installable, or the
# harness cannot prepare the VM (qemu, kernel image; `run-in-rxe-vm.sh --prepare`).
# RDMA_TEST_REQUIRE=1 turns a skip into a failure. Needs to build: pkg-config libibverbs-dev librdmacm-dev libclang-dev (installed
# here with apt-get when missing).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
T0=$EPOCHREALTIME
step_t=$T0
since() { awk -v a="$EPOCHREALTIME" -v b="$1" 'BEGIN{printf "%.1f", a-b}'; }
step() { echo "[rdma-test $(since "$T0")s] $* (previous step $(since "$step_t") s)"; step_t=$EPOCHREALTIME; }
skip() {
  echo "rdma-test: SKIP: $*"
  [[ ${RDMA_TEST_REQUIRE:-0} == 1 ]] && exit 1
  exit 77
}
HARNESS=scripts/rdma-vm/run-in-rxe-vm.sh

[[ -f $HARNESS ]] || skip "no VM harness $HARNESS"
[[ $(id -u) == 0 ]] || skip "the RDMA VM needs root (apt-get, 9p export of /)"
if ! command -v qemu-system-x86_64 >/dev/null && ! command -v apt-get >/dev/null; then
  skip "no qemu-system-x86_64 and no apt-get to install it"
fi
missing=()
for p in pkg-config libibverbs-dev librdmacm-dev libclang-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  command -v apt-get >/dev/null || skip "missing build packages ${missing[*]} and no apt-get"
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    skip "could not install the build packages ${missing[*]}"
fi
step "preparing the VM (qemu, kernel, initramfs)"
bash "$HARNESS" --prepare || skip "the VM harness could not prepare the VM (qemu or kernel image unavailable; see above)"

export CARGO_TARGET_DIR=${RDMA_TARGET_DIR:-$ROOT/target/rdma}
step "building hip-worker + libamdhip64 with --features rdma into $CARGO_TARGET_DIR"
cargo build -q -p hip-worker -p client-capi -p client-hiprtc --features hip-worker/rdma,client-capi/rdma
VERBS_TEST=$(cargo test -q -p transport-rdma --features verbs --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "verbs" and m.get("executable"): print(m["executable"])')
[[ -x $VERBS_TEST ]] || { echo "rdma-test: no verbs test binary"; exit 1; }

step "compiling C clients"
BIN=$CARGO_TARGET_DIR/rdma-test
rm -rf "$BIN"; mkdir -p "$BIN/lib"
ln -s "$CARGO_TARGET_DIR/debug/libamdhip64.so" "$BIN/lib/libamdhip64.so.7"
ln -s "$CARGO_TARGET_DIR/debug/libamdhip64.so" "$BIN/lib/libamdhip64.so"
ln -s "$CARGO_TARGET_DIR/debug/libhiprtc.so" "$BIN/lib/libhiprtc.so.7"
ln -s "$CARGO_TARGET_DIR/debug/libhiprtc.so" "$BIN/lib/libhiprtc.so"
PROGRAMS=
cc_one() { # src
  local name; name=$(basename "$1" .c)
  ${CC:-cc} -std=c11 -Wall -Werror -g -O1 -I client-capi/include -I tests/c "$1" -o "$BIN/$name" \
    -L"$BIN/lib" -lhiprtc -lamdhip64 -Wl,-rpath,"$BIN/lib" -lpthread
}
cc_one tests/rdma/rdma_roundtrip.c
for p in ${RDMA_TEST_PROGRAMS:-device_query memory streams_events errors threads kernels} meminfo kill_midcopy; do
  if [[ -f tests/c/$p.c ]]; then
    cc_one "tests/c/$p.c"
    [[ $p == meminfo || $p == kill_midcopy ]] || PROGRAMS+=" $p"
  else
    echo "rdma-test: tests/c/$p.c not present, not run"
  fi
done

step "booting the rxe VM and running tests/rdma/in-vm.sh"
export RT_BIN=$BIN RT_WORKER=$CARGO_TARGET_DIR/debug/hip-worker RT_VERBS_TEST=$VERBS_TEST RT_PROGRAMS=$PROGRAMS
set +e
# MTU 4200 on the veth gives rxe an IB MTU of 4096 (twice the throughput of 1024 under TCG).
RXE_VM_MTU=${RXE_VM_MTU:-4200} RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1800} bash "$HARNESS" --rw "$ROOT" -- tests/rdma/in-vm.sh
rc=$?
set -e
[[ $rc == 125 ]] && echo "rdma-test: the VM failed to boot (see the console above)"
step "done (rc $rc)"
exit $rc
