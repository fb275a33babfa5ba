#!/usr/bin/env bash
# An A/B of one preload setting on a GPU machine, with a warm database:
# unmodified PyTorch (torchvision models without weights, batch 64
# training, graph-API path, fp16 channels-last), first iterations only. Per
# model and dtype: one `tunedb run --tune-after` process teaches the daemon
# the model's keys and waits for their searches; then ROUNDS rounds, each
# running, per benchmark setting, one fresh process plain and one with
# AB_ENV, in turn (so that drift hits both alike). Every warm process loads
# libtunedb_cudnn_call_timer.so (the split of its first iteration).
#
#   scripts/warm_ab.sh BUNDLE_DIR
#
# Environment: AB_ENV (required, e.g. "TUNEDB_PRELOAD_PLAN_CHECK=off"),
# PAIRS (default "mobilenet_v3_large:fp16 efficientnet_b0:fp16"), ROUNDS
# (default 3), BENCHES (default "0 1"), DEADLINE_S (default 540: no process
# starts after it), PY (default /opt/torch/.venv/bin/python), WORK (default
# /tmp/tunedb-ab), OUT (default ./out). Writes $OUT/ab-runs.jsonl, $OUT/ab.md
# (scripts/warm_ab.py), $OUT/tunedbd.log and per process $OUT/runs/*.
set -uo pipefail
B=$(cd "${1:?bundle folder}" && pwd)
AB_ENV=${AB_ENV:?the setting to compare, e.g. TUNEDB_PRELOAD_PLAN_CHECK=off}
PY=${PY:-/opt/torch/.venv/bin/python}
PAIRS=${PAIRS:-mobilenet_v3_large:fp16 efficientnet_b0:fp16}
ROUNDS=${ROUNDS:-3}
BENCHES=${BENCHES:-0 1}
DEADLINE_S=${DEADLINE_S:-540}
WORK=${WORK:-/tmp/tunedb-ab}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS="$OUT/ab-runs.jsonl"
mkdir -p "$OUT/runs" "$WORK"
START=$SECONDS
source "$HERE/gpu_daemon.sh"
source "$HERE/keep_row.sh"
start_bench_daemon ab

# one MODEL DTYPE BENCH VARIANT [ENV...]: a fresh warm process; its JSON
# line, with the variant, the preload's summary and the timer's sums, goes
# to $RUNS.
one() {
  local model=$1 dtype=$2 bench=$3 variant=$4; shift 4
  local base="$OUT/runs/$model-$dtype-bench$bench-${variant//[^a-zA-Z0-9]/_}-$round"
  env "LD_PRELOAD=$B/lib/libtunedb_cudnn_call_timer.so" "$@" \
    "$B/bin/tunedb" --address "$ADDR" run -- \
    "$PY" "$HERE/pytorch_dropin_bench.py" run --model "$model" --dtype "$dtype" \
    --benchmark "$bench" --label "tunedb warm" --iters 2 --blocks 1 --warmup-s 0 \
    > "$base.out" 2> "$base.err"
  keep_row "$base" "$?" "$(printf '%-20s %s bench=%s %-32s' "$model" "$dtype" "$bench" "$variant")" \
    "model_name=$model" "variant=$variant" "round=$round"
}

for pair in $PAIRS; do
  model=${pair%%:*} dtype=${pair#*:} round=0
  echo "=== $model $dtype ($((SECONDS - START)) s): learning and searching"
  "$B/bin/tunedb" --address "$ADDR" run --tune-after -- \
    "$PY" "$HERE/pytorch_dropin_bench.py" run --model "$model" --dtype "$dtype" \
    --benchmark 0 --label "tunedb cold" --iters 2 --blocks 1 --warmup-s 0 \
    > "$OUT/runs/$model-$dtype-cold.out" 2> "$OUT/runs/$model-$dtype-cold.err" ||
    { echo "  cold run failed"; tail -n 12 "$OUT/runs/$model-$dtype-cold.err"; continue; }
done
for round in $(seq 1 "$ROUNDS"); do
  for pair in $PAIRS; do
    model=${pair%%:*} dtype=${pair#*:}
    for bench in $BENCHES; do
      if ((SECONDS - START > DEADLINE_S)); then echo "  deadline: stopped"; break 3; fi
      one "$model" "$dtype" "$bench" plain
      one "$model" "$dtype" "$bench" "$AB_ENV" "$AB_ENV"
    done
  done
done
if [[ -s "$RUNS" ]]; then
  "$PY" "$HERE/warm_ab.py" "$RUNS" > "$OUT/ab.md" && cat "$OUT/ab.md"
else
  echo "no process finished"
fi
echo "done in $((SECONDS - START)) s"
