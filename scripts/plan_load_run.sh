#!/usr/bin/env bash
# tunedb_plan_load_bench on a GPU machine (bench/gpu/plan_load_bench.cc):
# builds the runtime-compiled engines' plans of KEYS in one process, then
# loads their serialized forms in a new one, and in a third
# (tunedb_plan_adopt_probe) sets them on plan descriptors made as a
# framework makes them, with PyTorch's cuDNN (its pip package, else the
# system's).
#
#   scripts/plan_load_run.sh BUNDLE_DIR KEYS.txt OUT_DIR
#
# KEYS: graph-API keys, one per line (scripts/pytorch_dropin.sh leaves the
# ones a PyTorch run taught the daemon in $WORK/keys-DTYPE.txt). Writes
# OUT_DIR/plans.jsonl (the serialized plans), OUT_DIR/build.txt,
# OUT_DIR/load.txt, OUT_DIR/plan_load.json, OUT_DIR/adopt.txt and
# OUT_DIR/blob0.json (the first plan, to read). Environment: PER_KEY (plans per
# key, default 2), PY (the Python
# whose nvidia.cudnn package to use; default /opt/torch/.venv/bin/python).
set -uo pipefail
B=$(cd "$1" && pwd)
KEYS=$2
OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT"
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
export LD_LIBRARY_PATH="$B/lib:$FIRST${EXTRA:+:$EXTRA}"
BENCH="$B/tests/tunedb_plan_load_bench"
"$BENCH" build --keys="$KEYS" --out="$OUT/plans.jsonl" ${PER_KEY:+--per-key=$PER_KEY} |
  tee "$OUT/build.txt"
"$BENCH" load --plans="$OUT/plans.jsonl" --json="$OUT/plan_load.json" |
  tee "$OUT/load.txt"
"$B/tests/tunedb_plan_adopt_probe" --plans="$OUT/plans.jsonl" --dump="$OUT" \
  > "$OUT/adopt.txt" 2>&1
echo "adopt probe exit $?"; cat "$OUT/adopt.txt"
