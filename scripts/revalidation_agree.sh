#!/usr/bin/env bash
# Judges a revalidation run (scripts/revalidate_run.sh's output) by
# re-timing, on a GPU machine: for each cuDNN version, every key's
# revalidated choice against the full search's, side by side in one process
# (tunedb_graph_regret --phase agree), and, as the noise floor, two full
# searches of the same keys against each other where a second run is given.
#
#   scripts/revalidation_agree.sh BUNDLE_DIR RUN_DIR [CONTROL_RUN_DIR]
#
# RUN_DIR holds full-<v>.jsonl[.xz] and revalidated-<v>.jsonl[.xz] for
# v = 9.14 and 9.19; CONTROL_RUN_DIR another run's full-<v>.jsonl[.xz].
# Environment: PY (default /opt/torch/.venv/bin/python), WORK (default
# /tmp/tunedb-agree), OUT (default ./out), ROUNDS (15), PLANS ("stored",
# the default: each side's stored plans loaded where they load; "built":
# every plan built from engine id + knobs), LOADED_VS_BUILT (1: also the
# full search's own choices, loaded against built, label plans-<v>). Writes
# under $OUT <label>.json (every key) and <label>.out (the summary), label
# revalidated-<v>, control-<v> or plans-<v>.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:?bundle folder}" && pwd)
RUN=$(cd "${2:?run folder}" && pwd)
CONTROL=${3:+$(cd "$3" && pwd)}
PY=${PY:-/opt/torch/.venv/bin/python}
WORK=${WORK:-/tmp/tunedb-agree}
source "$(dirname "$0")/revalidation_env.sh"

# label cudnn-folder judged reference [judged-plan reference-plan]
agree() {
  LD_LIBRARY_PATH="$2:$B/lib${EXTRA:+:$EXTRA}" "$B/tests/tunedb_graph_regret" \
    --phase agree --judged "$3" --reference "$4" --rounds "${ROUNDS:-15}" \
    --judged-plan "${5:-${PLANS:-stored}}" \
    --reference-plan "${6:-${PLANS:-stored}}" \
    --json "$OUT/$1.json" > "$OUT/$1.out" 2> "$OUT/$1.err"
  echo "=== $1: exit $?"
  cat "$OUT/$1.out"
}
for v in 9.14 9.19; do
  dir=$PIP_CUDNN; [[ $v == 9.14 ]] && dir=$SYS_CUDNN
  full=$(plain "$RUN" "full-$v" "full-$v") || { echo "no full-$v"; continue; }
  if reval=$(plain "$RUN" "revalidated-$v" "revalidated-$v"); then
    agree "revalidated-$v" "$dir" "$reval" "$full"
  fi
  if [[ ${LOADED_VS_BUILT:-0} == 1 ]]; then
    agree "plans-$v" "$dir" "$full" "$full" stored built
  fi
  if [[ -n "$CONTROL" ]] && other=$(plain "$CONTROL" "full-$v" "control-$v"); then
    agree "control-$v" "$dir" "$other" "$full"
  fi
done
