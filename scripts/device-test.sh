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

"$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" > "$OUT/worker.stdout" 2> "$OUT/worker.log" &
WPID=$!
trap 'kill $WPID 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q "listening on" "$OUT/worker.stdout" 2>/dev/null && break; sleep 0.1; done
ADDR=$(sed -n 's/.*listening on //p' "$OUT/worker.stdout" | head -1)
[ -n "$ADDR" ] || { echo "worker did not start:"; cat "$OUT/worker.log"; exit 1; }
export HIP_REMOTE_WORKER=$ADDR
echo "worker at $ADDR"

pass=0; fail=0
for t in "$PACK"/tests/*; do
  name=$(basename "$t")
  if timeout 300 "$t" > "$OUT/test-$name.log" 2>&1; then echo "PASS $name"; pass=$((pass+1)); else echo "FAIL $name (see test-$name.log)"; tail -5 "$OUT/test-$name.log"; fail=$((fail+1)); fi
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
"$PACK/bin/hip-remote" ping --count 2000 > "$OUT/ping.txt" 2>&1 && cat "$OUT/ping.txt"
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  # Native (the backend in-process) vs remote (the client library against the worker above)
  # vs raw TCP; the report goes to stdout and bench.md, progress to bench.log.
  if timeout 420 "$PACK/bin/hip-remote" bench --backend "${BACKEND:-cuda}" --lib "$PACK/lib/libamdhip64.so" ${BENCH_ARGS:-} \
      --json "$OUT/bench.json" --markdown "$OUT/bench.md" --plots "$OUT" 2> "$OUT/bench.log"; then
    echo "PASS bench"
  else
    echo "FAIL bench (see bench.log)"; tail -20 "$OUT/bench.log"; fail=$((fail+1))
  fi
fi
# At most 8 files come back from the GPU machine: keep bench.json, bench.md, bandwidth.png and
# latency.png, and fold every other file (the logs) into device-test.log.
for f in "$OUT"/*; do
  case "$(basename "$f")" in bench.json|bench.md|*.png|device-test.log) continue ;; esac
  [ -f "$f" ] || continue
  { echo "===== $(basename "$f")"; cat "$f"; echo; } >> "$OUT/device-test.log"
  rm -f "$f"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
