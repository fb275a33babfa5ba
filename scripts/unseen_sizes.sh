#!/usr/bin/env bash
# Input sizes never stored, side by side (issue: shapes never seen), on a GPU
# machine. Unmodified PyTorch runs scripts/varying_shapes_bench.py (ResNet-50
# inference or training (MODE), fp16 channels-last, batch 16, benchmark on),
# one fresh process per row. First a daemon learns 12 sizes (A) with
# `tunedb run --tune-after`;
# its database is then copied, and each row of a round starts a fresh daemon
# on a copy, so every row finds the same records. Rows, ROUNDS times,
# interleaved:
#   stored                    sizes A, stored (the reference)
#   predicted                 12 other sizes (C), answered from the nearest
#                             stored sizes (the preload's default), misses
#                             noted, nothing searched while it runs
#   predicted, searched when idle
#                             the same, its misses searched by the daemon
#                             under --miss-searches when-idle (the default):
#                             against "predicted", the program's slowdown
#   predicted, horizon 0      TUNEDB_PRELOAD_COMPILE_HORIZON=0: build time
#                             not weighed (what a runtime-compiled choice
#                             costs an unseen size)
#   PyTorch benchmarks        sizes C, TUNEDB_PRELOAD_PREDICT=off (misses
#                             noted)
#   no tunedb, benchmark off  sizes C
# Then the GPU time of predicted plans: "predicted" once more with CUDA-graph
# replays of every size, its noted keys searched (`tunedb prewarm --file`),
# and sizes C again, stored, with replays. With BATCH64=1, last, the batch
# sequence 1-64 over three sizes: learned at 224, 384 and 544 on a daemon of
# its own, then stored (those sizes) and predicted (232, 392 and 552, never
# stored), BATCH_ROUNDS times interleaved, then PyTorch's benchmark without
# tunedb (232, 392, 552) once, unless BATCH_PYTORCH=0.
#
#   scripts/unseen_sizes.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODE (inference or
# training, default inference), SIZES_LEARN and SIZES_UNSEEN (default sizes A
# and C), ROUNDS (3), ROWS (the rows of a round, default "stored predicted
# idle horizon0 pytorch off"; "none" runs no round), PER_SHAPE (20), REPLAYS
# (100; 0 skips the GPU-time part), BATCH64 (0), BATCH_ROUNDS (1),
# BATCH_PYTORCH (1), WORK (default
# /tmp/tunedb-unseen), OUT (default ./out). Writes $OUT/runs.jsonl,
# $OUT/unseen.md, $OUT/replays.md, $OUT/tunedbd.log and each process's
# stderr under $OUT/err/.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
ROUNDS=${ROUNDS:-3}
PER_SHAPE=${PER_SHAPE:-20}
REPLAYS=${REPLAYS:-100}
BATCH64=${BATCH64:-0}
BATCH_ROUNDS=${BATCH_ROUNDS:-1}
BATCH_PYTORCH=${BATCH_PYTORCH:-1}
MODE=${MODE:-inference}
WORK=${WORK:-/tmp/tunedb-unseen}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$HERE/varying_shapes_bench.py"
source "$HERE/varying_sizes.sh"
LEARN=${SIZES_LEARN:-$SIZES_A}
UNSEEN=${SIZES_UNSEEN:-$SIZES_C}
mkdir -p "$OUT/err" "$WORK"
SOCK="$WORK/d.sock"
ADDR="unix:$SOCK"
source "$HERE/gpu_daemon.sh"
use_pytorch_cudnn
rm -f "$SOCK" "$WORK"/*.db* "$OUT/runs.jsonl"

# fresh NAME [FROM]: a daemon on a copy of the learned database (or of
# WORK/FROM.db), as WORK/NAME.db.
fresh() {
  local from=${2:-learned}
  [[ -f "$WORK/$from.db" ]] || { echo "no $WORK/$from.db to copy"; exit 1; }
  rm -f "$SOCK" "$WORK/$1".db*
  local f
  for f in "$WORK/$from".db*; do cp "$f" "${f/$from.db/$1.db}"; done
  start_gpu_daemon "$WORK/$1.db" "$SOCK" "$OUT/tunedbd.log"
}

# row LABEL SIZES [ENV=VALUE...] [-- tunedb run flags...]: one process
# under `tunedb run`; "--no-tunedb-on" or "--no-tunedb-off" as the only run
# flag runs it without tunedb, PyTorch's benchmark on or off. ROW_ARGS:
# more bench flags.
row() {
  local label=$1 sizes=$2; shift 2
  local env=() flags=() extra=() bench=1
  while [[ $# -gt 0 && $1 != -- ]]; do env+=("$1"); shift; done
  [[ ${1:-} == -- ]] && shift
  flags=("$@")
  local cmd=("$B/bin/tunedb" --address "$ADDR" run ${flags[@]+"${flags[@]}"} --)
  case "${flags[0]:-}" in
    --no-tunedb-on) cmd=() ;;
    --no-tunedb-off) cmd=() bench=0 ;;
  esac
  [[ -n "${ROW_ARGS:-}" ]] && read -ra extra <<< "$ROW_ARGS"
  cmd+=("$PY" "$BENCH" run --label "$label" --benchmark "$bench" --mode "$MODE"
        --sizes "$sizes" --per-shape "$PER_SHAPE" ${extra[@]+"${extra[@]}"})
  echo "--- $label ($(date -u +%H:%M:%S))"
  env ${env[@]+"${env[@]}"} "${cmd[@]}" \
    2> "$OUT/err/$(echo "$label-$(date +%s%N)" | tr ' ,' '__').err" |
    grep '^{' | tee -a "$OUT/runs.jsonl" | cut -c1-160
}

PREDICT=TUNEDB_PRELOAD_PREDICT=on
NOTED="TUNEDB_PRELOAD_MISSES_FILE=$WORK/noted.keys"

# The learned sizes: searched after the process, not while it runs.
if [[ ${ROWS:-} != none || $REPLAYS -gt 0 ]]; then
  start_gpu_daemon "$WORK/learned.db" "$SOCK" "$OUT/tunedbd.log"
  row "learning sizes" "$LEARN" -- --tune-after
  stop_gpu_daemon
fi

# one_round_row NAME: the row of that name, on a fresh daemon.
one_round_row() {
  case "$1" in
    stored) fresh r; row "stored" "$LEARN" ;;
    predicted) fresh r; row "predicted" "$UNSEEN" "$PREDICT" "$NOTED" ;;
    idle)
      fresh r; row "predicted, searched when idle" "$UNSEEN" "$PREDICT"
      "$B/bin/tunedb" --address "$ADDR" stats | grep -i -E "^searches" ;;
    horizon0)
      fresh r
      row "predicted, horizon 0" "$UNSEEN" "$PREDICT" "$NOTED" \
        TUNEDB_PRELOAD_COMPILE_HORIZON=0 ;;
    pytorch)
      fresh r
      row "PyTorch benchmarks" "$UNSEEN" "$NOTED" TUNEDB_PRELOAD_PREDICT=off ;;
    off) row "no tunedb, benchmark off" "$UNSEEN" -- --no-tunedb-off; return ;;
    *) echo "unknown row $1"; return ;;
  esac
  stop_gpu_daemon
}

if [[ ${ROWS:-} != none ]]; then
  for round in $(seq 1 "$ROUNDS"); do
    echo "=== round $round"
    for name in ${ROWS:-stored predicted idle horizon0 pytorch off}; do
      one_round_row "$name"
    done
  done
  "$PY" "$BENCH" summarize "$OUT/runs.jsonl" --reference stored |
    tee "$OUT/unseen.md"
fi

if [[ "$REPLAYS" -gt 0 ]]; then
echo "=== GPU time of predicted plans"
rm -f "$WORK/replay.keys"
fresh k
ROW_ARGS="--graph-replays $REPLAYS" row "predicted, replayed" "$UNSEEN" \
  "$PREDICT" "TUNEDB_PRELOAD_MISSES_FILE=$WORK/replay.keys"
"$B/bin/tunedb" --address "$ADDR" prewarm --file "$WORK/replay.keys" \
  > "$OUT/err/prewarm.log" 2>&1
tail -3 "$OUT/err/prewarm.log"
ROW_ARGS="--graph-replays $REPLAYS" row "stored, replayed" "$UNSEEN"
stop_gpu_daemon
"$PY" "$BENCH" replays "$OUT/runs.jsonl" --label "predicted, replayed" \
  --against "stored, replayed" | tee "$OUT/replays.md"
fi

if [[ "$BATCH64" == 1 ]]; then
  echo "=== batch sequence 1-64"
  SEQ=(--batches 1,2,4,8,16,32,64)
  start_gpu_daemon "$WORK/batches.db" "$SOCK" "$OUT/tunedbd.log"
  ROW_ARGS="${SEQ[*]}" row "learning batches" 224,384,544 -- --tune-after
  stop_gpu_daemon
  for round in $(seq 1 "$BATCH_ROUNDS"); do
    echo "=== batch round $round"
    fresh b batches
    ROW_ARGS="${SEQ[*]}" row "batches, stored" 224,384,544
    stop_gpu_daemon
    fresh b batches
    ROW_ARGS="${SEQ[*]}" row "batches, predicted" 232,392,552 "$PREDICT" "$NOTED"
    stop_gpu_daemon
  done
  if [[ "$BATCH_PYTORCH" == 1 ]]; then
    ROW_ARGS="${SEQ[*]}" row "batches, no tunedb" 232,392,552 -- --no-tunedb-on
  fi
  "$PY" "$BENCH" summarize "$OUT/runs.jsonl" --reference "batches, stored" |
    grep -E "^\| (run|batches)|^\|---" | tee "$OUT/batches.md"
fi
