#!/usr/bin/env bash
# Varying input sizes on a GPU machine (issue: shapes never seen):
# unmodified PyTorch runs scripts/varying_shapes_bench.py (ResNet-50
# inference by default) over 12 resolutions, one fresh process per row:
#   no tunedb, benchmark on / off;
#   tunedb, sizes stored      (sizes A, after a cold run taught them);
#   tunedb, other sizes       (sizes B, never stored, TUNEDB_PRELOAD_PREDICT=off:
#                              PyTorch benchmarks);
#   tunedb, other sizes, predicted (sizes C, never stored, answered from
#                              the nearest stored sizes, the preload's default).
# The cold row runs with `tunedb run --tune-after`: its misses are searched
# after it exits, not on the GPU it measures on. The rows of unseen sizes
# leave theirs to the daemon, which searches them while the GPU is idle.
#
#   scripts/varying_shapes.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODEL (resnet50),
# DTYPE (fp16), MODE (inference|training), BATCHES (default 16; e.g.
# 1,2,4,8,16,32,64), PER_SHAPE (20), WORK (default /tmp/tunedb-shapes), OUT
# (default ./out). Writes $OUT/runs.jsonl, $OUT/shapes.md, $OUT/tunedbd.log.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODEL=${MODEL:-resnet50}
DTYPE=${DTYPE:-fp16}
MODE=${MODE:-inference}
BATCHES=${BATCHES:-16}
PER_SHAPE=${PER_SHAPE:-20}
WORK=${WORK:-/tmp/tunedb-shapes}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$HERE/varying_shapes_bench.py"
source "$HERE/varying_sizes.sh"
mkdir -p "$OUT" "$WORK"
SOCK="$WORK/d.sock"
ADDR="unix:$SOCK"
rm -f "$SOCK" "$WORK"/shapes.db* "$OUT/runs.jsonl"
source "$HERE/gpu_daemon.sh"
use_pytorch_cudnn
start_gpu_daemon "$WORK/shapes.db" "$SOCK" "$OUT/tunedbd.log"

# one LABEL BENCHMARK SIZES [tunedb run flags... --]
one() {
  local label=$1 bench=$2 sizes=$3; shift 3
  local pre=()
  if [[ $# -gt 0 ]]; then pre=("$B/bin/tunedb" --address "$ADDR" run "$@"); fi
  echo "--- $label ($(date -u +%H:%M:%S))"
  ${pre[@]+"${pre[@]}"} "$PY" "$BENCH" run --label "$label" --model "$MODEL" \
    --dtype "$DTYPE" --mode "$MODE" --benchmark "$bench" --sizes "$sizes" \
    --batches "$BATCHES" --per-shape "$PER_SHAPE" 2> "$OUT/$(echo "$label" | tr ' ,' '__').err" |
    grep '^{' | tee -a "$OUT/runs.jsonl" | cut -c1-200
}

one "no tunedb, benchmark on" 1 "$SIZES_A"
one "no tunedb, benchmark off" 0 "$SIZES_A"
one "tunedb cold" 1 "$SIZES_A" --tune-after --
one "tunedb, sizes stored" 1 "$SIZES_A" --
# The last two rows leave their misses to the daemon's default policy
# (searched while no program uses the GPU) instead of waiting for them.
TUNEDB_PRELOAD_PREDICT=on one "tunedb, other sizes, predicted" 1 "$SIZES_C" --
TUNEDB_PRELOAD_PREDICT=off one "tunedb, other sizes" 1 "$SIZES_B" --
"$PY" "$BENCH" summarize "$OUT/runs.jsonl" | tee "$OUT/shapes.md"
"$B/bin/tunedb" --address "$ADDR" stats | head -12
