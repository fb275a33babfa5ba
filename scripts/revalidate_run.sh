#!/usr/bin/env bash
# Revalidation on a GPU machine (issue: upgrades without starting over),
# with one daemon serving the system cuDNN (9.14) and PyTorch's (9.19):
#   1. learn: unmodified PyTorch (pytorch_dropin_bench.py, batch 64
#      training) runs each model and dtype once under `tunedb run
#      --tune-after`, so the daemon learns the keys and searches them in
#      full on PyTorch's cuDNN (9.19);
#   2. the same problems are searched in full on the system cuDNN (9.14)
#      (`tunedb prewarm --file` on that device);
#   3. 9.14 -> 9.19: the 9.19 records are set aside (exported, deleted) and
#      `tunedb revalidate --from 9.14` makes them again;
#   4. 9.19 -> 9.14: the same the other way round.
# Every phase exports what it stored, so a call cut short still returns
# what was done. scripts/revalidation_report.py compares the results.
#
#   scripts/revalidate_run.sh BUNDLE_DIR
#
# Environment: PY (default /opt/torch/.venv/bin/python), MODELS (default
# "resnet50 mobilenet_v3_large"), DTYPES (default "fp16 fp32"), WORK
# (default /tmp/tunedb-reval), OUT (default ./out). Writes under $OUT:
# full-<version>.jsonl, revalidated-<version>.jsonl, revalidate-*.json (the
# command's summaries), tunedbd.log and phases.log.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:?bundle folder}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
MODELS=${MODELS:-resnet50 mobilenet_v3_large}
DTYPES=${DTYPES:-fp16 fp32}
WORK=${WORK:-/tmp/tunedb-reval}
source "$(dirname "$0")/revalidation_env.sh"
SOCK="$WORK/d.sock"
ADDR="unix:$SOCK"
rm -f "$SOCK" "$WORK"/reval.db*
LD_LIBRARY_PATH="$B/lib${EXTRA:+:$EXTRA}" "$B/bin/tunedbd" --db "$WORK/reval.db" \
  --socket "$SOCK" --finder cudnn --cudnn-lib-dir "$SYS_CUDNN" \
  --cudnn-lib-dir "$PIP_CUDNN" --worker "$B/bin/tunedb-worker" \
  --log-level info > "$OUT/tunedbd.log" 2>&1 &
DAEMON=$!
trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
for _ in $(seq 1 300); do [[ -S "$SOCK" ]] && break; sleep 0.1; done
T=("$B/bin/tunedb" --address "$ADDR")
"${T[@]}" devices || { echo "daemon did not come up"; exit 1; }
START=$SECONDS
phase() { echo "=== $* ($((SECONDS - START)) s)" | tee -a "$OUT/phases.log"; }
# "CUDNN CUDA" of the daemon's device with cuDNN major.minor $1.
versions_of() {
  "${T[@]}" --json devices | "$PY" -c 'import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["cudnn"].startswith(sys.argv[1] + "."):
        print(d["cudnn"], d["cuda"]); break' "$1"
}
read -r OLD_CUDNN OLD_CUDA < <(versions_of 9.14)
read -r NEW_CUDNN NEW_CUDA < <(versions_of 9.19)
[[ -n "${OLD_CUDNN:-}" && -n "${NEW_CUDNN:-}" ]] ||
  { echo "the daemon does not serve both 9.14 and 9.19"; exit 1; }

phase "learn: full searches on 9.19 of the keys PyTorch asks for"
for model in $MODELS; do
  for dtype in $DTYPES; do
    "${T[@]}" run --tune-after -- "$PY" "$HERE/pytorch_dropin_bench.py" run \
      --model "$model" --dtype "$dtype" --benchmark 0 --iters 2 --blocks 1 \
      --warmup-s 0 --label learn > /dev/null 2> "$OUT/learn-$model-$dtype.err" ||
      echo "  $model $dtype: exit $?"
  done
done
"${T[@]}" export --filter "cudnn=$NEW_CUDNN" -o "$OUT/full-9.19.jsonl"
phase "full searches on 9.14 of the same problems"
# The problems, and the old version's device key: the new one's with its
# cuDNN and CUDA versions.
OLD=$("$PY" -c 'import json, sys
old = None
with open(sys.argv[2], "w") as problems:
    for line in open(sys.argv[1]):
        key = json.loads(line).get("key", "")
        if " op=" not in key: continue
        device, problem = key.split(" op=", 1)
        problems.write("op=" + problem + "\n")
        old = " ".join("cudnn=" + sys.argv[3] if f.startswith("cudnn=") else
                       "cuda=" + sys.argv[4] if f.startswith("cuda=") else f
                       for f in device.split() if not f.startswith("kv="))
print(old or "")' "$OUT/full-9.19.jsonl" "$WORK/problems.txt" "$OLD_CUDNN" "$OLD_CUDA")
echo "  $(wc -l < "$WORK/problems.txt") problems for [$OLD]"
"${T[@]}" prewarm --file "$WORK/problems.txt" --device "$OLD" --no-progress \
  > "$OUT/prewarm-9.14.txt" 2>&1
tail -n 12 "$OUT/prewarm-9.14.txt"
"${T[@]}" export --filter "cudnn=$OLD_CUDNN" -o "$OUT/full-9.14.jsonl"

phase "9.14 -> 9.19: revalidate"
"${T[@]}" invalidate "cudnn=$NEW_CUDNN" --yes
"${T[@]}" --json revalidate --from "$OLD_CUDNN" --to "$NEW_CUDNN" --no-progress \
  > "$OUT/revalidate-to-9.19.json"
cat "$OUT/revalidate-to-9.19.json"
"${T[@]}" export --filter "cudnn=$NEW_CUDNN" -o "$OUT/revalidated-9.19.jsonl"

phase "9.19 -> 9.14: revalidate"
"${T[@]}" invalidate --all --yes
"${T[@]}" import "$OUT/full-9.19.jsonl"
"${T[@]}" --json revalidate --from "$NEW_CUDNN" --to "$OLD_CUDNN" --no-progress \
  > "$OUT/revalidate-to-9.14.json"
cat "$OUT/revalidate-to-9.14.json"
"${T[@]}" export --filter "cudnn=$OLD_CUDNN" -o "$OUT/revalidated-9.14.jsonl"
"${T[@]}" stats | grep -i "revalid\|searches"
phase "done"
