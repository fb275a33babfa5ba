#!/usr/bin/env bash
# Pins on a GPU machine (docs/pins.md): unmodified PyTorch training
# (scripts/pin_repro_bench.py: one seeded iteration, batch 64, fp16
# channels-last or fp32, benchmark on) hashed per process: its output, its
# first convolution's weight gradient and all conv weight gradients. Per
# model and dtype:
#   no tunedb                 PROCS processes started together;
#   pin, recorded             one process under `tunedb run --pin` against a
#                             daemon (warm where IMPORT gave its records;
#                             its misses are tuned after it, --tune-after);
#   pin, followed             PROCS processes started together under the pin,
#                             with no daemon at the address given;
#   the same three with torch.backends.cudnn.deterministic = True;
#   timed, warm / pinned      the pin recorded again (warm now), then TIMED
#                             rounds of one process each, in turn: the warm
#                             database without a pin, the pin with no
#                             daemon, the pin with the daemon (which gives
#                             the stored plans of pinned configs); each
#                             also times its steady state as CUDA-graph
#                             replays (GPU time of the plans it chose).
#
#   scripts/pin_repro.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODELS (default
# "resnet50 shufflenet_v2_x1_0"), DTYPES ("fp16 fp32"), PROCS (8), CONCURRENT
# (PROCS: how many of them run at once on the one GPU), TIMED (3),
# DETS ("0 1": the rows with deterministic off, on), NO_PLAIN (1: no rows
# without tunedb), IMPORT (record files, space separated, imported first),
# FOLLOW (a folder of pins made elsewhere, e.g. on another machine: only
# PROCS followers of each, no recording, no timed rows), WORK
# (/tmp/tunedb-pins), OUT (./out). Writes
# $OUT/runs.jsonl, $OUT/pins.md (distinct hashes per group), $OUT/pins/
# (the pins), $OUT/tunedbd.log, $OUT/err/ (each process's stderr).
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODELS=${MODELS:-resnet50 shufflenet_v2_x1_0}
DTYPES=${DTYPES:-fp16 fp32}
PROCS=${PROCS:-8}
CONCURRENT=${CONCURRENT:-$PROCS}
TIMED=${TIMED:-3}
DETS=${DETS-0 1}
WORK=${WORK:-/tmp/tunedb-pins}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$HERE/pin_repro_bench.py"
mkdir -p "$OUT/pins" "$OUT/err" "$WORK"
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
[[ -n "$PIP_CUDNN" ]] || { echo "no nvidia.cudnn package next to PyTorch"; exit 1; }
SOCK="$WORK/d.sock"
ADDR="unix:$SOCK"
NOWHERE="unix:$WORK/no-daemon.sock"
rm -f "$SOCK" "$WORK"/pins.db* "$OUT/runs.jsonl"
source "$HERE/gpu_daemon.sh"
start_gpu_daemon "$WORK/pins.db" "$SOCK" "$OUT/tunedbd.log"
for f in ${IMPORT:-}; do "$B/bin/tunedb" --address "$ADDR" import "$f" || exit 1; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader

# one LABEL MODEL DTYPE BENCH_FLAGS [-- PREFIX...]: one process, its JSON line
# into runs.jsonl.
one() {
  local label=$1 model=$2 dtype=$3 flags=$4; shift 4
  local err="$OUT/err/$(echo "$label" | tr ' ,#/=' '_____').err"
  "$@" "$PY" "$BENCH" run --label "$label" --model "$model" --dtype "$dtype" \
    $flags 2> "$err" | grep '^{' >> "$OUT/runs.jsonl"
  tail -1 "$err" | cut -c1-300
}
# together LABEL MODEL DTYPE BENCH_FLAGS [PREFIX...]: PROCS processes, at
# most CONCURRENT at once.
# (Waits for those processes only: the daemon is a child too.)
together() {
  local label=$1; shift
  local pids=()
  for k in $(seq 1 "$PROCS"); do
    one "$label #$k" "$@" &
    pids+=($!)
    if (( k % CONCURRENT == 0 )); then wait "${pids[@]}"; pids=(); fi
  done
  if (( ${#pids[@]} > 0 )); then wait "${pids[@]}"; fi
}

if [[ -n ${FOLLOW:-} ]]; then
  for pin in "$FOLLOW"/*.pin; do
    name=$(basename "$pin" .pin)          # MODEL-DTYPE[-det]
    det=""; [[ $name == *-det ]] && det=" --deterministic"
    base=${name%-det}; model=${base%-*}; dtype=${base##*-}
    echo "=== $name, followed ($(date -u +%H:%M:%S))"
    together "$name, pin made elsewhere, followed" "$model" "$dtype" "--benchmark 1$det" \
      "$B/bin/tunedb" --address "$NOWHERE" run --pin "$pin" --
  done
  MODELS=""
fi
for model in $MODELS; do
  for dtype in $DTYPES; do
    tag="$model-$dtype"
    for det in $DETS; do
      flags="--benchmark 1"; pinflag=(); d=""
      if [[ $det == 1 ]]; then flags+=" --deterministic"; pinflag=(--deterministic); d=" deterministic"; fi
      pin="$OUT/pins/$tag${d:+-det}.pin"
      echo "=== $tag$d ($(date -u +%H:%M:%S))"
      [[ ${NO_PLAIN:-0} == 1 ]] || together "$tag$d, no tunedb" "$model" "$dtype" "$flags"
      one "$tag$d, pin recorded" "$model" "$dtype" "$flags" \
        "$B/bin/tunedb" --address "$ADDR" run --tune-after --pin "$pin" ${pinflag[@]+"${pinflag[@]}"} --
      together "$tag$d, pin followed" "$model" "$dtype" "$flags" \
        "$B/bin/tunedb" --address "$NOWHERE" run --pin "$pin" --
    done
    (( TIMED > 0 )) || continue
    # The timed pin is recorded again once the misses of the first recording
    # are tuned, so warm and pinned rows build the same plans.
    one "$tag, pin re-recorded" "$model" "$dtype" "--benchmark 1" \
      "$B/bin/tunedb" --address "$ADDR" run --repin --pin "$OUT/pins/$tag.pin" --
    for i in $(seq 1 "$TIMED"); do
      one "$tag, timed warm #$i" "$model" "$dtype" "--benchmark 1 --steady" \
        "$B/bin/tunedb" --address "$ADDR" run --
      one "$tag, timed pinned #$i" "$model" "$dtype" "--benchmark 1 --steady" \
        "$B/bin/tunedb" --address "$NOWHERE" run --pin "$OUT/pins/$tag.pin" --
      one "$tag, timed pinned with a daemon #$i" "$model" "$dtype" "--benchmark 1 --steady" \
        "$B/bin/tunedb" --address "$ADDR" run --pin "$OUT/pins/$tag.pin" --
    done
  done
done
"$PY" "$BENCH" summarize "$OUT/runs.jsonl" "$OUT/pins.md" > "$OUT/pins.json"
cat "$OUT/pins.md"
"$B/bin/tunedb" --address "$ADDR" stats | head -12
