#!/usr/bin/env bash
# The GPU suite: run from the repo root on the GPU machine with a prebuilt
# bundle (bin/, lib/, tests/) carried along:
#
#   scripts/gpu_suite.sh [BUNDLE_DIR]        # default .bundle/tunedb
#
# It prints the GPU, driver and the cuDNN versions found (PyTorch's pip
# package nvidia.cudnn and the system library), warms the GPU, runs the
# gpu-labelled tests with both cuDNN folders, the benchmark (tunedb's choice
# vs cuDNN's heuristic), and a tunedbd --finder=cudnn round trip (Tune +
# Lookup through the CLI) serving both cuDNN versions. Everything goes to
# $OUT (default ./out): at most 8 files.
#
# Make the bundle on the build machine first: scripts/make_gpu_bundle.sh
# (docs/gpu.md, "Running the GPU suite") builds the targets and runs
# scripts/make_bundle.sh --out .bundle/tunedb with --bin tunedbd/tunedb-worker/
# tunedb and --tests for the test programs and tunedb_gpu_bench.
set -uo pipefail

B=$(cd "${1:-.bundle/tunedb}" && pwd)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/suite.log") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
fail=0

step "machine"
uname -a
nvidia-smi
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv

step "cuDNN folders"
source "$(dirname "$0")/cudnn_env.sh"
echo "pip cuDNN folder:    ${PIP_CUDNN:-none}"; ls -l "$PIP_CUDNN"/libcudnn.so* 2>/dev/null
echo "system cuDNN folder: ${SYS_CUDNN:-none}"; ls -l "$SYS_CUDNN"/libcudnn.so* 2>/dev/null
for d in "$PIP_CUDNN" "$SYS_CUDNN"; do
  [[ -n "$d" ]] || continue
  echo "$d: $(cd "$d" && ls libcudnn.so.9.* 2>/dev/null | head -1) \
$(cat "$d"/../include/cudnn_version.h 2>/dev/null | awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{printf "%s ", $3}')"
done
export LD_LIBRARY_PATH="$B/lib${EXTRA:+:$EXTRA}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "tests run with LD_LIBRARY_PATH=$FIRST:..."
echo "TUNEDB_TEST_CUDNN_DIRS=$DIRS"
export TUNEDB_WORKER_PATH="$B/bin/tunedb-worker"

step "warm-up (5 s of bf16 matrix products)"
python3 - <<'PY' || echo "warm-up skipped (no torch)"
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time(); n = 0
while time.time() - t < 5:
    a @ a; n += 1
torch.cuda.synchronize()
print(f"{n} products in {time.time()-t:.1f} s")
PY
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv

step "CI tests (no GPU needed)"
"$B/tests/cudnn_status_test" --gtest_brief=1 || fail=1
"$B/tests/cpu_reference_test" --gtest_brief=1 || fail=1
"$B/tests/worker_supervisor_test" --gtest_brief=1 || fail=1

step "GPU tests: workers (kill, timeout, two cuDNN versions)"
LD_LIBRARY_PATH="$FIRST:$LD_LIBRARY_PATH" TUNEDB_TEST_CUDNN_DIRS="$DIRS" \
  "$B/tests/cudnn_worker_gpu_test" --gtest_output=xml:"$OUT/worker_gpu_test.xml" || fail=1

step "GPU tests: finder matrix with cuDNN from $FIRST"
LD_LIBRARY_PATH="$FIRST:$LD_LIBRARY_PATH" \
  "$B/tests/cudnn_finder_gpu_test" --gtest_brief=1 \
  --gtest_output=xml:"$OUT/finder_gpu_test.xml" || fail=1
if [[ -n "$SYS_CUDNN" && "$SYS_CUDNN" != "$FIRST" ]]; then
  step "GPU tests: forward matrix with cuDNN from $SYS_CUDNN"
  LD_LIBRARY_PATH="$SYS_CUDNN:$LD_LIBRARY_PATH" \
    "$B/tests/cudnn_finder_gpu_test" --gtest_brief=1 --gtest_filter='*fwd_*:*Smoke*' || fail=1
fi

step "benchmark: tunedb vs cuDNN heuristic (cuDNN from $FIRST)"
LD_LIBRARY_PATH="$FIRST:$LD_LIBRARY_PATH" \
  "$B/tests/tunedb_gpu_bench" --json="$OUT/bench.json" || fail=1
if [[ -n "$SYS_CUDNN" && "$SYS_CUDNN" != "$FIRST" && "${SUITE_BENCH_SYSTEM:-1}" == 1 ]]; then
  step "benchmark: cuDNN from $SYS_CUDNN"
  LD_LIBRARY_PATH="$SYS_CUDNN:$LD_LIBRARY_PATH" \
    "$B/tests/tunedb_gpu_bench" --json="$OUT/bench_system_cudnn.json" || fail=1
fi

step "tunedbd --finder=cudnn with both cuDNN folders: Tune + Lookup via the CLI"
SOCK=/tmp/tunedb-suite.sock
rm -f "$SOCK" /tmp/tunedb-suite.db*
args=(--finder=cudnn --socket="$SOCK" --db=/tmp/tunedb-suite.db --search-timeout=120)
for d in ${DIRS//:/ }; do args+=(--cudnn-lib-dir="$d"); done
[[ -z "$DIRS" ]] && LD_LIBRARY_PATH="$FIRST:$LD_LIBRARY_PATH"
"$B/bin/tunedbd" "${args[@]}" >"$OUT/tunedbd.log" 2>&1 &
DPID=$!
for _ in $(seq 1 120); do [[ -S "$SOCK" ]] && break; sleep 0.5; done
CLI=("$B/bin/tunedb" --address="unix:$SOCK")
PROBLEM="op=fwd n=32 c=64 k=64 in=56x56 filt=3x3 pad=1x1 stride=1x1 dil=1x1 groups=1 mode=xcorr in_type=f16 out_type=f16 compute=f32 layout=nhwc tc=1 tf32=0"
if [[ -S "$SOCK" ]]; then
  "${CLI[@]}" devices || fail=1
  "${CLI[@]}" --json devices > /tmp/devices.json || fail=1
  "${CLI[@]}" tune "$PROBLEM" --details || fail=1
  "${CLI[@]}" lookup "$PROBLEM" || fail=1
  # The same problem on every device/cuDNN version the daemon serves.
  python3 - "$PROBLEM" <<'PY' > /tmp/keys.txt || true
import json, sys, urllib.parse
for x in json.load(open("/tmp/devices.json"))["devices"]:
    print(f"kv=1 gpu={urllib.parse.quote(x['gpu'])} cc={x['cc']} sms={x['sms']} "
          f"cudnn={x['cudnn']} cuda={x['cuda']} {sys.argv[1]}")
PY
  while read -r key; do
    [[ -n "$key" ]] || continue
    echo "--- $key"
    "${CLI[@]}" tune "$key" || fail=1
    "${CLI[@]}" lookup "$key" --details || fail=1
  done < /tmp/keys.txt
  "${CLI[@]}" stats || true
else
  echo "tunedbd did not come up"; fail=1
fi
kill -TERM "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null
echo "tunedbd log: $OUT/tunedbd.log"; tail -20 "$OUT/tunedbd.log"

step "done: $([[ $fail == 0 ]] && echo ALL PASSED || echo FAILURES)"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
exit $fail
