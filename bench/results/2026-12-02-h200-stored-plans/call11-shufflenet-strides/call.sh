#!/usr/bin/env bash
# Device call D: ShuffleNetV2 fp16, warm rows on call C's records, with
# stored plans given only for the caller's own dims and strides.
set -x
mkdir -p /tmp/b && tar -xJf .bundle/lite.tar.xz -C /tmp/b
B=/tmp/b/lite
O=/tmp/o; mkdir -p $O
xz -dc .bundle/calls/shuffle-fp16.jsonl.xz > /tmp/shuffle.jsonl
MODEL=shufflenet_v2_x1_0 DTYPES=fp16 PATHS=default WARM_ONLY=1 IMPORT=/tmp/shuffle.jsonl \
  TIMER=1 GRAPHED=1 ITERS=20 OUT=$O/shuffle WORK=/tmp/w1 TUNEDB_PRELOAD_LOG=summary \
  timeout ${LIMIT:-170} scripts/pytorch_dropin.sh $B > /dev/null 2>&1
echo "shuffle rc=$?"
grep -v "^$" $O/shuffle/dropin.md | grep "^| fp16" | head -12
grep "^---\|FAILED" $O/shuffle/dropin.log
grep -h "stored_plan_refused" $O/shuffle/runs/*.err | sort | uniq -c | head -5
tar -czf $OUT/d.tgz -C $O .
