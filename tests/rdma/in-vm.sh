#!/usr/bin/env bash
# Runs inside the rxe VM (started by scripts/rdma-test.sh): real verbs on Soft-RoCE.
#   1. transport-rdma's verbs tests (listener + client in one process);
#   2. a host-backend hip-worker with --listen-rdma, and C clients over rdma://:
#      rdma_roundtrip (HELLO, malloc, H2D/D2H at several sizes incl. > 4 MiB, async, free)
#      and the conformance programs of tests/c that exist;
#   3. a client SIGKILLed in the middle of a 256 MiB upload: the worker survives, frees the
#      session (its memory is free again for the next client) and keeps serving.
# Environment (from the caller): RT_BIN (C programs), RT_WORKER, RT_VERBS_TEST, RT_PROGRAMS.
# Every exec costs ~0.2 s under TCG, so waits use bash builtins.
set -u
A=${RXE_VM_ADDR:?not inside the rxe VM}
LOG=$RT_BIN/worker.log
pass=0 fail=0
declare -a failed=()
now() { echo "$EPOCHREALTIME"; }
dt() { awk -v a="$(now)" -v b="$1" 'BEGIN{printf "%.1f", a-b}'; }
[[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
nap() { read -r -t "$1" _ <> <(:) 2>/dev/null || true; }
result() { # name rc t0
  if [[ $2 == 0 ]]; then pass=$((pass+1)); echo "ok   $1 ($(dt "$3") s)";
  else fail=$((fail+1)); failed+=("$1"); echo "FAIL $1 (rc $2, $(dt "$3") s)"; fi
}

echo "== 1. transport-rdma verbs tests"
t=$(now)
"$RT_VERBS_TEST" --test-threads 1 --skip registration_cost 2>&1 | sed 's/^/   /'
result verbs-tests "${PIPESTATUS[0]}" "$t"
# The one-sided threshold: ibv_reg_mr + ibv_dereg_mr against memcpy (docs/RDMA.md).
t=$(now)
"$RT_VERBS_TEST" --test-threads 1 --nocapture registration_cost 2>&1 | grep -E "^reg-cost|test result" | sed 's/^/   /'
result registration-cost "${PIPESTATUS[0]}" "$t"

echo "== 2. hip-worker --listen-rdma $A:0 (host backend, one-sided bulk on for worker and clients)"
t=$(now)
# One-sided bulk (H2D: the worker RDMA-READs; D2H: it RDMA-WRITEs into the client's landing;
# >= 2 MiB, or any size >= 64 KiB from hipHostMalloc memory) for the worker and every client
# below (the default; RT_ONE_SIDED=0 runs it all two-sided); rdma_roundtrip runs once more
# with it off on the client side (two-sided fallback).
export HIP_REMOTE_RDMA_ONE_SIDED=${RT_ONE_SIDED:-1}
# The RDMA listener is not on loopback, so the worker needs a token (or --insecure): the
# clients below authenticate with it by challenge-response, over RDMA too.
export HIP_REMOTE_TOKEN="rdma-vm-$RANDOM$RANDOM"
HIP_REMOTE_LOG=info,hip_worker=debug,transport_rdma=debug "$RT_WORKER" --backend host --allow-host-code --host-memory-mib 1024 \
  --listen 127.0.0.1:0 --listen-rdma "$A:0" > "$RT_BIN/worker.out" 2> "$LOG" &
WPID=$!
RADDR=
for ((i = 0; i < 300 && ${#RADDR} == 0; i++)); do
  [[ -f $RT_BIN/worker.out ]] &&
    while read -r line; do [[ $line == "hip-worker listening on rdma://"* ]] && RADDR=${line#hip-worker listening on }; done < "$RT_BIN/worker.out"
  [[ -n $RADDR ]] || nap 0.1
done
if [[ -z $RADDR ]]; then echo "worker did not start:"; cat "$LOG"; exit 1; fi
export HIP_REMOTE_WORKER=$RADDR HIP_REMOTE_DEBUG=1
result "worker start ($RADDR)" 0 "$t"

run() { # name args...
  local name=$1; shift; local t; t=$(now)
  timeout "${RT_TIMEOUT:-600}" "$RT_BIN/$name" "$@" > "$RT_BIN/$name.out" 2>&1; local rc=$?
  if [[ $rc != 0 ]] || ! grep -q "PASS $name" "$RT_BIN/$name.out"; then
    sed 's/^/   | /' "$RT_BIN/$name.out" | tail -25; rc=${rc/#0/1}
  else
    grep -E "^(size|connect|200 )" "$RT_BIN/$name.out" | sed 's/^/   /'
  fi
  result "$name over rdma" "$rc" "$t"
}
for p in rdma_roundtrip $RT_PROGRAMS; do
  [[ -x $RT_BIN/$p ]] && run "$p"
done
if [[ $HIP_REMOTE_RDMA_ONE_SIDED == 1 ]]; then
  t=$(now); ok=1
  grep -q "one-sided bulk in use" "$LOG" || { echo "   no 'one-sided bulk in use' in the worker log"; ok=0; }
  grep -q "landings in use" "$LOG" || { echo "   no 'landings in use' in the worker log (D2H replies RDMA-WRITten)"; ok=0; }
  HIP_REMOTE_RDMA_ONE_SIDED=0 timeout 240 "$RT_BIN/rdma_roundtrip" > "$RT_BIN/two-sided.out" 2>&1 || { tail "$RT_BIN/two-sided.out"; ok=0; }
  result "one-sided used by the worker; a two-sided client still served (fallback)" "$((1 - ok))" "$t"
fi
if [[ $HIP_REMOTE_RDMA_ONE_SIDED == 1 ]]; then
  # hipHostMalloc buffers are registered once (client cache) and reused by every copy;
  # rdma_roundtrip's pinned step allocates 2 buffers in each of 2 rounds: 4 registrations
  # (a stale one reused after hipHostFree would show fewer and corrupt the second round).
  t=$(now); ok=1
  HIP_REMOTE_LOG=transport_rdma=debug timeout 240 "$RT_BIN/rdma_roundtrip" > "$RT_BIN/cache.out" 2>&1 || { tail "$RT_BIN/cache.out"; ok=0; }
  regs=$(grep -c "registration cache: registering remembered memory" "$RT_BIN/cache.out")
  echo "   client registration-cache registrations: $regs"
  [[ $regs == 4 ]] || ok=0
  # landings off on the client: the worker must send D2H replies as READ descriptors.
  HIP_REMOTE_RDMA_LANDINGS=0 timeout 240 "$RT_BIN/rdma_roundtrip" > "$RT_BIN/no-landings.out" 2>&1 || { tail "$RT_BIN/no-landings.out"; ok=0; }
  result "registration cache for pinned memory; client READs when landings are off" "$((1 - ok))" "$t"
fi

# RDMA connections authenticate as TCP ones do (HELLO, then the HMAC answer to WELCOME's
# challenge): a wrong token is refused with a reason, logged at WARN, and others are served.
t=$(now); ok=1
HIP_REMOTE_TOKEN=not-the-token timeout 120 "$RT_BIN/device_query" > "$RT_BIN/wrong-token.out" 2>&1 && { echo "   a wrong token was accepted over RDMA"; ok=0; }
grep -qi "authenticat" "$RT_BIN/wrong-token.out" || { echo "   the refusal does not say why:"; tail -5 "$RT_BIN/wrong-token.out"; ok=0; }
grep -q "login refused" "$LOG" || { echo "   no 'login refused' in the worker log"; ok=0; }
timeout 240 "$RT_BIN/rdma_roundtrip" > "$RT_BIN/after-refusal.out" 2>&1 || { tail "$RT_BIN/after-refusal.out"; ok=0; }
result "RDMA: a wrong token is refused (challenge-response), others still served" "$((1 - ok))" "$t"

# A client pointed at the TCP listener with HIP_REMOTE_PREFER_RDMA=1 learns the RDMA
# listener in WELCOME and moves there (a new RDMA session; the TCP one says GOODBYE).
t=$(now); ok=1
TADDR=
while read -r line; do [[ $line == "hip-worker listening on "[0-9]* ]] && TADDR=${line#hip-worker listening on }; done < "$RT_BIN/worker.out"
before=$(grep -c "RDMA connection ended" "$LOG")
HIP_REMOTE_WORKER=$TADDR HIP_REMOTE_PREFER_RDMA=1 timeout 240 "$RT_BIN/device_query" > "$RT_BIN/prefer.out" 2>&1 || { tail "$RT_BIN/prefer.out"; ok=0; }
grep -q "staying on TCP" "$RT_BIN/prefer.out" && { grep "staying on TCP" "$RT_BIN/prefer.out"; ok=0; }
for ((i = 0; i < 50; i++)); do (( $(grep -c "RDMA connection ended" "$LOG") > before )) && break; nap 0.1; done
(( $(grep -c "RDMA connection ended" "$LOG") > before )) || { echo "   no RDMA session for the TCP client"; ok=0; }
result "TCP client moved to the advertised RDMA listener (HIP_REMOTE_PREFER_RDMA=1)" "$((1 - ok))" "$t"

echo "== 3. client killed mid-transfer"
t=$(now)
ok=1
"$RT_BIN/meminfo" > "$RT_BIN/mem-before.out" 2>&1 || ok=0
read -r _ FREE_BEFORE _ < "$RT_BIN/mem-before.out"
"$RT_BIN/kill_midcopy" > "$RT_BIN/victim.out" 2>&1 &
VPID=$!
for ((i = 0; i < 600; i++)); do grep -q READY "$RT_BIN/victim.out" 2>/dev/null && break; nap 0.1; done
grep -q READY "$RT_BIN/victim.out" || { echo "   victim never got READY"; cat "$RT_BIN/victim.out"; ok=0; }
nap 1.5   # well inside the first 256 MiB upload (~10 s on rxe under TCG)
kill -9 "$VPID"; wait "$VPID" 2>/dev/null
grep -q "NOT KILLED\|COPIED" "$RT_BIN/victim.out" && { echo "   the victim finished a copy before it was killed"; ok=0; }
tk=$(now)
"$RT_BIN/meminfo" wait "${FREE_BEFORE:-0}" 30 > "$RT_BIN/mem-after.out" 2>&1 || { echo "   memory not reclaimed:"; cat "$RT_BIN/mem-after.out"; ok=0; }
echo "   memory back after $(dt "$tk") s: $(cat "$RT_BIN/mem-after.out")"
kill -0 "$WPID" 2>/dev/null || { echo "   the worker died"; ok=0; }
grep -q "session freed" "$LOG" || { echo "   no 'session freed' in the worker log"; ok=0; }
grep "RDMA connection ended" "$LOG" | tail -1 | sed 's/^/   log: /'
"$RT_BIN/rdma_roundtrip" > "$RT_BIN/after-kill.out" 2>&1 || { echo "   the worker does not serve after the kill"; tail "$RT_BIN/after-kill.out"; ok=0; }
result "kill mid-transfer: worker survives, session freed" "$((1 - ok))" "$t"

echo "== 4. worker shutdown"
t=$(now)
kill -TERM "$WPID"; wait "$WPID"; rc=$?
result "worker exits cleanly on SIGTERM" "$rc" "$t"
if ((fail)); then echo "--- worker log (tail)"; tail -40 "$LOG"; fi
echo "rdma: $pass passed, $fail failed"
((fail == 0))
