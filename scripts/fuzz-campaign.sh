#!/usr/bin/env bash
# A fuzzing campaign in two steps, so the machine that fuzzes needs no Rust toolchain:
#
#   scripts/fuzz-campaign.sh build [--sanitizer none|address] [--out DIR]
#       Builds every target of fuzz/ (cargo +nightly fuzz build, release with debug
#       assertions) and gathers a self-contained campaign directory DIR (default
#       fuzz/campaign-<sanitizer>): bin/<target> (stripped), corpus/<target>/ (the seeds),
#       regressions/<target>/ (kept crash inputs) and a copy of this script.
#       `none` (the default) builds without a sanitizer: several times faster per execution;
#       Rust's bounds checks, overflow checks (debug assertions) and the targets' own
#       assertions still fire. `address` adds AddressSanitizer (for the few unsafe paths).
#
#   DIR/fuzz-campaign.sh run DIR [--seconds N | --total-seconds N | --runs N] [--jobs N]
#                                [--targets a,b,..] [--work W]
#       On any Linux x86-64 machine: first replays every kept regression of each target
#       (must pass), then fuzzes each target in turn with libFuzzer's fork mode on `--jobs`
#       processes (default: every core), for `--seconds` each (default 60), or an equal share
#       of `--total-seconds`, or until `--runs` executions in all. Crashes, timeouts and
#       out-of-memory inputs do not stop a target (-ignore_crashes=1 ...): they are counted
#       and kept in W/artifacts/<target>/. The grown corpus is W/corpus/<target>/ (W defaults
#       to a fresh directory under $TMPDIR; it is kept).
#
# Output: one parseable line per target and a total, e.g.
#   FUZZ target=frame status=ok seconds=80 execs=91234567 exec_per_s=1140432 crashes=0
#        timeouts=0 ooms=0 corpus_before=150 corpus_after=1432 cov=2263 ft=9876
#        regressions=0 jobs=16
#   FUZZ-TOTAL targets=6 execs=... crashes=0 failed=none
# Exit status: 0 when no target crashed (timeouts and OOMs are reported, not failures),
# 1 on a crash or a failing regression, 2 on bad usage.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }

build() {
    local sanitizer=none out=""
    while [ $# -gt 0 ]; do
        case $1 in
            --sanitizer) sanitizer=$2; shift 2 ;;
            --out) out=$2; shift 2 ;;
            *) usage ;;
        esac
    done
    case $sanitizer in none | address) ;; *) usage ;; esac
    cd "$(dirname "$0")/.."
    local root=$PWD
    out=${out:-$root/fuzz/campaign-$sanitizer}
    cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
    # One target directory per sanitizer, so switching does not rebuild everything
    # (FUZZ_TARGET_DIR overrides it: fuzz/target is cargo-fuzz's own).
    local target_dir=${FUZZ_TARGET_DIR:-$root/fuzz/target-$sanitizer}
    case $target_dir in /*) ;; *) target_dir=$root/$target_dir ;; esac
    local start=$SECONDS
    cargo +nightly fuzz build -s "$sanitizer" --target-dir "$target_dir"
    echo "fuzz-campaign: built in $((SECONDS - start)) s (sanitizer $sanitizer)"
    local triple
    triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
    rm -rf "$out"
    mkdir -p "$out/bin" "$out/corpus" "$out/regressions"
    for target in $(cargo +nightly fuzz list); do
        cp "$target_dir/$triple/release/$target" "$out/bin/$target"
        strip --strip-debug "$out/bin/$target" 2>/dev/null || true
        mkdir -p "$out/corpus/$target" "$out/regressions/$target"
        if [ -d "fuzz/corpus/$target" ]; then cp -R "fuzz/corpus/$target/." "$out/corpus/$target/"; fi
        if [ -d "fuzz/regressions/$target" ]; then cp -R "fuzz/regressions/$target/." "$out/regressions/$target/"; fi
    done
    cp "$0" "$out/fuzz-campaign.sh"
    echo "$sanitizer" >"$out/SANITIZER"
    echo "fuzz-campaign: $out ($(du -sh "$out" | cut -f1)); run with: $out/fuzz-campaign.sh run $out --total-seconds 480"
}

# The last libFuzzer status line of a log, fork mode ("#N: cov: ...") or not ("#N ...").
last_status() { grep -aE '^#[0-9]+:? ' "$1" | grep -a 'cov:' | tail -n 1 || true; }
field() { sed -nE "s/.*[ ]$2:? ([0-9]+).*/\1/p" <<<"$1"; }

run() {
    [ $# -ge 1 ] || usage
    local dir=$1; shift
    local seconds=60 total="" runs="" jobs targets="" work=""
    jobs=$(nproc 2>/dev/null || echo 1)
    while [ $# -gt 0 ]; do
        case $1 in
            --seconds) seconds=$2; shift 2 ;;
            --total-seconds) total=$2; shift 2 ;;
            --runs) runs=$2; shift 2 ;;
            --jobs) jobs=$2; shift 2 ;;
            --targets) targets=${2//,/ }; shift 2 ;;
            --work) work=$2; shift 2 ;;
            *) usage ;;
        esac
    done
    [ -d "$dir/bin" ] || { echo "fuzz-campaign: $dir/bin missing (make it with: scripts/fuzz-campaign.sh build)" >&2; exit 2; }
    [ -n "$targets" ] || targets=$(ls "$dir/bin")
    local count
    count=$(wc -w <<<"$targets")
    if [ -n "$total" ]; then seconds=$((total / count)); fi
    work=${work:-$(mktemp -d "${TMPDIR:-/tmp}/fuzz-campaign.XXXXXX")}
    mkdir -p "$work"
    echo "fuzz-campaign: $count targets, ${runs:+$runs runs}${runs:-$seconds s} each, $jobs jobs, work in $work ($(cat "$dir/SANITIZER" 2>/dev/null || echo ?) sanitizer)"

    local total_execs=0 failed=() lines=()
    for target in $targets; do
        local bin=$dir/bin/$target corpus=$work/corpus/$target artifacts=$work/artifacts/$target log=$work/$target.log
        mkdir -p "$corpus" "$artifacts"
        if [ -d "$dir/corpus/$target" ]; then cp -R "$dir/corpus/$target/." "$corpus/"; fi
        local before regressions=0 status=ok
        before=$(find "$corpus" -type f | wc -l)
        # Kept crash inputs first: each must run clean.
        if [ -d "$dir/regressions/$target" ] && [ -n "$(ls -A "$dir/regressions/$target")" ]; then
            regressions=$(find "$dir/regressions/$target" -type f | wc -l)
            if ! "$bin" -runs=0 "$dir/regressions/$target"/* >"$work/$target.regressions.log" 2>&1; then
                status=REGRESSION
                tail -n 40 "$work/$target.regressions.log"
            fi
        fi
        local limit=(-max_total_time="$seconds")
        if [ -n "$runs" ]; then limit=(-runs="$runs"); fi
        local start=$SECONDS
        "$bin" "$corpus" -fork="$jobs" "${limit[@]}" -timeout=10 -rss_limit_mb=4096 \
            -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
            -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || true
        local took=$((SECONDS - start)) last execs cov ft crashes timeouts ooms after rate
        last=$(last_status "$log")
        execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
        execs=${execs:-0}
        cov=$(field "$last" cov)
        ft=$(field "$last" ft)
        crashes=$(find "$artifacts" -name 'crash-*' | wc -l)
        timeouts=$(find "$artifacts" -name 'timeout-*' | wc -l)
        ooms=$(find "$artifacts" -name 'oom-*' | wc -l)
        after=$(find "$corpus" -type f | wc -l)
        rate=$((execs / (took > 0 ? took : 1)))
        if [ "$crashes" -gt 0 ] && [ "$status" = ok ]; then status=CRASH; fi
        [ "$status" = ok ] || failed+=("$target")
        total_execs=$((total_execs + execs))
        local line="FUZZ target=$target status=$status seconds=$took execs=$execs exec_per_s=$rate crashes=$crashes timeouts=$timeouts ooms=$ooms corpus_before=$before corpus_after=$after cov=${cov:-?} ft=${ft:-?} regressions=$regressions jobs=$jobs"
        echo "$line"
        lines+=("$line")
    done
    echo "fuzz-campaign summary (logs, grown corpora and artifacts in $work):"
    printf '%s\n' "${lines[@]}"
    local failed_list=none
    if [ "${#failed[@]}" -gt 0 ]; then failed_list=$(IFS=,; echo "${failed[*]}"); fi
    echo "FUZZ-TOTAL targets=$count execs=$total_execs failed=$failed_list work=$work"
    [ "${#failed[@]}" -eq 0 ]
}

case ${1:-} in
    build) shift; build "$@" ;;
    run) shift; run "$@" ;;
    *) usage ;;
esac
