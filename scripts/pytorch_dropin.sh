#!/usr/bin/env bash
# The PyTorch drop-in on a GPU machine (docs/preload.md): unmodified PyTorch
# ResNet-50 (batch 64, forward + backward; fp16 channels-last and fp32) on
# cuDNN's legacy path (TORCH_CUDNN_V8_API_DISABLED=1) and on the default
# (graph API) path, benchmark on and off, without tunedb, under `tunedb run`
# with a cold database (the daemon learns from the program's misses) and
# again with the warm database. Every row is a fresh process. Measures the
# first iteration and the steady state (ms/iter), and checks the outputs and
# gradients of every run against the run of the same path without tunedb,
# benchmark on.
#
#   scripts/pytorch_dropin.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODEL (a torchvision
# model name, default resnet50), DTYPES (default
# "fp16 fp32"; one per call fits the device's time limit more easily), PATHS
# (default "legacy default"), REPEAT (default 1: rounds of the rows with and
# without tunedb, benchmark on and off, interleaved; the summary takes the
# medians over the rounds),
# WARM_ONLY=1 (with KEEP_DB=1 or IMPORT: only the rows without tunedb and
# the warm ones, no cold row and no re-search), IMPORT (below), TUNE_AFTER=1 (the cold row runs
# with `tunedb run --tune-after`: its misses are searched after it, not
# while it trains), RESEARCH=0 (the keys the cold row taught are not
# searched again on the idle GPU before the warm rows), TIMER=1 (every row also loads the
# bundle's libtunedb_cudnn_call_timer.so: its plan builds, other finalizes
# and executes, timed, go into the row's "timer"), KEEP_CACHE=1 (the default
# path also runs benchmark-on rows without tunedb and warm with PyTorch's
# emptying of its allocator cache after each benchmarked convolution turned
# off: what that emptying costs the first iteration), STRICT=1 (the default
# path also runs benchmark-on rows without tunedb and warm with PyTorch's
# stricter filters: deterministic, and in fp32 TF32 off), ITERS
# (steady-state iterations, default 100, in 10 blocks after a warm-up of at
# least 3 s), WORK (the daemon's database, socket
# and reference outputs; default /tmp/tunedb-dropin), KEEP_DB=1 to keep the
# database of an earlier call (the "cold" rows are then not cold), OUT
# (default ./out). Writes $OUT/dropin.log, $OUT/runs.jsonl, $OUT/dropin.json,
# $OUT/dropin.md, $OUT/records.csv (what the daemon stored), $OUT/tunedbd.log
# and per run $OUT/runs/N-*.{out,err} (the cold and first warm runs log every
# intercepted call with its key).
#
# The daemon loads PyTorch's own cuDNN (its nvidia.cudnn package), so its
# keys carry the cuDNN version the program runs with.
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
DTYPES=${DTYPES:-fp16 fp32}
PATHS=${PATHS:-legacy default}
REPEAT=${REPEAT:-1}
ITERS=${ITERS:-100}
MODEL=${MODEL:-resnet50}
WORK=${WORK:-/tmp/tunedb-dropin}
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$HERE/pytorch_dropin_bench.py"
mkdir -p "$OUT/runs" "$WORK"
exec > >(tee "$OUT/dropin.log") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step "machine and PyTorch"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
nvidia-smi topo -m 2>/dev/null | head -4
lscpu 2>/dev/null | grep -Ei "^(model name|numa|cpu\(s\))" || true
# Every row's Python runs on the same CPUs: by default (PIN=auto) those
# nvidia-smi names as GPU 0's CPU affinity (its NUMA node), else PIN's
# taskset list; PIN=off leaves placement to the scheduler. A process whose
# launches cross to the far socket, or wander between cores, runs a
# host-bound training loop (fp16 here) slower, whatever its plans.
PIN=${PIN:-auto}
if [[ $PIN == auto ]]; then
  PIN=$(nvidia-smi topo -m 2>/dev/null |
    awk '/^GPU0[[:space:]]/ { for (i = 2; i <= NF; i++)
      if ($i ~ /^[0-9]+([-,][0-9]+)*$/) { print $i; exit } }')
fi
pin=()
if [[ -n "$PIN" && $PIN != off ]] && command -v taskset > /dev/null; then
  pin=(taskset -c "$PIN")
fi
echo "rows run on CPUs: ${PIN:-any}"
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name())' || exit 1
# cudnn_env.sh finds PyTorch's cuDNN and the other pip CUDA libraries with
# whatever python3 is first on PATH: PyTorch's.
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
[[ -n "$PIP_CUDNN" ]] || { echo "no nvidia.cudnn package next to PyTorch"; exit 1; }
echo "PyTorch's cuDNN: $PIP_CUDNN"; ls "$PIP_CUDNN"/libcudnn.so.9*

step "tunedbd (cuDNN finder, PyTorch's cuDNN), database $WORK/dropin.db"
SOCK="$WORK/d.sock"
ADDR="unix:$SOCK"
rm -f "$SOCK"
[[ "${KEEP_DB:-0}" == 1 ]] || rm -f "$WORK"/dropin.db*
rm -f "$WORK"/ref-*.pt
source "$HERE/gpu_daemon.sh"
start_gpu_daemon "$WORK/dropin.db" "$SOCK" "$OUT/tunedbd.log"
"$B/bin/tunedb" --address "$ADDR" devices || { echo "daemon did not come up"; exit 1; }
"$B/bin/tunedb" --address "$ADDR" stats | head -20
# IMPORT=FILE: records an earlier call exported (its records.jsonl), imported
# before the rows (with WARM_ONLY=1: the warm rows of that earlier call's
# database, without searching again).
if [[ -n "${IMPORT:-}" ]]; then
  "$B/bin/tunedb" --address "$ADDR" import "$IMPORT" || exit 1
fi

# one LABEL DTYPE BENCHMARK [tunedb run flags... --] : one fresh process.
# A label ending in ", cache kept" runs with --keep-conv-cache, one ending
# in ", deterministic" or ", no tf32" with that filter.
n=0
one() {
  local label=$1 dtype=$2 bench=$3; shift 3
  local keep=()
  [[ "$label" == *", cache kept" ]] && keep=(--keep-conv-cache)
  [[ "$label" == *", deterministic" ]] && keep=(--deterministic)
  [[ "$label" == *", no tf32" ]] && keep=(--no-tf32)
  local path=${label%%,*}
  local refpt="$WORK/ref-$MODEL-$path-$dtype.pt"
  local pre=() ref=(--ref "$refpt")
  if [[ $# -gt 0 ]]; then pre=("$B/bin/tunedb" --address "$ADDR" run "$@"); fi
  # The first run of a path without tunedb, benchmark on, is the reference;
  # a repeated one measures how far PyTorch differs from itself.
  [[ "$label" == "$path, no tunedb" && $bench == 1 && ! -e "$refpt" ]] &&
    ref=(--save "$refpt")
  local graphed=()
  [[ "${GRAPHED:-0}" == 1 ]] && graphed=(--graphed)
  local timer=()
  [[ "${TIMER:-0}" == 1 ]] && timer=(env "LD_PRELOAD=$B/lib/libtunedb_cudnn_call_timer.so")
  n=$((n + 1))
  local err="$OUT/runs/$n-$dtype-bench$bench.err"
  echo "--- $n: $dtype, $label, benchmark=$bench"
  ${timer[@]+"${timer[@]}"} ${pre[@]+"${pre[@]}"} ${pin[@]+"${pin[@]}"} "$PY" "$BENCH" run --dtype "$dtype" --benchmark "$bench" \
    --iters "$ITERS" --model "$MODEL" ${graphed[@]+"${graphed[@]}"} --label "$label" "${ref[@]}" ${keep[@]+"${keep[@]}"} \
    > "${err%.err}.out" 2> "$err"
  local rc=$?
  local json line timed
  json=$(grep '^{' "${err%.err}.out" | tail -1)
  line=$(grep '^tunedb preload:' "$err" | tail -1)
  timed=$(grep '^{"cudnn_call_timer"' "$err" | tail -1)
  [[ -n "$line" ]] && echo "    $line"
  if [[ -z "$json" ]]; then
    echo "    FAILED (exit $rc); stderr tail:"; tail -n 15 "$err" | sed 's/^/    /'
    return
  fi
  "$PY" -c 'import json, sys
r = json.loads(sys.argv[1]); r["preload"] = sys.argv[2]; r["exit_code"] = int(sys.argv[3])
if sys.argv[4]: r["timer"] = json.loads(sys.argv[4])["cudnn_call_timer"]
print(json.dumps(r))' "$json" "$line" "$rc" "$timed" | tee -a "$OUT/runs.jsonl"
}

# The keys a cold run taught the daemon (FILTER: tunedb's --filter), searched
# again on the idle GPU: the cold run's tunes searched while that process
# trained on the same GPU, so their timings are disturbed; a prewarm would
# have searched them undisturbed, and the warm rows measure such choices.
research() {
  local dtype=$1 filter=$2
  "$B/bin/tunedb" --address "$ADDR" export --dtype "$dtype" --filter "$filter" \
    -o "$WORK/cold-$dtype.jsonl"
  "$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["key"])' "$WORK/cold-$dtype.jsonl" > "$WORK/keys-$dtype.txt"
  echo "    $(wc -l < "$WORK/keys-$dtype.txt") keys searched again"
  "$B/bin/tunedb" --address "$ADDR" prewarm --file "$WORK/keys-$dtype.txt" \
    --format text --force --no-progress | tail -3
}

for dtype in $DTYPES; do
  for path in $PATHS; do
    if [[ $path == legacy ]]; then
      step "$dtype: legacy path (TORCH_CUDNN_V8_API_DISABLED=1)"
      export TORCH_CUDNN_V8_API_DISABLED=1
      filter=api=legacy
    else
      step "$dtype: default path (graph API)"
      unset TORCH_CUDNN_V8_API_DISABLED
      filter=api=graph
    fi
    # The reference: the path's first process without tunedb, benchmark on
    # (its outputs and gradients are what every other row is checked against).
    one "$path, no tunedb" "$dtype" 1
    if [[ "${WARM_ONLY:-0}" != 1 ]]; then
      # Cold: the misses pass through and ask the daemon to tune; the
      # process waits at exit for those tunes, so the next process finds
      # them stored.
      if [[ "${TUNE_AFTER:-0}" == 1 ]]; then
        one "$path, tunedb cold" "$dtype" 1 --log calls --tune-after --
      else
        one "$path, tunedb cold" "$dtype" 1 --log calls --exit-wait 900 --
      fi
      "$B/bin/tunedb" --address "$ADDR" stats | grep -Ei "records|searches" | head -5
      [[ "${RESEARCH:-1}" == 1 ]] && research "$dtype" "$filter"
    fi
    # Rows with and without tunedb interleaved, REPEAT rounds: a machine
    # whose speed drifts over the call drifts under both alike.
    for round in $(seq "$REPEAT"); do
      log_calls=()
      [[ $round == 1 ]] && log_calls=(--log calls)
      one "$path, no tunedb" "$dtype" 1
      one "$path, tunedb warm" "$dtype" 1 ${log_calls[@]+"${log_calls[@]}"} --
      one "$path, no tunedb" "$dtype" 0
      one "$path, tunedb warm" "$dtype" 0 --
    done
    if [[ "${KEEP_CACHE:-0}" == 1 && $path == default ]]; then
      for _ in $(seq "$REPEAT"); do
        one "$path, no tunedb, cache kept" "$dtype" 1
        one "$path, tunedb warm, cache kept" "$dtype" 1 --
      done
    fi
    if [[ "${STRICT:-0}" == 1 && $path == default ]]; then
      one "$path, no tunedb, deterministic" "$dtype" 1
      one "$path, tunedb warm, deterministic" "$dtype" 1 --log calls --
      if [[ $dtype == fp32 ]]; then
        one "$path, no tunedb, no tf32" "$dtype" 1
        one "$path, tunedb warm, no tf32" "$dtype" 1 --log calls --
      fi
    fi
  done
  unset TORCH_CUDNN_V8_API_DISABLED
done

step "summary"
"$PY" "$BENCH" summarize "$OUT/runs.jsonl" "$OUT"
"$B/bin/tunedb" --address "$ADDR" stats | head -20
"$B/bin/tunedb" --address "$ADDR" query --csv > "$OUT/records.csv"
echo "$(($(wc -l < "$OUT/records.csv") - 1)) records stored"
# Every result of every record (engines, notes, costs), for reading offline.
"$B/bin/tunedb" --address "$ADDR" export -o "$OUT/records.jsonl" || true
