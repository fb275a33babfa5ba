#!/usr/bin/env bash
# Device call B: stored plans under PyTorch with the handle fix.
# 1) MobileNetV3 fp16, warm rows only, call A's records imported;
# 2) EfficientNet-B0 fp16, cold then warm.
set -x
mkdir -p /tmp/b && tar -xJf .bundle/lite.tar.xz -C /tmp/b
B=/tmp/b/lite
O=/tmp/o; mkdir -p $O
xz -dc .bundle/calls/mnv3-fp16.jsonl.xz > /tmp/mnv3.jsonl
export TUNEDB_PRELOAD_STORED_PLANS=on
MODEL=mobilenet_v3_large DTYPES=fp16 PATHS=default WARM_ONLY=1 IMPORT=/tmp/mnv3.jsonl \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/mnv3 WORK=/tmp/w1 \
  timeout 200 scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "mnv3 rc=$?"
grep -A12 "^| dtype | run | benchmark | first iteration (s) | steady" $O/mnv3/dropin.md | head -8
grep "^---\|tunedb preload:\|FAILED" $O/mnv3/dropin.log | grep -v " hit \|fallback" | head -20
MODEL=efficientnet_b0 DTYPES=fp16 PATHS=default TUNE_AFTER=1 RESEARCH=0 \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/effb0 WORK=/tmp/w2 \
  timeout ${LIMIT:-330} scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "effb0 rc=$?"
grep "^---\|tunedb preload:\|FAILED" $O/effb0/dropin.log | grep -v " hit \|fallback" | head -20
cat $O/effb0/dropin.md | grep -v "^$" | head -60
tar -czf $OUT/b.tgz -C $O .
