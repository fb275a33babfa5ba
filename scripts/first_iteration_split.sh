#!/usr/bin/env bash
# Where a first iteration goes (issue: runtime-compiled engines), on a GPU
# machine: unmodified PyTorch (torchvision models built without weights,
# batch 64 training: forward and backward) on cuDNN's default (graph API)
# path, each row a fresh process with libtunedb_cudnn_call_timer.so loaded,
# and without tunedb unless TUNEDB=warm. The first iteration is split into
# heuristics queries, plan builds of runtime-compiled engines, other plan
# builds, other finalizes and the rest (the benchmark's own timing runs and
# everything else; with benchmark off the rest is the plain iteration).
#
#   scripts/first_iteration_split.sh BUNDLE_DIR
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODELS (default the
# eight below), DTYPES (default "fp16 fp32"; fp16 runs channels-last),
# BENCH (default "1 0"), TUNEDB=warm (rows under `tunedb run` against the
# daemon at ADDR, which must already hold the keys), OUT (default ./out).
# Writes $OUT/split-runs.jsonl and $OUT/split.md.
set -uo pipefail
B=$(cd "${1:?bundle folder}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODELS=${MODELS:-resnet50 densenet121 mobilenet_v3_large efficientnet_b0 convnext_tiny regnet_y_1_6gf resnext50_32x4d shufflenet_v2_x1_0}
DTYPES=${DTYPES:-fp16 fp32}
BENCH=${BENCH:-1 0}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=$(mktemp -d)  # each row's stdout and stderr; failures' tails go to OUT
mkdir -p "$OUT"
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
pre=()
[[ "${TUNEDB:-}" == warm ]] && pre=("$B/bin/tunedb" --address "${ADDR:?ADDR}" run --)
label="no tunedb"
[[ "${TUNEDB:-}" == warm ]] && label="tunedb warm"
for model in $MODELS; do
  for dtype in $DTYPES; do
    for bench in $BENCH; do
      base="$RUNS/$model-$dtype-bench$bench-${TUNEDB:-none}"
      LD_PRELOAD="$B/lib/libtunedb_cudnn_call_timer.so" \
        ${pre[@]+"${pre[@]}"} "$PY" "$HERE/pytorch_dropin_bench.py" run \
        --model "$model" --dtype "$dtype" --benchmark "$bench" --iters 10 \
        --blocks 2 --warmup-s 0.5 --label "$label" > "$base.out" 2> "$base.err"
      json=$(grep '^{' "$base.out" | tail -1)
      timed=$(grep '^{"cudnn_call_timer"' "$base.err" | tail -1)
      line=$(grep '^tunedb preload:' "$base.err" | tail -1)
      if [[ -z "$json" ]]; then
        { echo "$model $dtype bench=$bench FAILED"; tail -20 "$base.err"; } |
          tee -a "$OUT/split-failures.log"
        continue
      fi
      "$PY" -c 'import json, sys
r = json.loads(sys.argv[1]); r["model_name"] = sys.argv[2]; r["preload"] = sys.argv[4]
if sys.argv[3]: r["timer"] = json.loads(sys.argv[3])["cudnn_call_timer"]
print(json.dumps(r))' "$json" "$model" "$timed" "$line" >> "$OUT/split-runs.jsonl"
      echo "$model $dtype bench=$bench ${TUNEDB:-none}: $(grep -o '"first_iter_s": [0-9.]*' "$base.out" | tail -1) ${line}"
    done
  done
done
"$PY" "$HERE/first_iteration_split.py" "$OUT/split-runs.jsonl" > "$OUT/split.md"
cat "$OUT/split.md"
