#!/usr/bin/env bash
# Fuzz smoke test: builds the cargo-fuzz crate in fuzz/ and runs every target for N seconds
# (first argument, default 20), one after another, each over a temporary copy of its seed
# corpus fuzz/corpus/<target>/ (the committed corpus never grows).
#
#   scripts/fuzz-smoke.sh [SECONDS]
#
# Needs a nightly toolchain (libFuzzer instrumentation uses -Z flags). Without one it prints a
# SKIP line and exits 77 (scripts/test.sh counts that as skipped, not passed). With nightly but no cargo-fuzz it installs cargo-fuzz first
# (`cargo install cargo-fuzz --locked`, about 1 minute on a 2-core VM). Exits 1 if any target
# crashes; the crashing input is left in fuzz/artifacts/<target>/ (see docs/FUZZING.md).
set -euo pipefail

secs="${1:-20}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
    echo "usage: $0 [SECONDS]  (positive integer, default 20)" >&2
    exit 2
fi

cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "SKIP: fuzz smoke: no nightly Rust toolchain (rustup toolchain install nightly)"
    exit 77
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz smoke: cargo-fuzz missing; installing it (cargo install cargo-fuzz --locked)"
    start=$(date +%s)
    if ! cargo install cargo-fuzz --locked; then
        echo "SKIP: fuzz smoke: cargo-fuzz could not be installed"
        exit 77
    fi
    echo "fuzz smoke: cargo-fuzz installed in $(( $(date +%s) - start ))s"
fi

start=$(date +%s)
cargo +nightly fuzz build
echo "fuzz smoke: fuzz crate built in $(( $(date +%s) - start ))s"

work="$(mktemp -d "${TMPDIR:-/tmp}/hip-remote-fuzz-smoke.XXXXXX")"
trap 'rm -rf "$work"' EXIT

failed=()
summary=()
for target in $(cargo +nightly fuzz list); do
    corpus="$work/$target"
    mkdir -p "$corpus"
    if [ -d "fuzz/corpus/$target" ]; then
        cp -R "fuzz/corpus/$target/." "$corpus/"
    fi
    seeds=$(find "$corpus" -type f | wc -l)
    log="$work/$target.log"
    # Kept crash inputs (docs/FUZZING.md) first: each must run clean.
    if [ -d "fuzz/regressions/$target" ] && [ -n "$(ls -A "fuzz/regressions/$target")" ]; then
        if ! cargo +nightly fuzz run "$target" fuzz/regressions/"$target"/* -- -runs=0 >"$log" 2>&1; then
            failed+=("$target (regression)")
            tail -n 60 "$log"
        fi
    fi
    echo "fuzz smoke: $target for ${secs}s over $seeds seeds"
    if cargo +nightly fuzz run "$target" "$corpus" -- \
        -max_total_time="$secs" -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed+=("$target")
        tail -n 60 "$log"
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    size=$(find "$corpus" -type f | wc -l)
    summary+=("$(printf '%-10s %-5s execs=%-10s exec/s=%-8s corpus=%s (seeds %s)' \
        "$target" "$status" "${execs:-?}" "${rate:-?}" "$size" "$seeds")")
done

echo "fuzz smoke summary (${secs}s per target):"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAIL: fuzz smoke: crash in ${failed[*]} (inputs in fuzz/artifacts/)"
    exit 1
fi
echo "fuzz smoke: ${#summary[@]} targets, 0 crashes"
