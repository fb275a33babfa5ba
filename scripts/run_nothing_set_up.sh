#!/usr/bin/env bash
# `tunedb run` as a new user runs it on a GPU machine (docs/preload.md, "The
# daemon `tunedb run` starts"): only the bundle and PyTorch, no daemon, no
# flag. The same training program (ResNet-50, batch 64, fp16 channels-last,
# forward and backward, legacy path, scripts/pytorch_dropin_bench.py) runs
# as fresh processes, interleaved:
#   PyTorch alone (benchmark on), `tunedb run -- python ...` (the first: it
#   starts the user's daemon, which searches the program's misses once the
#   GPU is idle), PyTorch alone again, `tunedb run -- python ...` (the
#   second), the same through the daemon's address given by hand (the warm
#   database as an expert runs it), a third plain `tunedb run`, and PyTorch
#   alone with the benchmark off.
#
#   scripts/run_nothing_set_up.sh [BUNDLE_DIR]    # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), ITERS (default 40),
# OUT (default ./out). Writes $OUT/runs.jsonl, $OUT/dropin.md (the bench's
# summary), $OUT/run.log, the daemon's log and its status, and the
# report and coverage of the records the runs left (report.html,
# coverage.txt).
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
ITERS=${ITERS:-40}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/gpu_run_common.sh"
BENCH="$HERE/pytorch_dropin_bench.py"
mkdir -p "$OUT/runs"
exec > >(tee "$OUT/run.log") 2>&1
as_new_user
n=0
row() {  # row LABEL BENCHMARK [PREFIX...]: one fresh process
  local label=$1 bench=$2; shift 2
  n=$((n + 1))
  echo "--- $n: $label, benchmark=$bench"
  "$@" "$PY" "$BENCH" run --dtype fp16 --benchmark "$bench" --iters "$ITERS" \
    --graphed --label "$label" > "$OUT/runs/$n.out" 2> "$OUT/runs/$n.err"
  echo "    exit $?; $(grep -E '^tunedb (run|preload)' "$OUT/runs/$n.err" | tr '\n' ' ')"
  grep '^{' "$OUT/runs/$n.out" | tail -1 | tee -a "$OUT/runs.jsonl"
}
row "legacy, no tunedb" 1
row "legacy, tunedb run (first)" 1 "$B/bin/tunedb" run --
"$B/bin/tunedb" run --daemon-status
idle "$SOCK"
row "legacy, no tunedb" 1
row "legacy, tunedb run (second)" 1 "$B/bin/tunedb" run --
row "legacy, tunedb warm (address given)" 1 "$B/bin/tunedb" --address "unix:$SOCK" run --
row "legacy, tunedb run (third)" 1 "$B/bin/tunedb" run --
row "legacy, no tunedb" 0
"$B/bin/tunedb" run --daemon-status
# What the program's records look like in a report (tunedb report).
"$B/bin/tunedb" --address "unix:$SOCK" report -o "$OUT/report.html" \
  -m resnet50 --batch 64 --dtype fp16 --layout nhwc
"$B/bin/tunedb" --address "unix:$SOCK" coverage -m resnet50 --batch 64 \
  --dtype fp16 --layout nhwc --no-predict > "$OUT/coverage.txt"
echo "coverage exit $?"
cp "$XDG_CACHE_HOME/tunedb/tunedbd.log" "$OUT/" 2>/dev/null
"$B/bin/tunedb" run --daemon-stop
"$PY" "$BENCH" summarize "$OUT/runs.jsonl" "$OUT" > /dev/null
grep -A30 'first iteration, median' "$OUT/dropin.md" | head -20
