#!/usr/bin/env bash
# Runs libFuzzer targets for a while each and prints one line of figures per target.
#   tests/fuzz/run.sh SECONDS BUILD_DIR [TARGET...]     (targets: build_dir/bin/fuzz_*, by default all)
# Corpus: BUILD_DIR/fuzz/<name>/corpus (kept, grows run to run), seeded from BUILD_DIR/fuzz-seeds/<name>
# (generated) and tests/fuzz/seeds/<name> (checked in); dictionary tests/fuzz/<name>.dict if present.
# A crash, leak, timeout (10 s per input) or out-of-memory input stops the run: exit status 1, the
# input saved as BUILD_DIR/fuzz/<name>/crash-* (replay: BUILD_DIR/bin/fuzz_<name> FILE).
set -euo pipefail
seconds="$1"
build="$2"
shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
targets=("$@")
if ((${#targets[@]} == 0)); then
    for binary in "$build"/bin/fuzz_*; do targets+=("$(basename "$binary")"); done
fi
status=0
for target in "${targets[@]}"; do
    name="${target#fuzz_}"
    work="$build/fuzz/$name"
    mkdir -p "$work/corpus"
    seeds=()
    for dir in "$build/fuzz-seeds/$name" "$root/tests/fuzz/seeds/$name"; do
        [[ -d "$dir" ]] && seeds+=("$dir")
    done
    dict=()
    [[ -f "$root/tests/fuzz/$name.dict" ]] && dict=("-dict=$root/tests/fuzz/$name.dict")
    log="$work/last-run.log"
    start=$(date +%s)
    if "$build/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$work/" "${dict[@]}" "$work/corpus" "${seeds[@]}" >"$log" 2>&1; then
        verdict="0 crashes, leaks or timeouts"
    else
        verdict="FAILED (see $log and $work/crash-*)"
        status=1
        tail -n 40 "$log" >&2
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    elapsed=$(($(date +%s) - start))
    rate=$((runs / (elapsed > 0 ? elapsed : 1)))
    corpus=$(find "$work/corpus" -type f | wc -l)
    echo "fuzz $name: $runs executions in ${elapsed} s ($rate/s), corpus $corpus inputs: $verdict"
done
exit $status
