#!/usr/bin/env bash
# A refactor's GPU check on the GPU machine: the GPU suite and the PyTorch
# drop-in for two builds, the one before the change and the one after, in one
# call (figures compare only within one machine).
#
#   scripts/before_after_gpu.sh STEP WHICH...   # from the repo root
#
# STEP: suite (scripts/gpu_suite.sh) or dropin (scripts/pytorch_dropin.sh,
# legacy path, fp16, with the GPU time of a CUDA-graph replay; DROPIN_ENV
# adds settings; STEP_LIMIT_S bounds each run, so what it wrote still comes
# back). WHICH: before or after.
# The bundles come carried as .bundle/after-lite.tar.xz (a whole bundle,
# lite/: bin, lib, tests) and .bundle/before-overlay.tar.xz (overlay/: the
# earlier build's bin/, tests/ and libtunedb*; its other libraries are
# Debian's, the same in both, so it is laid over a copy of the after one and
# the two fit the carry limit). Each step's output is packed as
# $OUT/WHICH-STEP.tar.xz (only a few files come back).
set -uo pipefail
cd "$(dirname "$0")/.."
step=$1; shift
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if [[ ! -d .bundle/after ]]; then
  tar -xJf .bundle/after-lite.tar.xz -C .bundle && mv .bundle/lite .bundle/after
fi
if [[ ! -d .bundle/before ]]; then
  cp -a .bundle/after .bundle/before
  tar -xJf .bundle/before-overlay.tar.xz -C .bundle
  cp -a .bundle/overlay/. .bundle/before/ && rm -rf .bundle/overlay
fi
rc=0
for which in "$@"; do
  dir="$OUT/$which-$step"
  case "$step" in
    suite) OUT=$dir bash scripts/gpu_suite.sh ".bundle/$which" || rc=1 ;;
    dropin)
      timeout "${STEP_LIMIT_S:-3600}" env OUT="$dir" WORK="/tmp/dropin-$which" GRAPHED=1 DTYPES=fp16 \
        PATHS=legacy REPEAT="${REPEAT:-1}" TUNE_AFTER=1 ITERS=40 \
        ${DROPIN_ENV:-} bash scripts/pytorch_dropin.sh ".bundle/$which" || rc=1 ;;
    *) echo "before_after_gpu.sh: unknown step $step" >&2; exit 2 ;;
  esac
  tar -cJf "$OUT/$which-$step.tar.xz" -C "$OUT" "$which-$step" && rm -rf "$dir"
done
exit $rc
