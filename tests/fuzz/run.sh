#!/usr/bin/env bash
# Runs libFuzzer targets and prints one line of figures per target.
#   tests/fuzz/run.sh [--seconds S | --runs N] [--parallel P] BUILD_DIR [TARGET...]
#   tests/fuzz/run.sh SECONDS BUILD_DIR [TARGET...]          (the same as --seconds SECONDS)
# --seconds: S seconds per target (libFuzzer -max_total_time, default 60); --runs: N executions per
# target (-runs; `make fuzz FUZZ_RUNS=10000000` for the issue-12 report); both: whichever comes
# first; --parallel: P targets at a time
# (make fuzz-smoke: one per core). Targets: BUILD_DIR/bin/fuzz_*, by default all.
# Corpus: BUILD_DIR/fuzz/<name>/corpus (kept, grows run to run), seeded from BUILD_DIR/fuzz-seeds/<name>
# (generated) and tests/fuzz/seeds/<name> (checked in); dictionary tests/fuzz/<name>.dict if present.
# A crash, leak, timeout (30 s per input: a hang, not a slow shared machine) or out-of-memory input stops the run: exit status 1, the
# input saved as BUILD_DIR/fuzz/<name>/crash-* (replay: BUILD_DIR/bin/fuzz_<name> FILE).
# Each line is also appended to BUILD_DIR/fuzz/summary.log with the date and the commit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
limit=()
parallel=1
while (($#)); do
    case "$1" in
        --seconds) limit+=(-max_total_time="$2"); shift 2 ;;
        --runs) limit+=(-runs="$2"); shift 2 ;;
        --parallel) parallel="$2"; shift 2 ;;
        [0-9]*) limit+=(-max_total_time="$1"); shift ;;
        *) break ;;
    esac
done
((${#limit[@]})) || limit=(-max_total_time=60)
build="$1"
shift
targets=("$@")
if ((${#targets[@]} == 0)); then
    for binary in "$build"/bin/fuzz_*; do targets+=("$(basename "$binary")"); done
fi
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"

# The longest input a target mutates up to: twice or more its longest real seed. Longer inputs add
# no parser paths (every branch is reached by a key or a value, not by length), and a parse is
# linear or worse in the length, so a 16 KiB cap spent most executions on long junk.
max_len() {
    case "$1" in
        link) echo 1024 ;;                  # a fragment of every link key is under 1 KB
        import_deepspeed) echo 2048 ;;      # DeepSpeed JSON seeds: 689 bytes at most
        calibration) echo 2048 ;;           # calibration JSON seeds: 659 bytes at most
        *) echo 8192 ;;                     # config, HF config.json, launch lines, TOML: seeds <= 2.8 KB
    esac
}

# One target: its figures on stdout (one line), its log's tail on stderr when it fails.
run_target() {
    local target="$1" name="${1#fuzz_}"
    local work="$build/fuzz/$name"
    mkdir -p "$work/corpus"
    local seeds=() dict=()
    for dir in "$build/fuzz-seeds/$name" "$root/tests/fuzz/seeds/$name"; do
        [[ -d "$dir" ]] && seeds+=("$dir")
    done
    [[ -f "$root/tests/fuzz/$name.dict" ]] && dict=("-dict=$root/tests/fuzz/$name.dict")
    local log="$work/last-run.log" verdict ok=1
    local start
    start=$(date +%s)
    # -reload=0: one process per corpus, so libFuzzer's re-read of the corpus folder every second
    # finds nothing new (it was 7 % of a Megatron run's profile).
    if "$build/bin/$target" "${limit[@]}" -timeout=30 -rss_limit_mb=2048 -reload=0 -max_len="$(max_len "$name")" \
        -print_final_stats=1 -artifact_prefix="$work/" "${dict[@]}" "$work/corpus" "${seeds[@]}" >"$log" 2>&1; then
        verdict="0 crashes, leaks or timeouts"
    else
        verdict="FAILED (see $log and $work/crash-*)"
        ok=0
        tail -n 40 "$log" >&2
    fi
    local runs elapsed corpus peak
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    elapsed=$(($(date +%s) - start))
    corpus=$(find "$work/corpus" -type f | wc -l)
    local line="fuzz $name: $runs executions in ${elapsed} s ($((runs / (elapsed > 0 ? elapsed : 1)))/s), corpus $corpus inputs, peak RSS ${peak} MB: $verdict"
    echo "$line"
    echo "$(date -u +%FT%TZ) $commit ${limit[*]} $line" >>"$build/fuzz/summary.log"
    ((ok))
}

mkdir -p "$build/fuzz"
status=0
running=0
for target in "${targets[@]}"; do
    if ((running >= parallel)); then
        wait -n || status=1
        running=$((running - 1))
    fi
    run_target "$target" &
    running=$((running + 1))
done
while ((running > 0)); do
    wait -n || status=1
    running=$((running - 1))
done
exit $status
