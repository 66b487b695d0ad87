#!/usr/bin/env bash
# Runs each libFuzzer harness for a bounded time from its committed seed corpus and fails on
# the first crash, leak, timeout or out-of-memory. New inputs go to a work corpus under the
# build directory (the committed seeds stay small); crashing inputs are kept as
# $FUZZ_BUILD_DIR/artifacts/<harness>-crash-… and the command that reproduces one is printed.
#
# Usage: fuzz/run.sh [harness…]          (default: all)
# Env:   FUZZ_SECONDS per harness (default 60), FUZZ_BUILD_DIR (default .build/fuzz),
#        FUZZ_NICE (default 15: the fuzzers yield the CPU to builds and tests)
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${FUZZ_BUILD_DIR:-$ROOT/.build/fuzz}"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
NICE="${FUZZ_NICE:-15}"
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=(json jws jwks query request-body claims)

FUZZ_BUILD_DIR="$OUT" "$ROOT/fuzz/build.sh" "${harnesses[@]}" >/dev/null || { echo "fuzz: build failed" >&2; exit 1; }
mkdir -p "$OUT/artifacts"

# Swift's crash backtracer would take over the crash and can sit on it (seen: minutes, holding
# the log pipe open); libFuzzer and ASan report crashes themselves.
export SWIFT_BACKTRACE=enable=no

failed=()
for harness in "${harnesses[@]}"; do
    work="$OUT/corpus/$harness"
    mkdir -p "$work"
    # A JWS may be 16 KiB before it is refused for length; everything else stays small.
    max_len=4096
    [[ "$harness" == jws ]] && max_len=17000
    log="$OUT/$harness.log"
    # timeout: a hang outside libFuzzer's control (e.g. at exit) still ends the run.
    timeout $((SECONDS_EACH + 120)) nice -n "$NICE" "$OUT/$harness" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$harness-" \
        "$work" "$ROOT/fuzz/corpus/$harness" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [[ $status -eq 0 ]]; then
        echo "fuzz: $harness ok — ${runs:-?} runs in ${SECONDS_EACH}s (${per_second:-?}/s), ${coverage:-cov: ?}"
    else
        failed+=("$harness")
        echo "fuzz: $harness FAILED (exit $status) — see $log"
        grep -E 'ERROR: |Fatal error|precondition|SUMMARY' "$log" | head -5
        artifact=$(ls -t "$OUT/artifacts/$harness-"* 2>/dev/null | head -1)
        [[ -n "$artifact" ]] && echo "fuzz: reproduce with: $OUT/$harness $artifact"
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: crashes in: ${failed[*]}" >&2
    exit 1
fi
