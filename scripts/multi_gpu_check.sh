#!/usr/bin/env bash
# Two-GPU check of tunedbd's per-GPU workers, run on a host with two GPUs of
# one model, from the repo root, with a prebuilt bundle carried along:
#
#   scripts/multi_gpu_check.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# 1. Parallel speed-up: the same set of shapes (ResNet-50 forward, fp16 NHWC)
#    is tuned by a daemon that sees one GPU and by one that sees both, after a
#    warm-up, interleaved (1, 2, 1, 2); the ratio of median wall times is
#    printed (an even split over two GPUs gives about 0.5).
# 2. Both GPUs serve: the two-GPU database holds one record per shape (the
#    GPUs share results: same key) measured on both GPU UUIDs.
# 3. A worker killed with SIGKILL in the middle of a prewarm: the other GPU
#    keeps serving, the killed worker's request fails, the worker restarts,
#    and a rerun completes the set.
# Output: $OUT/multi_gpu.log and $OUT/multi_gpu.json (default OUT=./out).
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/multi_gpu.log") 2>&1
T=$(mktemp -d /tmp/tunedb-mgpu-XXXXXX)
CLI="$B/bin/tunedb"
CUDNN_ARGS=()
[[ -n "${CUDNN_DIR:-}" ]] && CUDNN_ARGS=(--cudnn-lib-dir "$CUDNN_DIR")
# FINDER_ARGS (e.g. "--finder simulated-workers") exercises the script's
# mechanics without a GPU; its timings then mean nothing.
read -r -a FINDER <<< "${FINDER_ARGS:-}"
SET=(-m resnet50 --batch 64 --dtype fp16 --layout nhwc --ops fwd,bwd_data)
fail=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
now() { date +%s.%N; }

nvidia-smi -L
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm --format=csv

DPID=""
start() {  # start NAME VISIBLE_DEVICES
  rm -f "$T/$1.sock"
  CUDA_VISIBLE_DEVICES=$2 "$B/bin/tunedbd" --db "$T/$1.db" --socket "$T/$1.sock" \
    --log-level warn "${CUDNN_ARGS[@]}" "${FINDER[@]}" &
  DPID=$!
  for _ in $(seq 1 300); do [[ -S "$T/$1.sock" ]] && break; sleep 0.1; done
  export TUNEDB_ADDRESS="unix:$T/$1.sock"
  "$CLI" devices
}
stop() { kill -TERM "$DPID"; wait "$DPID"; echo "tunedbd exit $?"; }
timed_prewarm() {  # prints seconds
  local t0 t1; t0=$(now)
  "$CLI" prewarm "${SET[@]}" --window 16 --no-progress > "$T/prewarm.out" 2>&1
  local rc=$?
  t1=$(now)
  tail -n 12 "$T/prewarm.out" >&2
  [[ $rc -eq 0 ]] || { echo "prewarm exit $rc" >&2; fail=1; }
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}' 
}

step "warm-up (both GPUs, discarded)"
start warm 0,1
"$CLI" prewarm -m resnet18 --batch 64 --dtype fp16 --layout nhwc --ops fwd --window 16 --no-progress | tail -n 5
stop

declare -a ONE TWO
for round in 1 2; do
  step "round $round: one GPU"
  start one$round 0
  ONE+=("$(timed_prewarm)")
  stop
  step "round $round: two GPUs"
  start two$round 0,1
  TWO+=("$(timed_prewarm)")
  [[ $round -eq 2 ]] && "$CLI" --json query --limit 0 > "$T/two.json"
  stop
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
M1=$(median "${ONE[@]}"); M2=$(median "${TWO[@]}")
RATIO=$(awk -v a="$M1" -v b="$M2" 'BEGIN {printf "%.3f", b / a}')
step "speed-up"
echo "one GPU:  ${ONE[*]} s (median $M1)"
echo "two GPUs: ${TWO[*]} s (median $M2)"
echo "two/one wall-time ratio: $RATIO (even split ideal: 0.5)"

step "both GPUs served, results shared"
RECORDS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d if isinstance(d,list) else d.get("records",[]); print(len(r))' "$T/two.json" 2>/dev/null || echo 0)
UUIDS=$(grep -o '"gpu_uuid": *"[^"]*"' "$T/two.json" | sort | uniq -c)
echo "records: $RECORDS"; echo "measured on:"; echo "$UUIDS"
NUUID=$(echo "$UUIDS" | grep -c gpu_uuid)
[[ $NUUID -eq 2 ]] || { echo "FAIL: expected searches on 2 GPUs"; fail=1; }

step "kill one worker mid-prewarm"
start kill 0,1
"$CLI" prewarm -m resnet101 --batch 64 --dtype fp16 --layout nhwc --ops fwd,bwd_filter --window 16 --no-progress > "$T/kill1.out" 2>&1 &
PW=$!
sleep 4
VICTIM=$(pgrep -f tunedb-worker | head -n 1)
echo "killing worker pid $VICTIM"; ps -o pid,args -p "$VICTIM"
kill -9 "$VICTIM"
wait $PW; RC1=$?
tail -n 12 "$T/kill1.out"
echo "prewarm during the kill: exit $RC1 (5 = some problems failed, 0 = none did)"
"$CLI" devices
"$CLI" prewarm -m resnet101 --batch 64 --dtype fp16 --layout nhwc --ops fwd,bwd_filter --window 16 --no-progress > "$T/kill2.out" 2>&1; RC2=$?
tail -n 12 "$T/kill2.out"
echo "rerun: exit $RC2"
[[ $RC2 -eq 0 ]] || { echo "FAIL: rerun after the kill did not complete"; fail=1; }
"$CLI" stats
stop

cat > "$OUT/multi_gpu.json" <<JSON
{"one_gpu_s": [${ONE[0]}, ${ONE[1]}], "two_gpu_s": [${TWO[0]}, ${TWO[1]}],
 "ratio_two_over_one": $RATIO, "records_two_gpu": $RECORDS, "gpus_that_searched": $NUUID,
 "prewarm_exit_during_kill": $RC1, "prewarm_exit_rerun": $RC2, "ok": $([[ $fail -eq 0 ]] && echo true || echo false)}
JSON
cat "$OUT/multi_gpu.json"
rm -rf "$T"
exit $fail
