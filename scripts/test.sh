#!/usr/bin/env bash
# hip-remote's whole test suite, for a fresh Debian/Ubuntu machine with rustup (CI runs this
# through .ci/run). Installs what it needs, runs every check that can run here, and says
# plainly what it skipped and why. Exit status: non-zero if anything that ran failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
failures=()
skips=()
passed=0
step() { printf '\n==> %s\n' "$*"; }
# Exit status by which a check says it could not run here (automake's convention); it prints
# the reason as its last line starting with "SKIP: ".
SKIP_STATUS=77
run() { # run NAME CMD...: records a failure instead of stopping, so every check reports
  local name=$1; shift
  step "$name"
  local t0=$SECONDS log rc
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ]; then
    echo "--- ok: $name ($((SECONDS - t0)) s)"; passed=$((passed + 1))
  elif [ "$rc" = "$SKIP_STATUS" ]; then
    local why
    why=$(sed -n 's/^.*SKIP: //p' "$log" | tail -n 1)
    skip "$name: ${why:-no reason given}"
  else
    echo "--- FAILED: $name (exit $rc)"; failures+=("$name")
  fi
  rm -f "$log"
}
skip() { echo "--- SKIP: $*"; skips+=("$*"); }
# Tests that skip a check from inside (no compiler, no RDMA device, a kernel feature missing)
# append their reason here (transport_core::test_skip); the summary counts each as a skip.
export HIP_REMOTE_TEST_SKIPS
HIP_REMOTE_TEST_SKIPS=$(mktemp)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

step "system packages"
need_pkgs=()
command -v cc >/dev/null || need_pkgs+=(gcc)
command -v c++ >/dev/null || need_pkgs+=(g++)
command -v pkg-config >/dev/null || need_pkgs+=(pkg-config)
# CMake projects against an installed layout, both HIP styles (tests/tests/cmake.rs).
command -v cmake >/dev/null || need_pkgs+=(cmake)
# The Windows client check compiles ring's C (TLS) for the target.
command -v x86_64-w64-mingw32-gcc >/dev/null || need_pkgs+=(gcc-mingw-w64-x86-64)
# Debian's hipcc (ROCm 5.2) builds real AMD code objects for the metadata test
# (code-object/tests/metadata.rs); without it only the checked-in ones are tested.
command -v hipcc >/dev/null || need_pkgs+=(hipcc)
# venvs (hip-python, ptxas below).
python3 -c 'import ensurepip' 2>/dev/null || need_pkgs+=(python3-venv)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" \
    || skip "could not install ${need_pkgs[*]}"
fi
command -v hipcc >/dev/null \
  || skip "hipcc not installable here: AMD code objects were tested from the checked-in ones only, not built afresh"

# ptxas from PyPI (nvidia-cuda-nvcc-cu12: ptxas and libdevice, no GPU or driver needed)
# assembles the PTX our hipcc emits (tests/tests/hipcc_device.rs), so a PTX the driver would
# refuse fails here, not first on a GPU machine.
if [ -z "${HIP_REMOTE_PTXAS:-}" ]; then
  step "ptxas (pip: nvidia-cuda-nvcc-cu12)"
  PTXAS_VENV=${HIP_REMOTE_PTXAS_VENV:-$ROOT/.venv-ptxas}
  if { [ -x "$PTXAS_VENV/bin/pip" ] || python3 -m venv "$PTXAS_VENV"; } \
     && "$PTXAS_VENV/bin/pip" install -q --disable-pip-version-check nvidia-cuda-nvcc-cu12; then
    HIP_REMOTE_PTXAS=$(ls "$PTXAS_VENV"/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas 2>/dev/null | head -1)
    [ -n "$HIP_REMOTE_PTXAS" ] && export HIP_REMOTE_PTXAS && echo "ptxas: $HIP_REMOTE_PTXAS"
  else
    echo "could not install nvidia-cuda-nvcc-cu12: hipcc's PTX is checked without ptxas (a counted skip)"
  fi
fi

step "rust targets"
for t in thumbv7em-none-eabihf aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu aarch64-unknown-linux-gnu; do
  rustup target list --installed 2>/dev/null | grep -qx "$t" || rustup target add "$t" >/dev/null 2>&1 || echo "could not add target $t"
done

if cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt >/dev/null 2>&1; then
  run "rustfmt (workspace and fuzz/)" bash -c "cargo fmt --all --check && cargo fmt --manifest-path fuzz/Cargo.toml --all --check"
else
  skip "rustfmt not installable here: formatting was not checked"
fi
run "build workspace" cargo build --workspace --all-targets
# The attack suite (tests/tests/attack.rs, `mod attack`) is a check of its own.
run "cargo test (workspace)" cargo test --workspace --no-fail-fast -- --skip attack::
# bench --profile needs the CLI's non-default `profiling` feature (pprof).
run "bench --profile (hip-remote --features profiling)" cargo test -p hip-remote --features profiling --test bench_quick bench_sections_and_profiles
run "attack suite (hostile peers, a frozen worker)" cargo test -p hip-remote-tests --test attack
if cargo clippy --version >/dev/null 2>&1 || rustup component add clippy >/dev/null 2>&1; then
  run "clippy (workspace, all targets, warnings denied)" cargo clippy --workspace --all-targets -- -D warnings
else
  skip "clippy not installable here: lints were not checked"
fi

if rustup target list --installed 2>/dev/null | grep -qx thumbv7em-none-eabihf; then
  run "proto-core builds for thumbv7em-none-eabihf (no_std, no alloc)" cargo build -p proto-core --target thumbv7em-none-eabihf
  run "proto-core + defmt builds for thumbv7em-none-eabihf" cargo build -p proto-core --target thumbv7em-none-eabihf --features defmt
else
  skip "thumbv7em-none-eabihf target not installable here: the no_std build was not checked"
fi
# The Windows client linked (MinGW-w64) and run under Wine against Linux workers, over TCP and
# TLS; the macOS client linked by zig's Mach-O linker, its exports and C programs checked.
run "Windows client: C programs, hip-remote.exe under Wine over TCP and TLS" bash scripts/windows-test.sh
run "macOS client: dylibs and programs linked (zig), exports and C programs checked" bash scripts/macos-link.sh
# The release archives of the Linux targets (scripts/dist.sh, dev profile): x86_64 from the
# workspace build above as it is, unpacked and run (C programs against its lib/ and include/,
# through its own worker); aarch64 cross-built with zig and its contents checked. Windows' and
# macOS' archives are checked by the two steps above, from the builds they make anyway.
dist_linux() { # dist_linux TARGET [dist.sh options] [-- dist-check options]
  local version archive target=$1 dist_opts=() check_opts=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do dist_opts+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  check_opts=("$@")
  version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
  archive=dist/hip-remote-$version-$target.tar.gz
  bash scripts/dist.sh "$target" --profile dev "${dist_opts[@]}" && bash scripts/dist-check.sh "$archive" "${check_opts[@]}"
  local rc=$?
  rm -f "$archive"
  return "$rc"
}
run "release archive, x86_64 Linux: contents; C programs built and run against it" dist_linux x86_64-unknown-linux-gnu --no-build -- --run
run "release archive, aarch64 Linux (zig): built, contents checked" dist_linux aarch64-unknown-linux-gnu

if [ -x scripts/fuzz-smoke.sh ] || [ -f scripts/fuzz-smoke.sh ]; then
  run "fuzz smoke" bash scripts/fuzz-smoke.sh "${FUZZ_SECONDS:-20}"
fi

run "hip-python client tests" bash scripts/python-test.sh
# CuPy for ROCm, unchanged, on an installed layout against a host worker (docs/CUPY.md).
run "CuPy for ROCm client tests" bash scripts/cupy-test.sh
# ROCm's own conformance tests (ROCm/hip-tests catch/unit, pinned) built by upstream's CMake
# with our hipcc and run on a host worker: the families that fit CI's time, with the pass, fail
# and skip counts printed (docs/CONFORMANCE.md; every family: scripts/hip-tests.sh --all).
run "ROCm hip-tests (upstream CMake, host worker)" bash scripts/hip-tests.sh
# llama.cpp's ggml HIP backend, unchanged (the copy in the PyPI sdist llama-cpp-python, pinned
# by hash), configured by its own CMake against an install and two of its HIP objects built
# with our hipcc; the whole build and test-backend-ops take hours here (docs/CONFORMANCE.md).
run "llama.cpp's ggml HIP backend: configure and two objects (smoke)" bash scripts/llama-cpp.sh ci
# The PyPI amdsmi package, rocminfo and rocm_agent_enumerator over a host worker (docs/PROBES.md).
run "amdsmi, rocminfo and rocm_agent_enumerator" bash scripts/probes-test.sh

# The chained worker: worker A runs --backend hip on our own libamdhip64.so, whose
# calls go to host worker B; the C conformance programs, the examples, the HIP samples
# (tests/hip/samples, built with our hipcc) and hip-python all go through A. A skipped
# hip-python part makes the check a skip (saying the Rust part passed).
chained_suites() {
  HIP_REMOTE_TEST_CHAIN=1 cargo test -p hip-remote-tests --test c_programs --test examples --test hip_samples || return 1
  local rc=0
  HIP_REMOTE_TEST_CHAIN=1 bash scripts/python-test.sh || rc=$?
  if [ "$rc" = "$SKIP_STATUS" ]; then
    echo "SKIP: C conformance, examples and HIP samples passed through the chain; hip-python did not run"
  fi
  return "$rc"
}
run "C conformance, examples, HIP samples and hip-python through a chained hip-backend worker" chained_suites

# The systemd unit, with ExecStart pointed at the built worker (verify wants an executable).
if command -v systemd-analyze >/dev/null; then
  unit_dir=$(mktemp -d)
  sed "s#^ExecStart=/usr/local/bin/hip-worker#ExecStart=${CARGO_TARGET_DIR:-$ROOT/target}/debug/hip-worker#" deploy/hip-worker.service >"$unit_dir/hip-worker.service"
  run "systemd unit (systemd-analyze verify)" systemd-analyze verify "$unit_dir/hip-worker.service"
  rm -rf "$unit_dir"
else
  skip "systemd-analyze not here: deploy/hip-worker.service was not verified"
fi

# deploy/kubernetes/ against the Kubernetes API schema (kubernetes-validate from PyPI) and
# against each other and the worker's flags; a counted skip only when the validator cannot be
# installed.
run "Kubernetes manifests (kubernetes-validate --strict, references)" bash scripts/check-manifests.sh

if [ -f scripts/rdma-test.sh ]; then
  run "RDMA over real verbs (Soft-RoCE guest)" bash scripts/rdma-test.sh
fi

skip "GPU tests: no GPU on this machine (scripts/device-test.sh runs them on a GPU host)"
while IFS= read -r reason; do
  [ -n "$reason" ] && skips+=("inside a test: $reason")
done < <(sort -u "$HIP_REMOTE_TEST_SKIPS")
rm -f "$HIP_REMOTE_TEST_SKIPS"

echo
echo "==================== summary ===================="
for s in "${skips[@]}"; do echo "skipped: $s"; done
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "checks: $passed passed, ${#failures[@]} failed, ${#skips[@]} skipped"
[ ${#failures[@]} -eq 0 ]
