#!/usr/bin/env bash
# Ranks of one job agree while their keys are tuned (docs/pins.md, "Ranks
# without a pin: jobs"), on a GPU machine: RANKS processes of unmodified
# PyTorch training (pin_repro_bench.py: one seeded iteration, benchmark on)
# under one daemon whose database starts empty, started STAGGER seconds
# apart, so that the daemon's searches for the first ranks' misses finish
# between the later ranks' lookups. Each rank records the answers it got
# into its own pin (tunedb run --pin, recording). Two rounds, each on a
# fresh database and daemon:
#   job       tunedb run --job ID: every rank gets the job's first answer;
#   no job    without --job: each rank gets what the database holds when it
#             asks.
# Per round: distinct hashes ($OUT/pins.md) and the slots the ranks were
# answered differently ($OUT/agree-job.json, $OUT/agree-no-job.json).
#
#   scripts/job_agree.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODEL (resnet50),
# DTYPE (fp16), RANKS (8), STAGGER (3 seconds), WORK (/tmp/tunedb-job),
# OUT (./out).
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODEL=${MODEL:-resnet50}
DTYPE=${DTYPE:-fp16}
RANKS=${RANKS:-8}
STAGGER=${STAGGER:-3}
WORK=${WORK:-/tmp/tunedb-job}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$HERE/pin_repro_bench.py"
mkdir -p "$OUT" "$WORK"
rm -f "$OUT/runs.jsonl"
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
[[ -n "$PIP_CUDNN" ]] || { echo "no nvidia.cudnn package next to PyTorch"; exit 1; }
source "$HERE/gpu_daemon.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader

# round NAME [JOB]: a fresh daemon and database, RANKS staggered ranks.
round() {
  local name=$1 sock="$WORK/$1.sock" pids=() job=()
  [[ -n ${2:-} ]] && job=(--job "$2")
  mkdir -p "$OUT/$name/err"
  rm -f "$sock" "$WORK/$name.db"*
  start_gpu_daemon "$WORK/$name.db" "$sock" "$OUT/$name/tunedbd.log"
  echo "=== $name ($(date -u +%H:%M:%S))"
  for k in $(seq 1 "$RANKS"); do
    "$B/bin/tunedb" --address "unix:$sock" run ${job[@]+"${job[@]}"} \
      --pin "$OUT/$name/rank$k.pin" -- \
      "$PY" "$BENCH" run --label "$MODEL-$DTYPE, $name #$k" --model "$MODEL" \
      --dtype "$DTYPE" --benchmark 1 2> "$OUT/$name/err/rank$k.err" |
      grep '^{' >> "$OUT/runs.jsonl" &
    pids+=($!)
    sleep "$STAGGER"
  done
  wait "${pids[@]}"
  for k in $(seq 1 "$RANKS"); do tail -1 "$OUT/$name/err/rank$k.err" | cut -c1-300; done
  "$PY" "$BENCH" agree "$OUT/$name"/rank*.pin > "$OUT/agree-$name.json"
  head -c 400 "$OUT/agree-$name.json"; echo
  "$B/bin/tunedb" --address "unix:$sock" stats | head -8
  kill -TERM "$DAEMON"; wait "$DAEMON"
}

round job "job-$(date +%s)"
round no-job
"$PY" "$BENCH" summarize "$OUT/runs.jsonl" "$OUT/pins.md" > "$OUT/pins.json"
cat "$OUT/pins.md"
