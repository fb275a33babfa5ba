#!/usr/bin/env bash
# The graph-API measurements on a GPU machine, in one call, from the repo
# root with the bundle (scripts/make_gpu_bundle.sh) carried:
#
#   scripts/graph_run.sh [BUNDLE_DIR] [SET...]
#
# SET is MODEL-bBATCH-DTYPE-LAYOUT (default: resnet50-b64-fp16-nhwc and
# resnet50-b64-fp32-nchw). Against PyTorch's pip cuDNN (cudnn_env.sh):
#  1. graph_gpu_test (the gpu-labelled graph-API tests);
#  2. a daemon with the cuDNN finder; per set `tunedb prewarm --api graph`
#     (search cost), then in fresh processes tunedb_graph_regret --phase
#     load (plans from the stored blobs), --phase build (from engine id +
#     knobs) and --phase quality (choices vs PyTorch's benchmark mode and
#     heuristic mode A);
#  3. graph_plan_example against the daemon.
# PHASES (default "load build quality") picks the tunedb_graph_regret phases.
# Writes $OUT/graph.log and $OUT/graph.tar.gz (every JSON file).
set -uo pipefail
B=$(cd "${1:-.bundle/tunedb}" && pwd)
shift || true
sets=("$@")
[[ ${#sets[@]} -eq 0 ]] && sets=(resnet50-b64-fp16-nhwc resnet50-b64-fp32-nchw)
OUT=${OUT:-$PWD/out}
STAGE=$(mktemp -d /tmp/tunedb-graph-XXXXXX)
mkdir -p "$OUT"
exec > >(tee "$OUT/graph.log") 2>&1
source "$(dirname "$0")/cudnn_env.sh"
export LD_LIBRARY_PATH="$FIRST:$B/lib${EXTRA:+:$EXTRA}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "cuDNN folder: $FIRST"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv

echo; echo "##### graph_gpu_test ($(date -u +%H:%M:%S))"
"$B/tests/graph_gpu_test" --gtest_output="json:$STAGE/graph_gpu_test.json" 2>&1 |
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|error|Expected|Which is" | head -80

T=$(mktemp -d /tmp/tunedb-graphd-XXXXXX)
"$B/bin/tunedbd" --db "$T/g.db" --socket "$T/g.sock" --log-level warn &
D=$!
for _ in $(seq 1 300); do [[ -S "$T/g.sock" ]] && break; sleep 0.1; done
export TUNEDB_ADDRESS="unix:$T/g.sock"
for set in "${sets[@]}"; do
  IFS=- read -r model batch dtype layout <<< "$set"
  flags=(--model "$model" --batch "${batch#b}" --dtype "$dtype" --layout "$layout")
  echo; echo "##### $set: prewarm --api graph ($(date -u +%H:%M:%S))"
  /usr/bin/time -f "prewarm wall %e s" "$B/bin/tunedb" --json prewarm "${flags[@]}" \
    --api graph --no-progress > "$STAGE/$set.prewarm.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in d if not isinstance(d[k], (list, dict))})" \
    "$STAGE/$set.prewarm.json"
  for phase in ${PHASES:-load build quality}; do
    echo; echo "##### $set: tunedb_graph_regret --phase $phase ($(date -u +%H:%M:%S))"
    timeout 400 "$B/tests/tunedb_graph_regret" --db "$T/g.db" "${flags[@]}" \
      --phase "$phase" --json "$STAGE/$set.$phase.json" 2> "$STAGE/$set.$phase.progress" |
      grep -Ev '"(failures|each)"|^ +[{}\]],?$|"(source|engine|runtime_compiled|plan_bytes|ms|again_ms)":' |
      head -40
    echo "exit ${PIPESTATUS[0]}"
  done
done
echo; echo "##### graph_plan_example ($(date -u +%H:%M:%S))"
"$B/tests/graph_plan_example" --address="unix:$T/g.sock"; echo "exit $?"
"$B/tests/graph_plan_example" --address="unix:$T/g.sock"; echo "exit $?"
"$B/bin/tunedb" query --filter api=graph --limit 5
kill -TERM $D; wait $D
cp "$T/g.db" "$STAGE/graph.db" 2>/dev/null
tar -czf "$OUT/graph.tar.gz" -C "$STAGE" .
rm -rf "$STAGE" "$T"
