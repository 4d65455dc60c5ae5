#!/bin/bash
# llama.cpp's ggml on the GPU machine: ours (ROCm0 through a cuda worker) beside ggml's native
# CUDA backend built there from the same sources. Runs from a slim llama pack (bin/hip-worker,
# lib/, llama.tar.xz from `scripts/llama-cpp.sh pack`, llama-src.tar.xz: the sources with
# app/), this script copied into it; results in $OUT.
#   both:   the native build in the background while ours runs test-backend-ops' MUL_MAT from
#           q2_K on and llama-bench (CUDA graphs off), then the native llama-bench (its own
#           libraries: LD_LIBRARY_PATH reset) and the native test-backend-ops for GPU_OPS' ops.
#   rest:   ours for the remaining ops of GPU_OPS and the MUL_MAT shapes outside the type loop.
#   mulmat: ours for every MUL_MAT case, in five shards by type run side by side (each its own
#           worker: the first use of each kernel file is the driver compiling its PTX, which
#           one process does on one core), then llama-bench with ggml's CUDA graphs and
#           without; logs in one archive ($OUT/mulmat.tgz), per-shard counts printed. C
#           programs in the pack's tests/ (if any) run first against a worker of their own.
#   profile: ours' llama-bench generation (tg128) with graphs and without, the client's wait
#           table (HIP_REMOTE_PROFILE=1) and the worker's graph log: where a token's time goes.
# Each fits one 600 s device call (docs/BENCHMARKS.md, "On one H200").
set -u
P=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/device-out}
start_ours() { # DIR: a cuda worker of the pack, our libraries first; sets WPID, HIP_REMOTE_WORKER
  export LD_LIBRARY_PATH=$P/llama/lib:$P/lib
  $P/bin/hip-worker --listen 127.0.0.1:0 --backend cuda --allow-host-code ${WORKER_ARGS:-} --rtc-cache-dir /tmp/hip-remote-rtc-cache > "$1/worker.stdout" 2> "$1/worker.log" &
  WPID=$!
  for _ in $(seq 200); do grep -q "listening on" "$1/worker.stdout" 2>/dev/null && break; sleep 0.1; done
  HIP_REMOTE_WORKER=$(sed -n 's/^hip-worker listening on \([0-9.:]*\).*/\1/p' "$1/worker.stdout" | head -1)
  export HIP_REMOTE_WORKER
}
case "${1:-}" in
both)
cd "$P" && tar xJf llama.tar.xz
BASE=$OUT
mkdir -p $BASE/native $BASE/ours
( src=$(mktemp -d); tar -C $src -xJf $P/llama-src.tar.xz; t0=$SECONDS; echo $src > $BASE/native/srcdir
  cmake -S $src -B $src/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DGGML_CUDA_FA=OFF \
    -DGGML_CUDA_FA_QUANTS=f16-f16 -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=OFF > $BASE/native/build.log 2>&1
  nice -n 5 cmake --build $src/build --target test-backend-ops llama-bench -j 14 >> $BASE/native/build.log 2>&1
  echo "native build rc=$? $((SECONDS-t0)) s" >> $BASE/native/build.log ) &
BPID=$!
start_ours $BASE/ours
t0=$SECONDS
timeout ${OURS_TIMEOUT:-230} $P/llama/test-backend-ops test -b ROCm0 -o MUL_MAT -p '^type_a=(q2_K,.*,n=[1-8],|q3_K|q4_K|q5_K|q6_K|iq|tq)' > $BASE/ours/mulmat-rest.log 2>&1
echo "ours MUL_MAT rest rc=$? $((SECONDS-t0)) s" >> $BASE/ours/summary.txt
t0=$SECONDS
GGML_CUDA_DISABLE_GRAPHS=1 timeout 100 $P/llama/llama-bench -m $P/llama/tiny-q8_0.gguf -ngl 99 -p 512 -n 128 -r 3 -o md > $BASE/ours/bench-nographs.md 2> $BASE/ours/bench-nographs.log
echo "ours bench (no graphs) rc=$? $((SECONDS-t0)) s" >> $BASE/ours/summary.txt
kill $WPID
wait $BPID
export LD_LIBRARY_PATH=
src=$(cat $BASE/native/srcdir); nb=$src/build/bin
if [ -x $nb/llama-bench ]; then
  timeout 40 $nb/llama-bench -m $P/llama/tiny-q8_0.gguf -ngl 99 -p 512 -n 128 -r 3 -o md > $BASE/native/bench.md 2> $BASE/native/bench.log
  GGML_CUDA_DISABLE_GRAPHS=1 timeout 40 $nb/llama-bench -m $P/llama/tiny-q8_0.gguf -ngl 99 -p 512 -n 128 -r 3 -o md > $BASE/native/bench-nographs.md 2>> $BASE/native/bench.log
fi
if [ -x $nb/test-backend-ops ]; then
  ops=ADD,MUL,SUB,DIV,SCALE,SQR,SQRT,CLAMP,SOFT_MAX,RMS_NORM,NORM,GET_ROWS,CPY,SUM_ROWS,ARGMAX,CONCAT,ROPE,MUL_MAT
  timeout ${NATIVE_TIMEOUT:-120} $nb/test-backend-ops test -b CUDA0 -o $ops > $BASE/native/test-backend-ops.log 2>&1; echo "native tbo rc=$?" >> $BASE/native/build.log
fi
gzip -f $BASE/native/test-backend-ops.log $BASE/ours/mulmat-rest.log 2>/dev/null
  ;;
rest)
cd "$P" && tar xJf llama.tar.xz
mkdir -p $OUT/ours
start_ours $OUT/ours
t0=$SECONDS
timeout 100 $P/llama/test-backend-ops test -b ROCm0 -o SQR,SQRT,CLAMP,SOFT_MAX,ROPE,CONCAT,SUM_ROWS > $OUT/ours/ops-rest.log 2>&1
echo "ops rest rc=$? $((SECONDS-t0)) s" | tee -a $OUT/ours/summary.txt
t0=$SECONDS
timeout $((265-SECONDS)) $P/llama/test-backend-ops test -b ROCm0 -o MUL_MAT -p '^(?!type_a=[a-z0-9_]+,type_b=f32,m=16,n=[0-9],k=(256|4096),bs=\[1,1\],nr=\[1,1\],per=\[0,1,2,3\],k_v=0,o=1,)' > $OUT/ours/mulmat-other.log 2>&1
echo "mul_mat other rc=$? $((SECONDS-t0)) s" | tee -a $OUT/ours/summary.txt
kill $WPID
for f in ops-rest mulmat-other; do sed 's/\x1b\[[0-9;]*m//g' $OUT/ours/$f.log | grep -E "^\s+[A-Z_]+\(" | sed -E 's/^\s+([A-Z_]+)\(.*\): (.*)$/\1 \2/' | awk '{print $1, $NF}' | sort | uniq -c > $OUT/ours/$f.counts; cat $OUT/ours/$f.counts; grep -E "FAIL" $OUT/ours/$f.log | head -5; done
tar czf $OUT/ours/logs.tgz -C $OUT/ours ops-rest.log mulmat-other.log worker.log; rm -f $OUT/ours/ops-rest.log $OUT/ours/mulmat-other.log $OUT/ours/worker.log $OUT/ours/worker.stdout
  ;;
mulmat)
cd "$P" && tar xJf llama.tar.xz
D=$OUT/ours; mkdir -p $D
if [ -d $P/tests ]; then # C programs packed beside (hipBLAS in graphs): run first, against one worker
  mkdir -p $D/checks
  ( export RUST_LOG=hip_worker=debug; start_ours $D/checks
    for t in $P/tests/*; do timeout 60 $t > $D/checks/$(basename $t).log 2>&1; echo "$(basename $t) rc=$?" >> $D/checks/summary.txt; done
    kill $WPID )
  cat $D/checks/summary.txt; grep -hE "graph instantiated|replayed" $D/checks/worker.log | sort | uniq -c | head -5
fi
shards=("f32|f16|bf16" "q1_0|q2_0|q4_0|q4_1" "q5_0|q5_1|q8_0|mxfp4|nvfp4" "q2_K|q3_K|q4_K|q5_K|q6_K|tq" "iq")
pids=()
for i in "${!shards[@]}"; do
  mkdir -p $D/s$i
  ( start_ours $D/s$i
    t0=$SECONDS
    timeout ${SHARD_TIMEOUT:-420} $P/llama/test-backend-ops test -b ROCm0 -o MUL_MAT -p "^type_a=(${shards[$i]})" > $D/s$i/mulmat.log 2>&1
    echo "shard $i (${shards[$i]}) rc=$? $((SECONDS-t0)) s" > $D/s$i/summary.txt
    kill $WPID ) &
  pids+=($!)
done
wait "${pids[@]}"
start_ours $D
for mode in graphs nographs; do
  [ $mode = nographs ] && export GGML_CUDA_DISABLE_GRAPHS=1
  timeout 60 $P/llama/llama-bench -m $P/llama/tiny-q8_0.gguf -ngl 99 -p 512 -n 128 -r 3 -o md > $D/bench-$mode.md 2> $D/bench-$mode.log
  echo "bench $mode rc=$?" >> $D/summary.txt
done
unset GGML_CUDA_DISABLE_GRAPHS
kill $WPID
for i in "${!shards[@]}"; do
  cat $D/s$i/summary.txt
  sed 's/\x1b\[[0-9;]*m//g' $D/s$i/mulmat.log | grep -E "^\s+MUL_MAT\(" | sed -E 's/^.*\): //' | sort | uniq -c
  sed 's/\x1b\[[0-9;]*m//g' $D/s$i/mulmat.log | grep -E "MUL_MAT.*FAIL" | head -3
done
cat $D/summary.txt $D/bench-*.md; grep -iE "error|abort" $D/bench-graphs.log | head -5
tar czf $OUT/mulmat.tgz -C $D . && rm -rf $D
  ;;
profile)
cd "$P" && tar xJf llama.tar.xz
D=$OUT/profile; mkdir -p $D
WORKER_ARGS="--log-level info,hip_worker::session::graph=debug,hip_worker::backend::cuda=debug" start_ours $D
for mode in graphs nographs; do
  [ $mode = nographs ] && export GGML_CUDA_DISABLE_GRAPHS=1
  HIP_REMOTE_PROFILE=1 timeout 60 $P/llama/llama-bench -m $P/llama/tiny-q8_0.gguf -ngl 99 -p 0 -n 128 -r 3 -o md > $D/tg-$mode.md 2> $D/tg-$mode.log
  echo "tg $mode rc=$?"; cat $D/tg-$mode.md; sed -n '/hip-remote profile/,$p' $D/tg-$mode.log | head -40
done
kill $WPID
grep -hoE "graph instantiated.*|is replayed.*" $D/worker.log | sed -E 's/session=[0-9]+ //' | sort | uniq -c | head -10
tar czf $OUT/profile.tgz -C $D . && rm -rf $D
  ;;
*)
  sed -n 2,20p "$0"; exit 2 ;;
esac
