#!/usr/bin/env bash
# The model table of the issue on runtime-compiled engines, on a GPU
# machine: unmodified PyTorch (torchvision models without weights, batch 64
# training, cuDNN's default graph-API path; fp16 runs channels-last) for
# each model and dtype, five fresh processes in this order:
#   1. no tunedb, benchmark off: PyTorch's heuristic picks; also computes
#      the fp64 truth of the first iteration (without cuDNN) that every row's
#      gradients are measured against;
#   2. no tunedb, benchmark on: PyTorch's own benchmark;
#   3. tunedb cold, benchmark off, `tunedb run --tune-after`: the daemon
#      learns the model's keys and searches them once the process has exited
#      (the search's time is read from the daemon's log);
#   4. tunedb warm, benchmark on;
#   5. tunedb warm, benchmark off.
# Rows 1, 2, 4 and 5 load libtunedb_cudnn_call_timer.so (the split of the
# first iteration) and time the iteration's GPU work as CUDA-graph replays.
#
#   scripts/model_table.sh BUNDLE_DIR
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODELS (default the
# issue's eight), DTYPES (default "fp16 fp32"), DEADLINE_S (default 560: no
# model is started later than this many seconds minus SLOT_S, default 100,
# after the script's start, so a device call's time limit is not hit
# half-way), WORK (database and references, default /tmp/tunedb-table),
# OUT (default ./out), PAIRS (e.g. "resnet50:fp16 densenet121:fp32": these
# model:dtype pairs instead of MODELS x DTYPES) and EXTRA_WARM_ENV (e.g.
# "TUNEDB_PRELOAD_PLAN_CHECK=off": two more warm rows, benchmark on and off,
# run with it and labelled "tunedb warm $EXTRA_WARM_ENV", interleaved with
# the plain ones; model_table.py's table leaves them out). Writes $OUT/table-runs.jsonl, $OUT/table.md and
# $OUT/table.json (scripts/model_table.py), $OUT/tunedbd.log,
# $OUT/records.jsonl and per process $OUT/runs/*.{out,err}.
set -uo pipefail
B=$(cd "${1:?bundle folder}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODELS=${MODELS:-resnet50 densenet121 mobilenet_v3_large efficientnet_b0 convnext_tiny regnet_y_1_6gf resnext50_32x4d shufflenet_v2_x1_0}
DTYPES=${DTYPES:-fp16 fp32}
DEADLINE_S=${DEADLINE_S:-560}
SLOT_S=${SLOT_S:-100}
WORK=${WORK:-/tmp/tunedb-table}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS="$OUT/table-runs.jsonl"
mkdir -p "$OUT/runs" "$WORK"
START=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
source "$HERE/gpu_daemon.sh"
source "$HERE/keep_row.sh"
start_bench_daemon table

# row MODEL DTYPE LABEL BENCH [bench flags...] [-- tunedb run flags...]:
# one fresh process; its JSON line (with model_name, the preload's summary
# and the timer's sums) goes to $RUNS.
row() {
  local model=$1 dtype=$2 label=$3 bench=$4; shift 4
  local flags=() pre=() timer=()
  while [[ $# -gt 0 && $1 != -- ]]; do flags+=("$1"); shift; done
  if [[ $# -gt 0 ]]; then
    shift
    pre=("$B/bin/tunedb" --address "$ADDR" run "$@" --)
  fi
  [[ $label != "tunedb cold" ]] &&
    timer=(env "LD_PRELOAD=$B/lib/libtunedb_cudnn_call_timer.so" ${ROW_ENV:-})
  local base="$OUT/runs/$model-$dtype-${label// /_}-bench$bench"
  local t0=$SECONDS
  ${timer[@]+"${timer[@]}"} ${pre[@]+"${pre[@]}"} "$PY" "$HERE/pytorch_dropin_bench.py" run \
    --model "$model" --dtype "$dtype" --benchmark "$bench" --label "$label" \
    ${flags[@]+"${flags[@]}"} > "$base.out" 2> "$base.err"
  local rc=$?
  keep_row "$base" "$rc" "$(printf '%-22s %s %-12s bench=%s' "$model" "$dtype" "$label" "$bench")" \
    "model_name=$model" "exit_code=$rc" "wall_s=$((SECONDS - t0))"
}

# The searches the daemon logged after line $1 of its log: "SECONDS COUNT".
searched_since() {
  tail -n "+$(($1 + 1))" "$OUT/tunedbd.log" |
    grep -o 'searched [0-9a-f]* on device [0-9]* in [0-9.]* ms' |
    awk '{ ms += $(NF - 1); n++ } END { printf "%.1f %d\n", ms / 1000, n }'
}

timed=(--iters 40 --blocks 10 --warmup-s 1 --graphed)
if [[ -z "${PAIRS:-}" ]]; then
  PAIRS=$(for m in $MODELS; do for d in $DTYPES; do printf '%s:%s ' "$m" "$d"; done; done)
fi
EXTRA_WARM_ENV=${EXTRA_WARM_ENV:-}
for pair in $PAIRS; do
  model=${pair%%:*} dtype=${pair#*:}
  if ((SECONDS - START > DEADLINE_S - SLOT_S)); then
    echo "  $model $dtype: not started (deadline)"; continue
  fi
  truth="$WORK/truth-$model-$dtype.pt"
  ref="$WORK/ref-$model-$dtype.pt"
  echo "=== $model $dtype ($((SECONDS - START)) s)"
  row "$model" "$dtype" "no tunedb" 0 "${timed[@]}" --save "$ref" --save64 "$truth" \
    --ref64 "$truth" || continue
  row "$model" "$dtype" "no tunedb" 1 "${timed[@]}" --ref "$ref" --ref64 "$truth"
  lines=$(wc -l < "$OUT/tunedbd.log")
  # The cold process's own timing is not the point: few iterations.
  row "$model" "$dtype" "tunedb cold" 0 --iters 2 --blocks 1 \
    --warmup-s 0 -- --tune-after
  read -r s n < <(searched_since "$lines")
  # The search's time, added to the cold row just written.
  "$PY" -c 'import json, sys
rows = open(sys.argv[1]).read().splitlines()
r = json.loads(rows[-1])
if r["label"] != "tunedb cold": sys.exit(0)  # the cold row failed
r["search_s"] = float(sys.argv[2]); r["searches"] = int(sys.argv[3])
rows[-1] = json.dumps(r); open(sys.argv[1], "w").write("\n".join(rows) + "\n")' "$RUNS" "$s" "$n"
  echo "  searched $n keys in $s s"
  for bench in 1 0; do
    log=(); ((bench)) && log=(--log calls)
    row "$model" "$dtype" "tunedb warm" "$bench" "${timed[@]}" --ref "$ref" \
      --ref64 "$truth" -- ${log[@]+"${log[@]}"}
    [[ -n "$EXTRA_WARM_ENV" ]] &&
      ROW_ENV=$EXTRA_WARM_ENV row "$model" "$dtype" "tunedb warm $EXTRA_WARM_ENV" \
        "$bench" "${timed[@]}" --ref "$ref" --ref64 "$truth" -- ${log[@]+"${log[@]}"}
  done
  rm -f "$ref" "$truth"
done

"$PY" "$HERE/model_table.py" "$RUNS" "$OUT" || true
"$B/bin/tunedb" --address "$ADDR" export -o "$OUT/records.jsonl" || true
echo "done in $((SECONDS - START)) s"
