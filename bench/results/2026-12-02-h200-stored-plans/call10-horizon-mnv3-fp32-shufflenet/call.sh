#!/usr/bin/env bash
# Device call C: the compile horizon and the heuristic rule, every
# runtime-compiled plan kept; stored plans on by default.
# 1) MobileNetV3 fp32: cold, searched again, warm;
# 2) ShuffleNetV2 fp16: cold, searched again, warm (as time allows).
set -x
mkdir -p /tmp/b && tar -xJf .bundle/lite.tar.xz -C /tmp/b
B=/tmp/b/lite
O=/tmp/o; mkdir -p $O
(PATH=/opt/torch/.venv/bin:$PATH source scripts/cudnn_env.sh
 LD_LIBRARY_PATH="$FIRST:$B/lib${EXTRA:+:$EXTRA}" timeout 60 $B/tests/graph_gpu_test \
  --gtest_filter='*BuildsTimesVerifies*' > $O/graph_search_test.log 2>&1
 echo "graph test rc=$?"; tail -3 $O/graph_search_test.log)
MODEL=mobilenet_v3_large DTYPES=fp32 PATHS=default TUNE_AFTER=1 RESEARCH=1 \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/mnv3-fp32 WORK=/tmp/w1 \
  timeout ${LIMIT1:-300} scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "mnv3 fp32 rc=$?"
python3 scripts/search_again_ratio.py $O/mnv3-fp32 | tee $O/mnv3-fp32/research.txt
grep -v "^$" $O/mnv3-fp32/dropin.md | grep "^| fp32" | head -12
grep "^---\|FAILED" $O/mnv3-fp32/dropin.log
MODEL=shufflenet_v2_x1_0 DTYPES=fp16 PATHS=default TUNE_AFTER=1 RESEARCH=1 \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/shuffle-fp16 WORK=/tmp/w2 \
  timeout ${LIMIT2:-240} scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "shuffle rc=$?"
python3 scripts/search_again_ratio.py $O/shuffle-fp16 | tee $O/shuffle-fp16/research.txt
grep -v "^$" $O/shuffle-fp16/dropin.md | grep "^| fp16" | head -12
grep "^---\|FAILED" $O/shuffle-fp16/dropin.log
tar -czf $OUT/c.tgz -C $O .
