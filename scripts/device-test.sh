#!/usr/bin/env bash
# Runs on the GPU machine from the packed folder (see scripts/pack-device.sh): starts a
# `--backend cuda` worker on loopback, runs the C conformance programs and the end-to-end
# benchmark against it, and writes logs and results to $OUT (default /tmp/device-out).
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; uname -a; ldd --version | head -1; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# GPUDirect RDMA readiness: a cuda allocation exported as the dmabuf the RDMA path registers.
"$PACK/bin/hip-worker" --probe-dmabuf > "$OUT/dmabuf.txt" 2>&1; cat "$OUT/dmabuf.txt"

# start_worker TAG: a worker on loopback logging to $OUT/TAG.stdout and $OUT/TAG.log; sets
# ADDR and WPID (every worker is stopped on exit).
WORKERS=()
trap 'for w in "${WORKERS[@]}"; do kill "$w" 2>/dev/null; done' EXIT
start_worker() {
  local tag=$1
  # Line-buffered C stdio: a runtime that prints device output itself (printf) writes it
  # through the worker's stdout, checked below while the worker still runs.
  stdbuf -oL "$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" > "$OUT/$tag.stdout" 2> "$OUT/$tag.log" &
  WPID=$!
  WORKERS+=("$WPID")
  for _ in $(seq 100); do grep -q "listening on" "$OUT/$tag.stdout" 2>/dev/null && break; sleep 0.1; done
  ADDR=$(sed -n 's/.*listening on //p' "$OUT/$tag.stdout" | head -1)
  [ -n "$ADDR" ] || { echo "worker $tag did not start:"; cat "$OUT/$tag.log"; return 1; }
}
start_worker worker || exit 1
export HIP_REMOTE_WORKER=$ADDR
echo "worker at $ADDR"

pass=0; fail=0
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
for t in "$PACK"/tests/*; do
  name=$(basename "$t")
  # Programs of device-fault-heal.sh and device-multi-worker.sh, which start the workers
  # they need, and visible_devices, which device-multi-gpu.sh runs with the variables set.
  case "$name" in device_fault_heal|kernel_watchdog|freed_memory|multi_worker|visible_devices) continue ;; esac
  # Two devices of one worker (peer copies, a peer kernel reading pool memory granted by
  # hipMemPoolSetAccess): on a machine of two GPUs or more.
  if [ "$name" = multi_device ] && [ "$GPUS" -lt 2 ]; then echo "SKIP multi_device: $GPUS GPU(s), it needs 2"; continue; fi
  args=()
  # CuPy's headers, packed by pack-device.sh (a directory only this client has).
  [ "$name" = rtc_cupy_kernels ] && args=("$PACK/cupy-include")
  if timeout 300 "$t" "${args[@]}" > "$OUT/test-$name.log" 2>&1; then echo "PASS $name"; pass=$((pass+1)); else echo "FAIL $name (see test-$name.log)"; tail -5 "$OUT/test-$name.log"; fail=$((fail+1)); fi
done
# The worker above also listens on shared memory, and these clients are on its machine: the
# programs above ran over shm. The copy programs again over TCP (striped where large).
for name in memory memory_extra stripes no_wait_ops host_register ipc blocked_stream_copies; do
  [ -x "$PACK/tests/$name" ] || continue
  if HIP_REMOTE_SHM=off timeout 300 "$PACK/tests/$name" > "$OUT/test-tcp-$name.log" 2>&1; then echo "PASS $name (TCP)"; pass=$((pass+1)); else echo "FAIL $name over TCP (see test-tcp-$name.log)"; tail -5 "$OUT/test-tcp-$name.log"; fail=$((fail+1)); fi
done
if timeout 120 "$PACK/bin/hip-remote" demo --lib "$PACK/lib/libamdhip64.so" > "$OUT/demo.log" 2>&1; then
  echo "PASS demo"; pass=$((pass+1)); grep -E "^(kernel|bandwidth|latency)" "$OUT/demo.log"
else
  echo "FAIL demo"; tail -5 "$OUT/demo.log"; fail=$((fail+1))
fi
for ex in "hello_hip $PACK/examples" "saxpy" "tour"; do
  set -- $ex; name=$1; shift
  if [ -x "$PACK/examples/$name" ] && timeout 120 "$PACK/examples/$name" "$@" > "$OUT/example-$name.log" 2>&1; then
    echo "PASS example $name"; pass=$((pass+1))
  else
    echo "FAIL example $name"; tail -5 "$OUT/example-$name.log"; fail=$((fail+1))
  fi
done
# The HIP samples (tests/hip/samples): the executables our hipcc built on the dev machine from
# the source the CI builds and runs against host workers. Each checks its results against a
# CPU reference and ends with a PASS line. kernel_printf's lines and kernel_assert's message
# must reach the program's own output (the cuda backend reads the kernels' device log and
# forwards it, as the host backend does); those two run on workers of their own.
sample_passed() { # sample_passed NAME: exit status 0 (in $rc) and PASS as the last stdout line
  [ "$rc" = 0 ] && [ "$(grep -v '^[[:space:]]*$' "$OUT/sample-$1.stdout" | tail -n 1)" = PASS ]
}
run_sample() { # run_sample NAME: runs it against $HIP_REMOTE_WORKER; sets rc
  rc=0
  timeout 120 "$PACK/samples/$1" > "$OUT/sample-$1.stdout" 2> "$OUT/sample-$1.stderr" || rc=$?
}
sample_verdict() { # sample_verdict NAME OK [WHY]
  if [ "$2" = 1 ]; then echo "PASS sample $1"; pass=$((pass+1)); else
    echo "FAIL sample $1${3:+: $3} (exit $rc)"; tail -n 5 "$OUT/sample-$1.stdout" "$OUT/sample-$1.stderr"; fail=$((fail+1)); fi
}
if [ -d "$PACK/samples" ]; then
  for t in "$PACK"/samples/*; do
    name=$(basename "$t")
    case "$name" in kernel_printf|kernel_assert) continue ;; esac
    run_sample "$name"
    ok=0; sample_passed "$name" && ok=1
    sample_verdict "$name" "$ok"
  done
  for name in kernel_printf kernel_assert; do
    [ -x "$PACK/samples/$name" ] || { echo "FAIL sample $name: not in the pack"; fail=$((fail+1)); continue; }
    start_worker "worker-$name" || { fail=$((fail+1)); continue; }
    HIP_REMOTE_WORKER=$ADDR HIP_REMOTE_DEBUG=1 run_sample "$name"
    sleep 0.5  # what the worker's runtime prints after the reply
    seen=$(cat "$OUT/sample-$name.stdout" "$OUT/sample-$name.stderr")
    kill "$WPID" 2>/dev/null
    ok=0; why=""
    if ! sample_passed "$name"; then why="no PASS line"
    elif [ "$name" = kernel_printf ]; then
      # 3 blocks of 64 threads, every 20th prints (the same lines tests/tests/hip_samples.rs expects).
      missing=$(awk 'BEGIN { for (b = 0; b < 3; b++) for (t = 0; t < 64; t += 20) { i = b * 64 + t;
                 printf "block %d thread %d: tag 7, quarter %.2f, 0x%x\n", b, t, i * 0.25, i * 17 } }' |
                while IFS= read -r line; do [ "$(grep -cxF "$line" <<<"$seen")" = 1 ] || echo "$line"; done)
      if [ -z "$missing" ]; then ok=1; else why="kernel lines missing or repeated: $(head -1 <<<"$missing")"; fi
    elif ! grep -q "hipDeviceSynchronize returned hipErrorAssert (710)" "$OUT/sample-$name.stdout"; then why="no hipErrorAssert"
    elif ! grep -qF 'input[index] >= 0' <<<"$seen"; then why="the assert's message reached no output"
    else ok=1; fi
    sample_verdict "$name" "$ok" "$why"
  done
else
  echo "FAIL samples: not in the pack (scripts/pack-device.sh builds them with our hipcc)"; fail=$((fail+1))
fi
# hipcc's device headers straight through the CUDA driver (no worker): printf/assert records,
# warp operations, atomics, vector operators, math accuracy with and without libdevice.
if [ -f "$PACK/device-check/device_check.py" ]; then
  check_args=(--api api.ptx --math math.ptx)
  [ -f "$PACK/device-check/math-libdevice.ptx" ] && check_args+=(--math-libdevice math-libdevice.ptx)
  if (cd "$PACK/device-check" && timeout 300 python3 device_check.py "${check_args[@]}" > "$OUT/device-check.log" 2>&1); then
    echo "PASS hipcc device headers (device_check.py)"; pass=$((pass+1))
  else
    echo "FAIL hipcc device headers (see device-check.log)"; grep -E "^FAIL" "$OUT/device-check.log" | head -5; fail=$((fail+1))
  fi
fi
if ls "$PACK"/wheels/*.whl >/dev/null 2>&1; then
  VENV=/tmp/hip-remote-venv
  python3 -m venv "$VENV" >/dev/null 2>&1 || VENV=""
  if [ -n "$VENV" ] && "$VENV/bin/pip" install -q --no-index --find-links "$PACK/wheels" hip-python pytest > "$OUT/pip.log" 2>&1; then
    if (cd "$PACK/python" && ROCM_PATH="$PACK" timeout 300 "$VENV/bin/python" -m pytest -q -p no:cacheprovider . > "$OUT/python-tests.log" 2>&1); then
      echo "PASS hip-python"; pass=$((pass+1))
    else
      echo "FAIL hip-python (see python-tests.log)"; tail -20 "$OUT/python-tests.log"; fail=$((fail+1))
    fi
  else
    echo "SKIP hip-python: could not install the wheels (see pip.log)"
  fi
fi
# CuPy for ROCm against this worker, when the pack carries it (HIP_REMOTE_PACK_CUPY=1).
if [ -f "$PACK/device-cupy.sh" ]; then
  rc=0; OUT=$OUT bash "$PACK/device-cupy.sh" || rc=$?
  case "$rc" in 0) pass=$((pass+1)) ;; 77) ;; *) fail=$((fail+1)) ;; esac
fi
"$PACK/bin/hip-remote" ping --count 2000 > "$OUT/ping.txt" 2>&1 && cat "$OUT/ping.txt"
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  # Native (the backend in-process) vs remote (the client library against the worker above)
  # vs raw TCP; the report goes to stdout and bench.md, progress to bench.log.
  # BENCH_PROFILE=1: a flamegraph and a top list per section, brought back as profile.tar.gz.
  PROFILE_ARGS=""
  [ "${BENCH_PROFILE:-0}" = 1 ] && PROFILE_ARGS="--profile $OUT/profile"
  # The bench starts its own worker (with a same-host listener, in its process: profiles
  # see both sides) unless BENCH_WORKER=external keeps it on the worker above.
  [ "${BENCH_WORKER:-embedded}" = external ] || unset HIP_REMOTE_WORKER
  if timeout 420 "$PACK/bin/hip-remote" bench --backend "${BACKEND:-cuda}" --lib "$PACK/lib/libamdhip64.so" ${BENCH_ARGS:-} $PROFILE_ARGS \
      --json "$OUT/bench.json" --markdown "$OUT/bench.md" --plots "$OUT" 2> "$OUT/bench.log"; then
    echo "PASS bench"
  else
    echo "FAIL bench (see bench.log)"; tail -20 "$OUT/bench.log"; fail=$((fail+1))
  fi
  if [ -d "$OUT/profile" ]; then
    tar -czf "$OUT/profile.tar.gz" -C "$OUT" profile && rm -rf "$OUT/profile"
  fi
fi
# At most 8 files come back from the GPU machine: keep bench.json, bench.md, bandwidth.png and
# latency.png, and fold every other file (the logs) into device-test.log.
for f in "$OUT"/*; do
  case "$(basename "$f")" in bench.json|bench.md|*.png|profile.tar.gz|device-test.log) continue ;; esac
  [ -f "$f" ] || continue
  { echo "===== $(basename "$f")"; cat "$f"; echo; } >> "$OUT/device-test.log"
  rm -f "$f"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
