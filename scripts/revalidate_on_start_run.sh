#!/usr/bin/env bash
# The daemon's own revalidation on a GPU machine (docs/revalidation.md, "In
# the background"): a database holding only cuDNN 9.14's records of a run of
# scripts/revalidate_run.sh is given to a daemon that serves 9.14 and 9.19;
# on start it makes the 9.19 records by itself. Then every revalidated
# choice is judged against the run's full 9.19 search by re-timing
# (scripts/revalidation_agree.sh's tool), and the revalidation's search time
# is summed against the full search's for the same keys.
#
# With OLD_DRIVER set (e.g. 570.86.10), a driver upgrade instead: the
# database holds the run's full 9.19 records as if measured under that older
# driver (their driver_version rewritten), and the daemon re-times them on
# start for the machine's own, newer driver ("After a driver upgrade").
#
#   scripts/revalidate_on_start_run.sh BUNDLE_DIR RUN_DIR
#
# RUN_DIR holds full-9.14.jsonl[.xz] and full-9.19.jsonl[.xz]. Environment:
# PY (default /opt/torch/.venv/bin/python), WORK (default
# /tmp/tunedb-onstart), OUT (default ./out), WAIT_S (600: the longest wait
# for the revalidation), OLD_DRIVER (unset). Writes under $OUT:
# on-start-9.19.jsonl (what the daemon made), stats.json, on-start.txt (the
# daemon's revalidation log lines, the wall time and the search times),
# agree-on-start-9.19.{json,out}, tunedbd.log.
set -uo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
B=$(cd "${1:?bundle folder}" && pwd)
RUN=$(cd "${2:?run folder}" && pwd)
PY=${PY:-/opt/torch/.venv/bin/python}
WORK=${WORK:-/tmp/tunedb-onstart}
source "$(dirname "$0")/revalidation_env.sh"
for v in 9.14 9.19; do plain "$RUN" "full-$v" "full-$v" > /dev/null || exit 1; done
OLD="$WORK/full-9.14.jsonl"
LIBS=(--cudnn-lib-dir "$SYS_CUDNN" --cudnn-lib-dir "$PIP_CUDNN")
if [[ -n "${OLD_DRIVER:-}" ]]; then
  # 9.19 alone: a daemon serving 9.14 too would also make its records.
  LIBS=(--cudnn-lib-dir "$PIP_CUDNN")
  OLD="$WORK/old-driver-9.19.jsonl"
  "$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    r["driver_version"] = sys.argv[2]
    print(json.dumps(r))' "$WORK/full-9.19.jsonl" "$OLD_DRIVER" > "$OLD" || exit 1
fi
SOCK="$WORK/d.sock"
T=("$B/bin/tunedb" --address "unix:$SOCK")
rm -f "$SOCK" "$WORK"/onstart.db*
DAEMON=
# Starts the daemon with extra flags "$@"; waits for its socket.
start() {
  rm -f "$SOCK"
  LD_LIBRARY_PATH="$B/lib${EXTRA:+:$EXTRA}" "$B/bin/tunedbd" \
    --db "$WORK/onstart.db" --socket "$SOCK" --finder cudnn \
    "${LIBS[@]}" \
    --worker "$B/bin/tunedb-worker" --log-level info "$@" >> "$OUT/tunedbd.log" 2>&1 &
  DAEMON=$!
  for _ in $(seq 1 300); do [[ -S "$SOCK" ]] && break; sleep 0.1; done
  "${T[@]}" devices > /dev/null || { echo "daemon did not come up"; exit 1; }
}
stop() { kill -TERM "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null; }
trap stop EXIT

start --revalidate-on-start false
"${T[@]}" import "$OLD"
stop
now() { "$PY" -c 'import time; print(time.time())'; }
T0=$(now)
start
for i in $(seq 1 $((${WAIT_S:-600} * 2))); do
  grep -q "background revalidation \(done\|stopped\)" "$OUT/tunedbd.log" && break
  # Nothing planned: no "revalidating N keys" line after 20 s.
  ((i > 40)) && ! grep -q "revalidating [0-9]* keys" "$OUT/tunedbd.log" && break
  sleep 0.5
done
T1=$(now)
{
  grep "revalidat" "$OUT/tunedbd.log" | tail -n 5
  "$PY" -c 'import sys; print("wall from start to done: %.1f s" % (float(sys.argv[2]) - float(sys.argv[1])))' "$T0" "$T1"
} | tee "$OUT/on-start.txt"
"${T[@]}" --json stats > "$OUT/stats.json"
NEW=$("$PY" -c 'import json, sys
print(json.loads(open(sys.argv[1]).readline())["key"].split("cudnn=")[1].split()[0])' \
  "$WORK/full-9.19.jsonl")
"${T[@]}" export --filter "cudnn=$NEW" -o "$OUT/on-start-9.19.jsonl"
# The search time of what the daemon made against the full search's, summed
# over the keys both hold (search_ms of each record); with OLD_DRIVER, a
# record still under it was not made again and does not count.
"$PY" -c 'import json, sys
def times(path, skip_driver=""):
    return {r["key"]: r.get("search_ms", 0.0)
            for r in map(json.loads, open(path))
            if not skip_driver or r["driver_version"] != skip_driver}
made, full = times(sys.argv[1], sys.argv[3]), times(sys.argv[2])
both = [k for k in made if k in full]
a = sum(made[k] for k in both) / 1000
b = sum(full[k] for k in both) / 1000
print("search time over %d keys: %.1f s against %.1f s for the full searches:"
      " %.3fx" % (len(both), a, b, a / b if b else float("nan")))' \
  "$OUT/on-start-9.19.jsonl" "$WORK/full-9.19.jsonl" "${OLD_DRIVER:-}" |
  tee -a "$OUT/on-start.txt"
stop
trap - EXIT
LD_LIBRARY_PATH="$PIP_CUDNN:$B/lib${EXTRA:+:$EXTRA}" "$B/tests/tunedb_graph_regret" \
  --phase agree --judged "$OUT/on-start-9.19.jsonl" \
  --reference "$WORK/full-9.19.jsonl" --json "$OUT/agree-on-start-9.19.json" \
  > "$OUT/agree-on-start-9.19.out" 2> "$OUT/agree-on-start-9.19.err"
echo "=== agree on-start-9.19: exit $?"
cat "$OUT/agree-on-start-9.19.out"
