#!/usr/bin/env bash
# Runs tunedb_regret (bench/regret/) on a GPU machine from the repo root, with
# the bundle that scripts/make_gpu_bundle.sh makes carried along, against
# PyTorch's pip cuDNN (the system one where there is none):
#
#   scripts/regret_run.sh BUNDLE_DIR NAME [tunedb_regret flags...]
#
# Writes $OUT/NAME.txt (the tables), $OUT/NAME.json and $OUT/NAME.csv.
set -uo pipefail
B=$(cd "$1" && pwd)
NAME=$2
shift 2
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
source "$(dirname "$0")/cudnn_env.sh"
export LD_LIBRARY_PATH="$FIRST:$B/lib${EXTRA:+:$EXTRA}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$B/tests/tunedb_regret" "$@" --json "$OUT/$NAME.json" --csv "$OUT/$NAME.csv" \
  > "$OUT/$NAME.txt"
