#!/usr/bin/env bash
# Runs tunedb_regret (bench/regret/) over several model sets on a GPU
# machine, one after another, and packs everything into one archive:
#
#   scripts/regret_sets.sh BUNDLE_DIR SET... [-- extra tunedb_regret flags]
#
# A SET is MODEL-bBATCH-DTYPE-LAYOUT, e.g. resnet50-b32-fp32-nchw or
# mobilenetv2-b64-bf16-nhwc (3-D models take nhwc/nchw too). Each set's
# tables go to $OUT/sets/SET.txt (with .json and .csv beside them); the
# summary rows of every set are appended to $OUT/summary.txt, and
# $OUT/regret.tar.gz holds the sets folder. SET_TIMEOUT (default 240 s)
# bounds one set.
set -uo pipefail
B=$(cd "$1" && pwd)
shift
sets=() extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  sets+=("$1"); shift
done
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT/sets"
for set in "${sets[@]}"; do
  IFS=- read -r model batch dtype layout <<< "$set"
  echo "=== $set ($(date -u +%H:%M:%S))" | tee -a "$OUT/summary.txt"
  OUT="$OUT/sets" timeout "${SET_TIMEOUT:-240}" bash "$(dirname "$0")/regret_run.sh" \
    "$B" "$set" --model "$model" --batch "${batch#b}" --dtype "$dtype" \
    --layout "$layout" "${extra[@]}" 2> "$OUT/sets/$set.progress"
  echo "exit $?" >> "$OUT/summary.txt"
  sed -n '/^per model set/,$p' "$OUT/sets/$set.txt" >> "$OUT/summary.txt"
done
tar -C "$OUT" -czf "$OUT/regret.tar.gz" sets && rm -rf "$OUT/sets"
