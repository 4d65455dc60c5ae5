#!/usr/bin/env bash
# The Windows client, linked and run: the x86_64-pc-windows-gnu layout of scripts/dist.sh (dev
# profile; amdhip64_7.dll with import library amdhip64.lib, hiprtc0702.dll, hipblas.dll,
# hip-remote.exe, hipconfig.exe), the C conformance programs of tests/c and the hiprtc example
# compiled against it with MinGW-w64, run under Wine against Linux host-backend workers on
# loopback, over TCP and over TLS. Also: hip-remote.exe ping and demo, hipconfig.exe, and
# shm:// refused with the message that names the transports that work. The .zip made from the
# same layout is checked by scripts/dist-check.sh.
# Prints "windows-test: N passed, N failed, N skipped" and each skip's reason; exits non-zero on
# any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
t0=$SECONDS
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null || need+=(wine64 wine)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null \
    || { echo "SKIP: could not install ${need[*]}"; exit 77; }
fi

WORK=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  WINEPREFIX=$WORK/prefix wineserver -k 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

# The layout (the same as the release archive's) and the Linux worker.
STAGE=$WORK/hip-remote
bash scripts/dist.sh x86_64-pc-windows-gnu --profile dev --stage "$STAGE" --archive || exit 1
# The .zip a user downloads, from the same layout: its contents checked, then dropped (large).
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
ZIP=$ROOT/dist/hip-remote-$version-x86_64-pc-windows-gnu.zip
archive_ok=1
bash scripts/dist-check.sh "$ZIP" || archive_ok=0
rm -f "$ZIP"
cargo build -q -p hip-worker || exit 1
WORKER=${CARGO_TARGET_DIR:-$ROOT/target}/debug/hip-worker
echo "windows-test: built in $((SECONDS - t0)) s"

# Programs: the tests/c programs that tests/tests/c_programs.rs runs with a plain worker (two
# devices for those it runs with two), the hipBLAS programs and the hiprtc example.
one_device=(arrays callbacks capture device_assert device_query errors func_attributes graph_exec graph_nodes graphs
  kernels memcpy3d memory memory2d memset2d3d module_link no_wait_ops not_ready per_thread_stream shared_kernels
  stream_extra streams_events symbols_spt textures threads hipblas_ops hipblas_hostile)
two_devices=(contexts device_control device_extra module_extra multi_device stream_info)
# Programs whose source is POSIX-only (not compiled here; each a counted skip).
declare -A posix_only=(
  [ipc]="fork() and waitpid() (sys/wait.h)"
  [kernel_printf]="pread() on the redirected stdout"
  [pointer_attrs]="aligned_alloc(), which the MinGW C runtime lacks"
  [rtc_client_headers]="mkdtemp() and POSIX mkdir()"
  [tour]="fork() (examples/tour)"
)
# Features the Windows client refuses (each a counted skip, once the program's first failure is
# exactly that refusal): "CALL" must be the failing call, answered hipErrorNotSupported.
declare -A refused=(
  [host_register]="hipHostMalloc|mapped host memory needs mmap to place pages at the device's address"
  [managed]="hipMallocManaged|managed memory needs mmap to place pages at the device's address"
  [memory_extra]="hipExtMallocWithFlags|signal memory is mapped host memory, which needs mmap to place pages at the device's address"
  [mempool]="hipMemPoolExportToShareableHandle|POSIX file-descriptor handles do not exist on Windows"
  [vmm]="hipMemExportToShareableHandle|POSIX file-descriptor handles do not exist on Windows"
)

BIN=$WORK/bin
mkdir -p "$BIN"
cp "$STAGE"/bin/*.dll "$STAGE"/bin/*.exe "$BIN"/
# Wine 8 (Debian 12) lacks bcryptprimitives.dll, which Rust's std imports on Windows: a
# stand-in for the test only (tests/windows/bcryptprimitives.c).
x86_64-w64-mingw32-gcc -shared -O2 -o "$BIN/bcryptprimitives.dll" tests/windows/bcryptprimitives.c -ladvapi32 || exit 1
cp "$BIN/bcryptprimitives.dll" "$STAGE/bin/"
compile() { # compile NAME SOURCE
  x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror -O1 -I "$STAGE/include" "$2" -o "$BIN/$1.exe" \
    "$STAGE/lib/hiprtc.lib" "$STAGE/lib/amdhip64.lib" "$STAGE/lib/hipblas.lib" -static -lpthread -lm
}
passed=0 failed=0 skipped=0
failures=() skips=()
fail() { echo "FAIL $*"; failed=$((failed + 1)); failures+=("$*"); }
pass() { passed=$((passed + 1)); }
skip() { skipped=$((skipped + 1)); skips+=("$*"); }
if [ "$archive_ok" = 1 ]; then pass; else fail "the Windows archive's contents (scripts/dist-check.sh)"; fi
compiled=()
for name in "${one_device[@]}" "${two_devices[@]}" "${!refused[@]}"; do
  if compile "$name" "tests/c/$name.c" 2>"$WORK/$name.cc.log"; then compiled+=("$name"); else fail "$name: does not compile: $(head -3 "$WORK/$name.cc.log")"; fi
done
compile saxpy examples/hiprtc/saxpy.c || fail "saxpy: does not compile"
for name in "${!posix_only[@]}"; do skip "$name: POSIX-only test source (${posix_only[$name]})"; done
echo "windows-test: compiled ${#compiled[@]} programs in $((SECONDS - t0)) s"

# Certificates for the TLS workers: a CA and a certificate for 127.0.0.1 signed by it.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=windows-test CA" -keyout "$WORK/ca.key" -out "$WORK/ca.pem" 2>/dev/null \
  && openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$WORK/worker.key" -out "$WORK/worker.csr" 2>/dev/null \
  && printf 'subjectAltName=IP:127.0.0.1\n' >"$WORK/san.ext" \
  && openssl x509 -req -in "$WORK/worker.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 -extfile "$WORK/san.ext" -out "$WORK/worker.pem" 2>/dev/null \
  || { echo "windows-test: openssl could not make the test certificates"; exit 1; }

TOKEN=windows-test-token
start_worker() { # start_worker NAME ARGS...: sets ADDR (HOST:PORT or tls://HOST:PORT)
  local name=$1; shift
  "$WORKER" --listen 127.0.0.1:0 --backend host --allow-host-code --host-memory-mib 1024 --token "$TOKEN" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.log" &
  pids+=($!)
  for _ in $(seq 100); do
    ADDR=$(sed -n 's#^hip-worker listening on \(\(tls://\)\{0,1\}[0-9.]*:[0-9]*\)$#\1#p' "$WORK/$name.out")
    [ -n "$ADDR" ] && return 0
    sleep 0.1
  done
  echo "windows-test: worker $name did not start:"; cat "$WORK/$name.log"; exit 1
}
tls=(--tls-cert "$WORK/worker.pem" --tls-key "$WORK/worker.key")
start_worker tcp1; TCP1=$ADDR
start_worker tcp2 --host-devices 2; TCP2=$ADDR
start_worker tls1 "${tls[@]}"; TLS1=$ADDR
start_worker tls2 "${tls[@]}" --host-devices 2; TLS2=$ADDR
case "$TLS1 $TLS2" in tls://*" "tls://*) ;; *) echo "windows-test: the TLS workers did not say tls://"; exit 1 ;; esac

export WINEPREFIX=$WORK/prefix WINEARCH=win64 WINEDEBUG=-all
# One wineserver for every program (Wine's start-up is the slow part).
wineserver -p 2>/dev/null
HIP_REMOTE_TLS_CA=$(winepath -w "$WORK/ca.pem" 2>/dev/null)
export HIP_REMOTE_TOKEN=$TOKEN HIP_REMOTE_TLS_CA
run_wine() { # run_wine LOG WORKER EXE ARGS...
  local log=$1 worker=$2; shift 2
  (cd "$BIN" && HIP_REMOTE_WORKER=$worker timeout 120 wine "$@" >"$log" 2>&1)
}

# Over TLS, the programs that move the most data and make the most calls (and one of each
# kind of device count and library), to keep the step short; over TCP, all of them.
over_tls=(memory memory2d memcpy3d kernels threads streams_events graphs callbacks errors hipblas_ops multi_device contexts managed)
for transport in tcp tls; do
  if [ "$transport" = tcp ]; then w1=$TCP1 w2=$TCP2 programs=("${compiled[@]}"); else w1=$TLS1 w2=$TLS2 programs=("${over_tls[@]}"); fi
  for name in "${programs[@]}"; do
    worker=$w1
    for two in "${two_devices[@]}"; do [ "$two" = "$name" ] && worker=$w2; done
    log=$WORK/$name.$transport.log
    run_wine "$log" "$worker" "./$name.exe"
    rc=$?
    if [ -n "${refused[$name]:-}" ]; then
      call=${refused[$name]%%|*} why=${refused[$name]#*|}
      if [ "$rc" != 0 ] && grep -q "^FAIL .*${call}(.*returned hipErrorNotSupported" "$log"; then
        [ "$transport" = tcp ] && skip "$name: $call refused on Windows ($why)"
      else
        fail "$name over $transport: expected $call to be refused with hipErrorNotSupported (exit $rc): $(tail -2 "$log")"
      fi
    elif [ "$rc" = 0 ] && grep -q "^PASS $name" "$log"; then
      pass
    else
      fail "$name over $transport (exit $rc): $(tail -3 "$log")"
    fi
  done
  log=$WORK/saxpy.$transport.log
  if run_wine "$log" "$w1" ./saxpy.exe && grep -q "saxpy of 1048576 elements: correct" "$log"; then pass; else fail "saxpy over $transport: $(tail -3 "$log")"; fi
  log=$WORK/ping.$transport.log
  if run_wine "$log" "$w1" ./hip-remote.exe ping --count 20 && grep -q "round trip .*(20 pings)" "$log"; then pass; else fail "hip-remote.exe ping over $transport: $(tail -3 "$log")"; fi
  log=$WORK/demo.$transport.log
  if run_wine "$log" "$w1" ./hip-remote.exe demo --mib 4 && grep -q "demo finished: every result checked" "$log"; then pass; else fail "hip-remote.exe demo over $transport: $(tail -3 "$log")"; fi
  echo "windows-test: $transport done at $((SECONDS - t0)) s"
done

# hipconfig.exe finds the layout it sits in (bin/ beside include/).
log=$WORK/hipconfig.log
if (cd "$STAGE/bin" && timeout 60 wine ./hipconfig.exe --version >"$log" 2>&1) && grep -q "^7\.2\." "$log"; then pass; else fail "hipconfig.exe --version: $(tail -2 "$log")"; fi
log=$WORK/hipconfig-cpp.log
if (cd "$STAGE/bin" && timeout 60 wine ./hipconfig.exe --cpp_config >"$log" 2>&1) && grep -q -- '-I.*hip-remote.include' "$log"; then pass; else fail "hipconfig.exe --cpp_config: $(tail -2 "$log")"; fi
# shm:// is refused, naming what works.
log=$WORK/shm.log
run_wine "$log" "shm:///tmp/hip-remote.sock" ./device_query.exe
rc=$?
if [ "$rc" != 0 ] && grep -q 'shm:// (same-host shared memory) needs Linux' "$log" && grep -q 'tls://HOST:PORT' "$log"; then pass; else fail "shm:// was not refused as documented (exit $rc): $(tail -3 "$log")"; fi

echo
for s in "${skips[@]}"; do echo "skipped: $s"; done
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "windows-test: $passed passed, $failed failed, $skipped skipped ($((SECONDS - t0)) s)"
[ "$failed" = 0 ]
