#!/usr/bin/env bash
# Builds the GPU targets and makes the bundle that scripts/gpu_suite.sh and
# scripts/device_run.sh run on a GPU machine, exactly as docs/gpu.md
# ("Running the GPU suite") says. No GPU needed here; CUDA and cuDNN must be
# installed (TUNEDB_WITH_CUDNN=ON fails at configure time otherwise).
#
#   scripts/make_gpu_bundle.sh [BUILD_DIR] [BUNDLE_DIR]
#       # defaults: build-gpu and .bundle/tunedb; JOBS (default 2) for the build
#
# The bundle: bin/ tunedbd, tunedb-worker, tunedb; lib/ libtunedb.so,
# libtunedb_preload{,_core}.so (`tunedb run`), libtunedb_cudnn_call_timer.so
# (scripts/pytorch_dropin.sh TIMER=1) and the shared libraries they
# all need; tests/ (flat) the programs the GPU scripts run: cudnn_status_test,
# cpu_reference_test, worker_supervisor_test, cudnn_finder_gpu_test,
# cudnn_worker_gpu_test, graph_gpu_test, tunedb_gpu_bench, tunedb_regret,
# tunedb_graph_regret, tunedb_plan_load_bench, tunedb_plan_adopt_probe, conv_example,
# graph_plan_example, client_hit_bench and client_miss_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
BUNDLE=${2:-.bundle/tunedb}

defs=(-DTUNEDB_WERROR=ON -DTUNEDB_BUILD_BENCH=ON -DTUNEDB_WITH_CUDNN=ON)
# ccache, where installed, makes rebuilds cheap (as scripts/build.sh does).
if command -v ccache > /dev/null 2>&1; then
  defs+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$BUILD" "${defs[@]}"
cmake --build "$BUILD" -j"${JOBS:-2}" --target tunedbd tunedb-worker \
  tunedb tunedb_client_shared tunedb_preload tunedb_preload_core \
  cudnn_status_test cpu_reference_test worker_supervisor_test \
  cudnn_finder_gpu_test cudnn_worker_gpu_test \
  graph_gpu_test tunedb_gpu_bench tunedb_regret tunedb_graph_regret \
  tunedb_plan_load_bench tunedb_plan_adopt_probe \
  conv_example graph_plan_example client_hit_bench client_miss_bench \
  tunedb_cudnn_call_timer
scripts/make_bundle.sh --out "$BUNDLE" \
  --bin "$BUILD/bin/tunedbd" --bin "$BUILD/bin/tunedb-worker" \
  --bin "$BUILD/bin/tunedb" \
  --lib "$BUILD/client/libtunedb.so" \
  --lib "$BUILD/lib/libtunedb_preload.so" \
  --lib "$BUILD/lib/libtunedb_preload_core.so" \
  --lib "$BUILD/lib/libtunedb_cudnn_call_timer.so" \
  --tests "$BUILD/tests/cudnn/cudnn_status_test" \
  --tests "$BUILD/tests/cudnn/cpu_reference_test" \
  --tests "$BUILD/tests/server/worker/worker_supervisor_test" \
  --tests "$BUILD/tests/gpu/cudnn_finder_gpu_test" \
  --tests "$BUILD/tests/gpu/cudnn_worker_gpu_test" \
  --tests "$BUILD/tests/gpu/graph_gpu_test" \
  --tests "$BUILD/bench/regret/tunedb_graph_regret" \
  --tests "$BUILD/examples/graph_plan_example" \
  --tests "$BUILD/bench/gpu/tunedb_gpu_bench" \
  --tests "$BUILD/bench/gpu/tunedb_plan_load_bench" \
  --tests "$BUILD/bench/gpu/tunedb_plan_adopt_probe" \
  --tests "$BUILD/bench/regret/tunedb_regret" \
  --tests "$BUILD/examples/conv_example" \
  --tests "$BUILD/bench/client/client_hit_bench" \
  --tests "$BUILD/bench/client/client_miss_bench"
