#!/usr/bin/env bash
# Everything tunedb runs on a GPU machine, in one call, from the repo root
# with a prebuilt bundle (scripts/make_gpu_bundle.sh, see docs/gpu.md) carried:
#
#   scripts/device_run.sh [BUNDLE_DIR]     # default .bundle/tunedb
#
#  1. scripts/gpu_suite.sh: the gpu-labelled tests with both cuDNN versions,
#     tunedb's choice vs cuDNN's heuristic, a daemon round trip;
#  2. the client: conv_example (no daemon, daemon search, stored, database
#     file) and the hit/miss benchmarks on this host's idle cores;
#  3. scripts/multi_gpu_check.sh when the host has two or more GPUs;
#  4. scripts/tour.sh on the GPU (the README's tour, real cuDNN).
# Writes $OUT/results.tar.gz (one folder per step) and $OUT/summary.log.
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
OUT=${OUT:-$PWD/out}
STAGE=$(mktemp -d /tmp/tunedb-device-XXXXXX)
mkdir -p "$OUT"
exec > >(tee "$OUT/summary.log") 2>&1
declare -A RESULT
step() { echo; echo "##### $* ($(date -u +%H:%M:%S))"; }
export PATH="$B/bin:$PATH"

step "gpu suite"
OUT=$STAGE/gpu_suite bash scripts/gpu_suite.sh "$B" > /dev/null 2>&1
RESULT[gpu_suite]=$?
tail -n 40 "$STAGE/gpu_suite/suite.log"

step "client"
mkdir -p "$STAGE/client"
(
  set -x
  export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  T=$(mktemp -d /tmp/tunedb-client-XXXXXX)
  "$B/tests/conv_example"; echo "exit $?"
  "$B/bin/tunedbd" --db "$T/c.db" --socket "$T/c.sock" --log-level warn &
  D=$!
  for _ in $(seq 1 300); do [[ -S "$T/c.sock" ]] && break; sleep 0.1; done
  "$B/tests/conv_example" --address="unix:$T/c.sock"; echo "exit $?"
  "$B/tests/conv_example" --address="unix:$T/c.sock"; echo "exit $?"
  kill -TERM $D; wait $D
  "$B/tests/conv_example" --address="unix:$T/c.sock" --db="$T/c.db"; echo "exit $?"
  "$B/tests/client_hit_bench"
  "$B/tests/client_miss_bench"
  rm -rf "$T"
) > "$STAGE/client/client.log" 2>&1
RESULT[client]=$?
grep -E "^(choice|check|exit|  miss|  hit|  1 thread|  2 threads)|goal" "$STAGE/client/client.log"

GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [[ $GPUS -ge 2 ]]; then
  step "multi-GPU check ($GPUS GPUs)"
  OUT=$STAGE/multi_gpu bash scripts/multi_gpu_check.sh "$B" > /dev/null 2>&1
  RESULT[multi_gpu]=$?
  tail -n 30 "$STAGE/multi_gpu/multi_gpu.log"
else
  echo "one GPU: multi-GPU check not run"
fi

step "tour on the GPU"
mkdir -p "$STAGE/tour"
bash scripts/tour.sh "$B/bin" > "$STAGE/tour/tour.txt" 2>&1
RESULT[tour]=$?
tail -n 30 "$STAGE/tour/tour.txt"

step "summary"
for k in "${!RESULT[@]}"; do echo "$k: exit ${RESULT[$k]}"; done
tar -czf "$OUT/results.tar.gz" -C "$STAGE" .
rm -rf "$STAGE"
