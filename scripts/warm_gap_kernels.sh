#!/usr/bin/env bash
# Where the warm first iteration's gap to PyTorch alone goes beyond the
# daemon's wait (issue: at the floor), on a GPU machine with only the bundle
# and PyTorch, on PyTorch's legacy cuDNN path as a new user runs it
# (gpu_run_common.sh). `tunedb run` first teaches the user's daemon the
# program, then fresh processes run interleaved, ROUNDS times: PyTorch alone
# and tunedb warm (one Warm call), each with CUDA's module loading LAZY (the
# default: a kernel's module loads at its first launch) and EAGER (every
# module loads at start, before the first iteration). Each row is one JSON
# line of scripts/first_iteration_kernels.py; $OUT/gap.md has the medians.
#
#   scripts/warm_gap_kernels.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODEL (default
# densenet121), DTYPE (default fp32), ROUNDS (default 3), OUT (default ./out).
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODEL=${MODEL:-densenet121}
DTYPE=${DTYPE:-fp32}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/gpu_run_common.sh"
mkdir -p "$OUT/runs"
exec > >(tee "$OUT/gap.log") 2>&1
as_new_user
n=0
row() {  # row LABEL LOADING [PREFIX...]: one fresh process
  local label=$1 loading=$2; shift 2
  n=$((n + 1))
  CUDA_MODULE_LOADING=$loading "$@" "$PY" "$HERE/first_iteration_kernels.py" \
    --model "$MODEL" --dtype "$DTYPE" --label "$label" \
    > "$OUT/runs/$n.out" 2> "$OUT/runs/$n.err"
  local rc=$? preload line
  preload=$(grep -E '^tunedb (run|preload)' "$OUT/runs/$n.err" | tr '\n' ' ')
  line=$(grep '^{' "$OUT/runs/$n.out" | tail -1)
  echo "--- $n: $label $loading: exit $rc; $line; $preload"
  [[ -n "$line" ]] && "$PY" -c 'import json, re, sys
r = json.loads(sys.argv[1]); m = re.search(r"(\d+) ms waited on the daemon", sys.argv[2])
r["daemon_wait_ms"] = int(m.group(1)) if m else None
print(json.dumps(r))' "$line" "$preload" >> "$OUT/rows.jsonl"
}
row "tunedb run (teaches)" LAZY "$B/bin/tunedb" run --
idle "$SOCK" 150
row "tunedb run (learns the keys)" LAZY "$B/bin/tunedb" run --
for r in $(seq "$ROUNDS"); do
  for loading in LAZY EAGER; do
    row "no tunedb" "$loading"
    row "tunedb warm" "$loading" "$B/bin/tunedb" run --
  done
done
"$B/bin/tunedb" run --daemon-stop
"$PY" - "$OUT/rows.jsonl" > "$OUT/gap.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    groups.setdefault((r["label"], r["module_loading"]), []).append(r)
cols = ["first_iter_s", "second_iter_s", "distinct_kernels",
        "kernel_launches", "gpu_ms", "cudnn_host_ms", "daemon_wait_ms"]
print("| row | loading | runs | " + " | ".join(cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for (label, loading), rs in groups.items():
    med = []
    for c in cols:
        v = [r[c] for r in rs if r.get(c) is not None]
        med.append("%g" % statistics.median(v) if v else "-")
    print(f"| {label} | {loading} | {len(rs)} | " + " | ".join(med) + " |")
PY
cat "$OUT/gap.md"
