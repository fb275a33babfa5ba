#!/usr/bin/env bash
# Searching again on a fresh daemon (issue: runtime-compiled engines), on a
# GPU machine: does a daemon that shares a database with a warm one search
# the same keys for less, by loading the plans the first search kept
# instead of compiling them?
#   1. a daemon (the warm one) learns each model's keys from one
#      unmodified PyTorch process (`tunedb run --tune-after`: batch 64
#      training, graph-API path) and searches them: the first searches;
#   2. a second daemon is started, fresh (new process, new workers, nothing
#      compiled), on the same database file; the warm one stays up, idle;
#   3. the fresh daemon searches every stored key again
#      (`tunedb prewarm --force`): the second searches.
# scripts/search_again_ratio.py then sums both, for keys whose leader is
# runtime-compiled and for the others.
#
#   scripts/search_again_fresh.sh BUNDLE_DIR
#
# Environment: PAIRS (default "mobilenet_v3_large:fp16
# efficientnet_b0:fp16"), PY (default /opt/torch/.venv/bin/python), WORK
# (default /tmp/tunedb-again), OUT (default ./out). Writes under $OUT:
# tunedbd-warm.log, tunedbd-fresh.log, records.jsonl (after the first
# searches), records-again.jsonl, prewarm-again.txt and ratio.txt.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:?bundle folder}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
PAIRS=${PAIRS:-mobilenet_v3_large:fp16 efficientnet_b0:fp16}
WORK=${WORK:-/tmp/tunedb-again}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" "$WORK"
START=$SECONDS
phase() { echo "=== $* ($((SECONDS - START)) s)"; }
source "$HERE/gpu_daemon.sh"
start_bench_daemon again
WARM=$DAEMON WARM_ADDR=$ADDR
mv "$OUT/tunedbd.log" "$OUT/tunedbd-warm.log"

phase "first searches, on the warm daemon"
for pair in $PAIRS; do
  model=${pair%%:*} dtype=${pair#*:}
  "$B/bin/tunedb" --address "$WARM_ADDR" run --tune-after -- \
    "$PY" "$HERE/pytorch_dropin_bench.py" run --model "$model" --dtype "$dtype" \
    --benchmark 0 --label learn --iters 2 --blocks 1 --warmup-s 0 \
    > "$WORK/learn-$model-$dtype.out" 2> "$WORK/learn-$model-$dtype.err" ||
    { echo "  $model $dtype: the learning run failed"; tail -n 12 "$WORK/learn-$model-$dtype.err"; }
done
"$B/bin/tunedb" --address "$WARM_ADDR" export -o "$OUT/records.jsonl"
"$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["key"])' "$OUT/records.jsonl" > "$WORK/keys.txt"
echo "  $(wc -l < "$WORK/keys.txt") keys stored"

phase "a fresh daemon on the same database"
SOCK="$WORK/fresh.sock" ADDR="unix:$WORK/fresh.sock"
rm -f "$SOCK"
start_gpu_daemon "$WORK/again.db" "$SOCK" "$OUT/tunedbd-fresh.log"
trap 'kill -TERM $DAEMON $WARM 2>/dev/null; wait $DAEMON $WARM 2>/dev/null' EXIT
"$B/bin/tunedb" --address "$ADDR" devices > /dev/null ||
  { echo "the fresh daemon did not come up"; exit 1; }

phase "second searches, on the fresh daemon"
"$B/bin/tunedb" --address "$ADDR" prewarm --file "$WORK/keys.txt" --format text \
  --force --no-progress > "$OUT/prewarm-again.txt" 2>&1
tail -n 4 "$OUT/prewarm-again.txt"
"$B/bin/tunedb" --address "$ADDR" export -o "$OUT/records-again.jsonl"
phase "done"
"$PY" "$HERE/search_again_ratio.py" --again "$OUT/records-again.jsonl" "$OUT/records.jsonl" \
  "$OUT/tunedbd-warm.log" "$OUT/tunedbd-fresh.log" | tee "$OUT/ratio.txt"
