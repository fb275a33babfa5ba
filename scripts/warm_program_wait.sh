#!/usr/bin/env bash
# What a warm program waits on the daemon (issue: at the floor), on a GPU
# machine with only the bundle and PyTorch. For each model (training, batch
# 64, unmodified PyTorch, scripts/pytorch_dropin_bench.py), `tunedb run`
# first teaches the user's daemon the program (its misses are searched while
# the GPU is idle), then fresh processes run interleaved, ROUNDS times:
#   PyTorch alone, benchmark off;
#   tunedb run, one Lookup per key (TUNEDB_WARM=0: before the Warm call);
#   tunedb run, the program's keys in one Warm call at its start (default).
# Each tunedb row's preload prints, at exit, the time it waited on the
# daemon and its answers from the Warm call; the rows are summarized into
# $OUT/wait.md (medians) with the first iterations.
#
#   scripts/warm_program_wait.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODELS (default
# "resnet50:fp16 densenet121:fp32"), ROUNDS (default 3), ITERS (default
# 20), OUT (default ./out).
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODELS=${MODELS:-"resnet50:fp16 densenet121:fp32"}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/gpu_run_common.sh"
BENCH="$HERE/pytorch_dropin_bench.py"
mkdir -p "$OUT/runs"
exec > >(tee "$OUT/wait.log") 2>&1
as_new_user
n=0
row() {  # row MODEL DTYPE LABEL BENCHMARK [PREFIX...]: one fresh process
  local model=$1 dtype=$2 label=$3 bench=$4; shift 4
  n=$((n + 1))
  "$@" "$PY" "$BENCH" run --model "$model" --dtype "$dtype" \
    --benchmark "$bench" --iters "$ITERS" --label "$label" \
    > "$OUT/runs/$n.out" 2> "$OUT/runs/$n.err"
  local rc=$? preload
  preload=$(grep -E '^tunedb (run|preload)' "$OUT/runs/$n.err" | tr '\n' ' ')
  local line
  line=$(grep '^{' "$OUT/runs/$n.out" | tail -1)
  echo "--- $n: $model $dtype, $label: exit $rc; $preload"
  [[ -n "$line" ]] && "$PY" - "$model" "$dtype" "$preload" "$line" \
      >> "$OUT/rows.jsonl" <<'PY'
import json, re, sys
model, dtype, preload, line = sys.argv[1:5]
row = json.loads(line)
row.update(model=model, dtype=dtype)
m = re.search(r"(\d+) ms waited on the daemon", preload)
row["daemon_wait_ms"] = int(m.group(1)) if m else None
m = re.search(r"(\d+) (?:answers? )?from (?:the )?warm", preload)
row["warm_answers"] = int(m.group(1)) if m else None
row["preload"] = preload
print(json.dumps(row))
PY
}
for spec in $MODELS; do
  model=${spec%%:*} dtype=${spec##*:}
  row "$model" "$dtype" "tunedb run (teaches)" 0 "$B/bin/tunedb" run --
  idle "$SOCK" 300
  row "$model" "$dtype" "tunedb run (learns the keys)" 0 "$B/bin/tunedb" run --
done
for r in $(seq "$ROUNDS"); do
  for spec in $MODELS; do
    model=${spec%%:*} dtype=${spec##*:}
    row "$model" "$dtype" "no tunedb, benchmark off" 0
    row "$model" "$dtype" "tunedb, a Lookup per key" 0 \
      env TUNEDB_WARM=0 "$B/bin/tunedb" run --
    row "$model" "$dtype" "tunedb, one Warm" 0 "$B/bin/tunedb" run --
  done
done
"$B/bin/tunedb" --address "unix:$SOCK" stats
cp "$XDG_CACHE_HOME/tunedb/tunedbd.log" "$OUT/" 2>/dev/null
"$B/bin/tunedb" run --daemon-stop
"$PY" - "$OUT/rows.jsonl" > "$OUT/wait.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = {}
for r in rows:
    keys.setdefault((r["model"], r["dtype"], r["label"]), []).append(r)
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
print("| model | row | runs | first iteration, median (s) | daemon wait, median (ms) | warm answers |")
print("|---|---|---|---|---|---|")
for (model, dtype, label), rs in keys.items():
    fi = med([r.get("first_iter_s") for r in rs])
    dw = med([r.get("daemon_wait_ms") for r in rs])
    wa = med([r.get("warm_answers") for r in rs])
    fmt = lambda x, f: "-" if x is None else f % x
    print(f"| {model} {dtype} | {label} | {len(rs)} | {fmt(fi, '%.3f')} | {fmt(dw, '%.0f')} | {fmt(wa, '%.0f')} |")
PY
cat "$OUT/wait.md"
