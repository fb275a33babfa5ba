#!/usr/bin/env bash
# Device call A: stored plans under PyTorch (MobileNetV3 fp16), and the
# search's reuse of kept plans (graph GPU test).
set -x
mkdir -p /tmp/b && tar -xJf .bundle/lite.tar.xz -C /tmp/b
B=/tmp/b/lite
O=/tmp/o; mkdir -p $O
PATH=/opt/torch/.venv/bin:$PATH source scripts/cudnn_env.sh
env | grep -i cudnn > $O/env.txt
LD_LIBRARY_PATH="$FIRST:$B/lib${EXTRA:+:$EXTRA}" timeout 120 $B/tests/graph_gpu_test \
  --gtest_filter='*KeptPlansLoads*' > $O/keptplans_test.log 2>&1
echo "graph test rc=$?"; tail -15 $O/keptplans_test.log
export TUNEDB_PRELOAD_STORED_PLANS=on TUNEDB_PRELOAD_TRACE_PLANS=1
MODEL=${MODEL:-mobilenet_v3_large} DTYPES=fp16 PATHS=default TUNE_AFTER=1 RESEARCH=1 \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/dropin WORK=/tmp/w \
  timeout ${LIMIT:-420} scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "dropin rc=$?"
tail -60 $O/dropin/dropin.log
cat $O/dropin/dropin.md
tar -czf $OUT/a.tgz -C $O .
ls -la $OUT
