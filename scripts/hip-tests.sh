#!/usr/bin/env bash
# ROCm's own HIP conformance tests (ROCm/hip-tests, catch/unit, pinned below) built by
# upstream's CMake with our hipcc against an installed hip-remote layout, and run against a
# worker (docs/CONFORMANCE.md has the results and the reasons of every failure).
#
#   scripts/hip-tests.sh                 the families CI runs, on a host-backend worker
#   scripts/hip-tests.sh --all           every family of catch/unit
#   scripts/hip-tests.sh --families "event stream"
#   scripts/hip-tests.sh --pack DIR      builds for the GPU machine (PTX, no device source)
#                                        and packs the programs, the runner and the layout in
#                                        DIR; there: bash DIR/run.sh (a cuda worker)
#
# Environment: HIP_TESTS_SRC (a directory holding catch/ of the pinned commit; otherwise the
# commit's tarball is downloaded once into HIP_TESTS_CACHE and its files checked against the
# pinned tree hash), HIP_TESTS_BUILD (build tree, default $TMPDIR/hip-tests-build, removed
# afterwards unless HIP_TESTS_KEEP=1), HIP_TESTS_JOBS (make and test parallelism, default
# nproc), HIP_TESTS_TIMEOUT (seconds per test case, 120), HIP_REMOTE_WORKER (test against that
# worker instead of starting a host-backend one), HIP_TESTS_HOST_CODE=0 (the host worker runs
# no kernels: without --allow-host-code; default 1), HIP_TESTS_HOST_DEVICES (devices of the
# host worker, default 1), HIP_TESTS_RESULTS (where results.tsv and
# summary.md go, default target/hip-tests). Needs cmake, make, python3 and clang (as hipcc does).
# Exits 77 with a SKIP line when the source or a tool is missing; non-zero when a test case
# fails and HIP_TESTS_STRICT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HIP_TESTS_COMMIT=87c8a0417c6f4ef2c7d905b71eb42e02a0c4ef4a
# sha256 over "sha256  path" lines of every file under catch/ (sorted), for a downloaded tree.
HIP_TESTS_TREE_SHA256=3852a635492bff4fd6d156b07d15317ae27e793676530d2bc63345cdd9e918c6
# The families CI builds and runs (about 10-15 minutes on two cores), and the fewest of their
# test cases that must pass on a host worker (docs/CONFORMANCE.md has the measured figure):
# fewer is a regression and fails the check.
CI_FAMILIES="event stream errorHandling context channelDescriptor device executionControl occupancy callback"
CI_MIN_PASSED=325

skip() { echo "hip-tests: SKIP: $*"; exit 77; }
families=$CI_FAMILIES pack="" 
while [ $# -gt 0 ]; do
  case "$1" in
    --all) families=ALL ;;
    --families) families=$2; shift ;;
    --pack) pack=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "hip-tests: unknown argument $1 (see --help)"; exit 2 ;;
  esac
  shift
done
for tool in cmake make python3; do command -v "$tool" >/dev/null || skip "no $tool here"; done
JOBS=${HIP_TESTS_JOBS:-$(nproc)}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/debug
BUILD=${HIP_TESTS_BUILD:-${TMPDIR:-/tmp}/hip-tests-build}
RESULTS=${HIP_TESTS_RESULTS:-$ROOT/target/hip-tests}

tree_sha() { (cd "$1" && find catch -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1); }
SRC=${HIP_TESTS_SRC:-}
if [ -z "$SRC" ]; then
  cache=${HIP_TESTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hip-remote}/hip-tests-$HIP_TESTS_COMMIT
  if [ ! -f "$cache/.verified" ]; then
    rm -rf "$cache"; mkdir -p "$cache"
    vendored=$ROOT/tests/third_party/hip-tests/hip-tests-${HIP_TESTS_COMMIT:0:8}-catch.tar.xz
    if [ -f "$vendored" ]; then
      # The pinned tree carried in the repository (tests/third_party/hip-tests).
      tar -xJf "$vendored" -C "$cache"
    else
      command -v curl >/dev/null || skip "no curl to fetch hip-tests $HIP_TESTS_COMMIT (or set HIP_TESTS_SRC)"
      curl -fsSL "https://codeload.github.com/ROCm/hip-tests/tar.gz/$HIP_TESTS_COMMIT" \
        | tar -xz -C "$cache" --strip-components=1 "hip-tests-$HIP_TESTS_COMMIT/catch" "hip-tests-$HIP_TESTS_COMMIT/LICENSE.txt" \
        || skip "could not download hip-tests $HIP_TESTS_COMMIT (network; or set HIP_TESTS_SRC)"
    fi
    got=$(tree_sha "$cache")
    [ "$got" = "$HIP_TESTS_TREE_SHA256" ] || { echo "hip-tests: the downloaded tree's hash is $got, not the pinned $HIP_TESTS_TREE_SHA256"; exit 1; }
    touch "$cache/.verified"
  fi
  SRC=$cache
fi
[ -f "$SRC/catch/CMakeLists.txt" ] || skip "$SRC holds no catch/CMakeLists.txt"
# Upstream's packaging step reads LICENSE.txt beside catch/.
[ -f "$SRC/LICENSE.txt" ] || : > "$SRC/LICENSE.txt"
if [ "$families" = ALL ]; then
  families=$(cd "$SRC/catch/unit" && for d in */; do echo "${d%/}"; done | tr '\n' ' ')
fi

# The layout upstream's CMake is pointed at (ROCM_PATH, HIP_PATH): hipcc, hipconfig, headers,
# libamdhip64.
mkdir -p "$BUILD"
PREFIX=$BUILD/rocm
for f in hip-remote libamdhip64.so hipcc hip-worker; do
  [ -e "$TARGET/$f" ] || { echo "hip-tests: $TARGET/$f missing; run cargo build --workspace"; exit 1; }
done
rm -rf "$PREFIX"
"$TARGET/hip-remote" install --prefix "$PREFIX" >/dev/null
"$PREFIX/bin/hipcc" --version | grep '^Compiler: ' >/dev/null || skip "the installed hipcc finds no clang here"
echo "hip-tests $HIP_TESTS_COMMIT; hipconfig --version: $("$PREFIX/bin/hipconfig" --version); families: $families"

# A host worker compiles each program's device source; a GPU run takes PTX and no source.
if [ -n "$pack" ]; then arch=sm_70; else arch=host; fi
CMAKE_BUILD=$BUILD/cmake
mkdir -p "$CMAKE_BUILD"
(cd "$CMAKE_BUILD" && env ROCM_PATH="$PREFIX" CXX="$PREFIX/bin/hipcc" CC="$PREFIX/bin/hipcc" \
   cmake "$SRC/catch" -DHIP_PLATFORM=amd -DROCM_PATH="$PREFIX" -DHIP_PATH="$PREFIX" \
   "-DOFFLOAD_ARCH_STR=--offload-arch=$arch" > "$BUILD/configure.log" 2>&1) \
  || { tail -30 "$BUILD/configure.log"; echo "hip-tests: upstream's CMake configure failed ($BUILD/configure.log)"; exit 1; }

mapfile -t targets < <(python3 scripts/hip_tests.py targets "$CMAKE_BUILD" $families)
echo "building ${#targets[@]} targets with $JOBS jobs (a file that does not build counts its test cases as failed)"
t0=$SECONDS
make -C "$CMAKE_BUILD" -k -j"$JOBS" Main_Object KERNELS "${targets[@]}" > "$BUILD/build.log" 2>&1 || true
echo "built in $((SECONDS - t0)) s; compiler errors: $(grep -c 'error:' "$BUILD/build.log" || true) ($BUILD/build.log)"
STAGE=$BUILD/programs
rm -rf "$STAGE"
python3 scripts/hip_tests.py collect "$CMAKE_BUILD" "$SRC" "$STAGE" $families
# Upstream's list of tests AMD disables on Linux (its COMMON part), as its CMake would generate it.
cpp -P -DGITHASH='"pinned"' "$SRC/catch/hipTestMain/config/config_amd_linux" > "$STAGE/disabled.json"
cp scripts/hip_tests.py "$STAGE/"

if [ -n "$pack" ]; then
  rm -rf "$pack"; mkdir -p "$pack"
  find "$STAGE" -type f -perm -u+x -exec strip --strip-unneeded {} + 2>/dev/null || true
  tar -C "$STAGE" -cf - . | xz -T0 -6 > "$pack/hip-tests.tar.xz"
  cat > "$pack/run.sh" <<'EOF'
#!/usr/bin/env bash
# On the GPU machine: unpacks the hip-tests programs, starts a cuda-backend worker from the
# device pack (HIP_REMOTE_PACK, default ../device-pack beside this folder; its bin/hip-worker
# and lib/libamdhip64.so) and runs every test case. Results in $OUT (default /tmp/hip-tests-out).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PACK=${HIP_REMOTE_PACK:-$HERE/../device-pack}
OUT=${OUT:-/tmp/hip-tests-out}
mkdir -p "$OUT/programs"
tar -xJf "$HERE/hip-tests.tar.xz" -C "$OUT/programs"
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend "${BACKEND:-cuda}" > "$OUT/worker.stdout" 2> "$OUT/worker.log" &
WPID=$!
trap 'kill $WPID 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q "listening on" "$OUT/worker.stdout" 2>/dev/null && break; sleep 0.1; done
export HIP_REMOTE_WORKER=$(sed -n 's/.*listening on //p' "$OUT/worker.stdout" | head -1)
export HIP_CATCH_EXCLUDE_FILE=$OUT/programs/disabled.json
python3 "$OUT/programs/hip_tests.py" run "$OUT/programs" --jobs "${HIP_TESTS_JOBS:-4}" --timeout "${HIP_TESTS_TIMEOUT:-120}" --results "$OUT"
EOF
  du -sh "$pack"
  [ "${HIP_TESTS_KEEP:-0}" = 1 ] || rm -rf "$BUILD"
  exit 0
fi

export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HIP_CATCH_EXCLUDE_FILE=$STAGE/disabled.json
WPID=""
if [ -z "${HIP_REMOTE_WORKER:-}" ]; then
  # Kernels run on a host worker only with --allow-host-code: the programs' device sources
  # are compiled there (once each: the worker's compile cache keeps them for later test cases).
  # HIP_TESTS_HOST_CODE=0 leaves it off: every launch is then refused (hipErrorNotSupported).
  host_code=()
  [ "${HIP_TESTS_HOST_CODE:-1}" = 1 ] && host_code=(--allow-host-code)
  # HIP_TESTS_HOST_DEVICES=2: the multi-device cases run (a GPU machine's worker serves its GPUs).
  "$PREFIX/bin/hip-worker" --listen 127.0.0.1:0 --backend host --host-devices "${HIP_TESTS_HOST_DEVICES:-1}" "${host_code[@]}" --shm-socket none \
    > "$BUILD/worker.stdout" 2> "$BUILD/worker.log" &
  WPID=$!
  for _ in $(seq 100); do grep -q "listening on" "$BUILD/worker.stdout" 2>/dev/null && break; sleep 0.1; done
  HIP_REMOTE_WORKER=$(sed -n 's/.*listening on //p' "$BUILD/worker.stdout" | head -1)
  [ -n "$HIP_REMOTE_WORKER" ] || { cat "$BUILD/worker.log"; echo "hip-tests: the host worker did not start"; exit 1; }
  export HIP_REMOTE_WORKER
fi
trap '[ -n "$WPID" ] && kill "$WPID" 2>/dev/null; [ "${HIP_TESTS_KEEP:-0}" = 1 ] || rm -rf "$BUILD"' EXIT
t0=$SECONDS
python3 scripts/hip_tests.py run "$STAGE" --jobs "$JOBS" --timeout "${HIP_TESTS_TIMEOUT:-120}" --results "$RESULTS"
echo "ran in $((SECONDS - t0)) s; every test case: $RESULTS/results.tsv"
passed=$(grep -c $'\tpass\t' "$RESULTS/results.tsv" || true)
if [ "$families" = "$CI_FAMILIES" ] && [ "$passed" -lt "$CI_MIN_PASSED" ]; then
  echo "hip-tests: $passed test cases passed, fewer than the $CI_MIN_PASSED this commit passed before: a regression"
  exit 1
fi
if [ "${HIP_TESTS_STRICT:-0}" = 1 ] && grep -q $'\tfail\t' "$RESULTS/results.tsv"; then exit 1; fi
