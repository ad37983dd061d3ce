#!/usr/bin/env bash
# Byte-for-byte comparison of two trainclock binaries: the check that a refactor changes no output.
#   scripts/compare_outputs.sh OLD_BIN NEW_BIN [--keep DIR]
# Runs both over every model preset x a few GPUs x every precision preset in three layouts
# (compare --json predicts each precision the GPU runs), predict --json/--csv/table/--timeline,
# search --top 5, validate (--json,
# --precision-blind), link encode/decode round trips and bad input. Each command's stdout, stderr and
# exit code go to one transcript per binary; the transcripts must be identical (wall-clock figures
# of search are masked). Exit 0: identical; 1: the first differences are printed.
set -u -o pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 OLD_BIN NEW_BIN [--keep DIR]" >&2
    exit 2
fi
OLD=$1 NEW=$2
KEEP=${4:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap '[[ -z "$KEEP" ]] && rm -rf "$WORK"' EXIT

models=$(cd "$ROOT/presets/models" && ls *.json | sed 's/\.json$//')
precisions=$(cd "$ROOT/presets/precisions" && ls *.json | sed 's/\.json$//')
gpus="h100-sxm a100-sxm4-80gb v100-sxm2-32gb mi300x b200"
# Transformer-XL base (the relative-position, memory and adaptive-softmax paths; presets/validation).
txl='{"architecture":"decoder","layers":16,"hidden":512,"heads":8,"kv_heads":8,"ffn_hidden":2048,"vocab":267735,"activation":"relu","norm":"layernorm","tied_embeddings":true,"memory_len":192,"relative_position":true,"softmax_head":20000}'

# One command per line: the arguments after the binary (eval'd, so quotes group).
cmds="$WORK/commands"
{
    for m in $models; do
        # compare predicts every precision preset the GPU runs: one process per layout.
        for g in $gpus; do
            echo "compare --json --model $m --gpu $g --gpus 8 --seq 2048 --gbs 64"
            echo "compare --json --model $m --gpu $g --gpus 64 --tp 4 --pp 2 --sp --zero 1 --recompute selective --gbs 256 --mbs 2 --tokens 1e12"
            echo "compare --json --model $m --gpu $g --gpus 256 --tp 8 --pp 4 --cp 2 --schedule interleaved --vpp 2 --zero 3 --recompute full --seq 4096 --gbs 512 --overlap-tp --no-flash"
        done
        echo "predict --model $m --gpu h100-sxm --gpus 64 --tp 8 --pp 2 --sp --zero 2 --gbs 256 --tokens 1e12"
        echo "predict --csv --model $m --gpu a100-sxm4-80gb --gpus 16 --pp 4 --schedule gpipe --gbs 64 --price 3"
        echo "predict --json --timeline --model $m --gpu h100-sxm --gpus 16 --tp 2 --pp 4 --schedule interleaved --vpp 2 --gbs 32"
        echo "predict --json --model $m --gpu h100-sxm --precision fp8-mixed --gpus 64 --tp 4 --ep 4 --zero 1 --optimizer sgd --gbs 128 --attention-kernel flash3"
        echo "predict --json --model $m --gpu v100-sxm2-32gb --gpus 8 --optimizer lamb --precision-blind --gbs 64"
        echo "link encode --model $m --gpu a100-sxm4-80gb --gpus 32 --tp 4 --pp 2 --sp --zero 1 --mbs 2 --recompute full --tokens 3e11"
    done
    for p in $precisions; do
        for flash in --flash --no-flash; do
            for r in none selective full; do
                echo "predict --json --model '$txl' --gpu a100-sxm4-40gb --precision $p --gpus 8 --seq 192 --gbs 256 --mbs 32 --optimizer lamb-per-tensor --recompute $r $flash"
            done
        done
    done
    for g in h100-sxm a100-sxm4-80gb v100-sxm2-32gb mi300x; do
        echo "compare --model llama3-70b --gpu $g --gpus 256 --tp 8 --pp 4 --sp --zero 1 --gbs 512 --tokens 1e12"
        echo "compare --json --model gpt3-175b --gpu $g --gpus 1024 --tp 8 --pp 8 --gbs 1536 --recompute selective"
    done
    echo "search --top 5 --threads 1 --model llama3-8b --gpu h100-sxm --gpus 64"
    echo "search --top 5 --threads 2 --json --model llama3-70b --gpu h100-sxm --gpus 256 --seq 4096 --gbs 512 --precision all"
    echo "search --top 5 --threads 2 --csv --model mixtral-8x7b --gpu h100-sxm --gpus 64 --gbs 256"
    echo "search --top 5 --threads 1 --objective cost --model gpt3-13b --gpu a100-sxm4-80gb --gpus 128 --gbs 512 --tokens 3e11"
    echo "search --top 5 --threads 1 --json --model t5-3b --gpu v100-sxm2-32gb --gpus 32 --gbs 256 --seq 512"
    echo "search --top 5 --threads 1 --model gpt3-175b --gpu a100-sxm4-40gb --gpus 16 --gbs 64"
    echo "search --top 3 --threads 1 --json --model '$txl' --gpu a100-sxm4-40gb --gpus 8 --seq 192 --gbs 256 --precision all"
    echo "validate"
    echo "validate --json"
    echo "validate --json --precision-blind"
    echo "validate --worst 20 --source vtrain"
    echo "presets"
    for k in model gpu node precision; do echo "presets $k"; done
    echo "link decode 'v=1&m=llama3-70b&g=h100-sxm&N=64&p=bf16-mixed&tp=8'"
    echo "link encode --model '$txl' --gpu a100-sxm4-40gb --gpus 8 --seq 192 --calibration '{\"kernel_launch_s\":2e-6,\"gpus\":{\"h100-sxm\":{\"memory_efficiency\":0.8}}}'"
    # Bad input: messages and exit codes.
    echo "predict --model llama3-70b --gpu h100-sxm --gpus 64 --tp 3"
    echo "predict --model llama3-70b --gpu a100-sxm4-80gb --gpus 8 --precision fp8-mixed"
    echo "predict --model nosuchmodel --gpu h100-sxm"
    echo "predict --model llama3-8b --gpu h100-sxm --gpus 8 --calibration '{\"memory_efficiency\":1.5}'"
    echo "predict --model llama3-8b --gpu h100-sxm --gpus 8 --optimizer adagrad"
    echo "predict --model llama3-8b --gpu h100-sxm --gpus 8 --calibration '{\"gemm_sustained\":0.9}'"
    echo "link decode 'v=1&m=nosuch'"
} > "$cmds"

# Link round trips: decode(encode(config)) must predict the same as the flags (both binaries).
roundtrip() {  # BIN SCRATCH
    local bin=$1 rt=$2
    while read -r m; do
        frag=$("$bin" link encode --model "$m" --gpu h100-sxm --gpus 64 --tp 4 --pp 2 --sp --zero 1 --tokens 1e12 2>&1)
        echo "== roundtrip $m: $frag"
        "$bin" link decode "$frag" > "$rt" 2>&1; echo "rc=$?"
        cat "$rt"
        "$bin" predict --json --config "$rt" 2>&1 | sed "s|$rt|CONFIG|"; echo "rc=${PIPESTATUS[0]}"
    done <<< "$models"
}

run_all() {  # BIN OUT
    local bin=$1 out=$2
    while IFS= read -r line; do
        echo "== $line"
        eval "\"$bin\" $line" 2>&1
        echo "rc=$?"
    done < "$cmds" > "$out"
    roundtrip "$bin" "$out.rt.json" >> "$out"
    # Wall-clock figures of search differ run to run.
    sed -i -E 's/searched in [0-9.]+ (ms|s)/searched in X/; s/"wall_s": ?[-0-9.e+]+/"wall_s":X/' "$out"
}

run_all "$OLD" "$WORK/old.txt" &
run_all "$NEW" "$WORK/new.txt" &
wait
n=$(grep -c '^== ' "$WORK/old.txt")
[[ -n "$KEEP" ]] && mkdir -p "$KEEP" && cp "$WORK/old.txt" "$WORK/new.txt" "$cmds" "$KEEP/"
if cmp -s "$WORK/old.txt" "$WORK/new.txt"; then
    echo "identical: $n commands, $(wc -c < "$WORK/old.txt") bytes of output"
    exit 0
fi
# Commands whose output differs, then the first lines of the diff.
python3 - "$WORK/old.txt" "$WORK/new.txt" <<'EOF'
import sys
def blocks(path):
    out, key = {}, None
    for line in open(path, errors="replace"):
        if line.startswith("== "):
            key = line[3:].rstrip("\n"); out[key] = []
        elif key is not None:
            out[key].append(line)
    return out
a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
diff = [k for k in a if a.get(k) != b.get(k)]
print(f"DIFFERENT: {len(diff)} of {len(a)} commands")
for k in diff[:40]: print("  " + k[:200])
EOF
diff "$WORK/old.txt" "$WORK/new.txt" | head -40
exit 1
