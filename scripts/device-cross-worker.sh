#!/usr/bin/env bash
# Copies between workers of one device list, on the GPU machine (from the device pack):
#   bash scripts/pack-device.sh            # here, builds device-pack/
#   bash device-pack/device-cross-worker.sh   # on the GPU machine
# Each pair of workers may dial the other (--dial-workers naming its address) and serves its
# own /metrics. For each pair: tests/c/multi_worker `copies` (both ways, sync and async, stream
# order, a copy after another worker's event, each verified against a pattern; the client's
# TCP counters show it sent its uploads, not the copies), the workers' transfer counters equal
# what was copied, and `bench` (bandwidth between the workers against a copy within one: the
# BENCH line in bench-NAME.log). Pairs:
# 1. host: two host-backend workers serving sessions in their own process;
# 2. gpu-process: two GPU workers of BACKEND (default cuda; GPU 0 and GPU 1, or both GPU 0)
#    with --isolation process (the default: each session in a confined process of its own,
#    which the worker dials for and hands other workers' fetches);
# 3. gpu-shared: the same with --isolation shared (one confined process for every session);
# 4. gpu-tls: the gpu-process pair serving TLS (a CA and a certificate for 127.0.0.1 made
#    here with openssl; skipped without it), the client reaching them as tls://, and each
#    worker dialling the other over TLS (--dial-workers tls://..., --dial-workers-ca): the
#    sessions are relayed by their workers, which relay the fetches too.
# (tests/c/multi_worker's full run, which expects copies refused between workers that may not
# dial each other, is device-multi-worker.sh's.)
# When the client's allocation windows are not honoured by the driver (the `copies` log says
# "outside its window"), `copies` is run again with HIP_REMOTE_CLIENT_ALLOC=off, so the
# copies themselves are still checked; the window result is reported on its own line.
# Output: $OUT/cross-worker/{copies,bench}-NAME.log and the workers' logs.
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}/cross-worker
BACKEND=${BACKEND:-cuda}
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT"
TOKEN=cross-worker-check-$$
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done; pids=(); }
trap cleanup EXIT
start() { # start NAME PORT ARGS...
  local name=$1 port=$2
  shift 2
  HIP_REMOTE_TOKEN=$TOKEN "$PACK/bin/hip-worker" --listen "127.0.0.1:$port" "$@" > "$OUT/worker-$name.log" 2>&1 &
  pids+=($!)
}
wait_listening() {
  for _ in $(seq 150); do
    grep -q "listening" "$OUT/worker-$1.log" 2>/dev/null && grep -q "listening" "$OUT/worker-$2.log" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
WORKERS=127.0.0.1:18625,127.0.0.1:18626
client() { # client LOG ARGS...
  local log=$1
  shift
  # Over TCP (not the same-host transport), so the client's TCP counters see what it sends.
  HIP_REMOTE_WORKER=$WORKERS HIP_REMOTE_TOKEN=$TOKEN HIP_REMOTE_DEBUG=1 HIP_REMOTE_SHM=off \
    timeout 300 "$PACK/tests/multi_worker" "$@" > "$OUT/$log" 2>&1
}
make_pki() { # make_pki DIR: ca.pem, and server.pem/server.key for 127.0.0.1 signed by it
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 2 \
    -subj "/CN=hip-remote cross-worker check CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=127.0.0.1" &&
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n' > "$dir/server.ext" &&
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.pem"
}
metric() { # metric PORT NAME: one counter of a worker's /metrics
  local port=$1 name=$2 line
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /metrics HTTP/1.1\r\nHost: check\r\nConnection: close\r\n\r\n' >&3
  line=$(grep -a "^$name " <&3)
  exec 3<&-
  echo "${line##* }"
}
pair() { # pair LOG NAME SIDE: the a:/b: value of a NAME line of the program's output
  grep "^$2 " "$OUT/$1" | tr ' ' '\n' | sed -n "s/^$3://p"
}
failed=0
check_pair() { # check_pair NAME: copies, counters and bench against the running pair
  local name=$1 log=copies-$1.log
  client "$log" copies
  if grep -q "outside its window" "$OUT/$log"; then
    echo "$name: the driver did not place client allocation ranges in their windows (see $log); copies again without them"
    log=copies-$name-no-windows.log
    HIP_REMOTE_CLIENT_ALLOC=off client "$log" copies
  fi
  if ! grep -q "PASS multi_worker copies" "$OUT/$log"; then
    echo "$name: copies between the workers FAILED (see $OUT/$log)"; failed=1; return
  fi
  local to_a to_b sent uploaded
  to_a=$(pair "$log" TRANSFERRED a) to_b=$(pair "$log" TRANSFERRED b)
  uploaded=$(( $(pair "$log" UPLOADED a) + $(pair "$log" UPLOADED b) ))
  sent=$(sed -n 's/^CLIENT_SENT //p' "$OUT/$log")
  local got_a got_b gave_a gave_b
  got_a=$(metric 18635 hip_worker_transfer_received_bytes_total) got_b=$(metric 18636 hip_worker_transfer_received_bytes_total)
  gave_a=$(metric 18635 hip_worker_transfer_sent_bytes_total) gave_b=$(metric 18636 hip_worker_transfer_sent_bytes_total)
  if [ "$got_a/$got_b/$gave_a/$gave_b" = "$to_a/$to_b/$to_b/$to_a" ] && [ "$sent" -ge $(( uploaded / 2 )) ] \
     && [ "$sent" -lt $(( uploaded + (1 << 20) )) ]; then
    echo "$name: copies passed; $((to_a + to_b)) bytes went worker to worker, the client sent $sent (uploads $uploaded)"
  else
    echo "$name: counters FAILED: fetched a=$got_a b=$got_b (copied in: $to_a $to_b), answered a=$gave_a b=$gave_b; client sent $sent (uploads $uploaded)"
    failed=1
  fi
  client "bench-$name.log" bench 256 8 && grep "BENCH" "$OUT/bench-$name.log" | sed "s/^/$name: /" || { echo "$name: bench FAILED"; failed=1; }
}

start host-a 18625 --backend host --host-memory-mib 1024 --dial-workers 127.0.0.1:18626 --metrics 127.0.0.1:18635
start host-b 18626 --backend host --host-memory-mib 1024 --dial-workers 127.0.0.1:18625 --metrics 127.0.0.1:18636
wait_listening host-a host-b || { echo "device-cross-worker: host workers did not start (see $OUT)"; exit 1; }
check_pair host
cleanup

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
second=0; [ "${gpus:-0}" -ge 2 ] && second=1
for isolation in process shared; do
  start "gpu-$isolation-a" 18625 --backend "$BACKEND" --devices 0 --isolation "$isolation" --dial-workers 127.0.0.1:18626 --metrics 127.0.0.1:18635
  start "gpu-$isolation-b" 18626 --backend "$BACKEND" --devices "$second" --isolation "$isolation" --dial-workers 127.0.0.1:18625 --metrics 127.0.0.1:18636
  wait_listening "gpu-$isolation-a" "gpu-$isolation-b" || { echo "device-cross-worker: GPU workers did not start (see $OUT)"; exit 1; }
  check_pair "gpu-$isolation"
  cleanup
done
if command -v openssl > /dev/null && make_pki "$OUT/pki" > "$OUT/pki.log" 2>&1; then
  tls=(--tls-cert "$OUT/pki/server.pem" --tls-key "$OUT/pki/server.key" --dial-workers-ca "$OUT/pki/ca.pem")
  start gpu-tls-a 18625 --backend "$BACKEND" --devices 0 "${tls[@]}" --dial-workers tls://127.0.0.1:18626 --metrics 127.0.0.1:18635
  start gpu-tls-b 18626 --backend "$BACKEND" --devices "$second" "${tls[@]}" --dial-workers tls://127.0.0.1:18625 --metrics 127.0.0.1:18636
  wait_listening gpu-tls-a gpu-tls-b || { echo "device-cross-worker: TLS GPU workers did not start (see $OUT)"; exit 1; }
  WORKERS=tls://127.0.0.1:18625,tls://127.0.0.1:18626 HIP_REMOTE_TLS_CA="$OUT/pki/ca.pem" check_pair gpu-tls
  cleanup
else
  echo "gpu-tls: skipped (no openssl, or it could not make the certificates: see $OUT/pki.log)"
fi
[ "$failed" = 0 ] || { echo "device-cross-worker: FAILED (see $OUT)"; exit 1; }
echo "device-cross-worker: passed"
