# Sourced by the GPU scripts that run pytorch_dropin_bench.py once per
# process (model_table.sh, warm_ab.sh). keep_row BASE RC WHAT [KEY=VALUE...]:
# the last JSON line the process printed to BASE.out, with each KEY=VALUE
# added (a value of digits as a number), the preload's exit line ("preload")
# and libtunedb_cudnn_call_timer.so's sums ("timer") from BASE.err, is
# appended to $RUNS ($PY runs the Python); a process that printed none is
# reported as WHAT FAILED with its exit code RC and its stderr's tail, and
# keep_row returns 1. Otherwise it prints WHAT, the first iteration and
# the preload's line.
keep_row() {
  local base=$1 rc=$2 what=$3; shift 3
  local json timed line
  json=$(grep '^{' "$base.out" | tail -1)
  timed=$(grep '^{"cudnn_call_timer"' "$base.err" | tail -1)
  line=$(grep '^tunedb preload:' "$base.err" | tail -1)
  if [[ -z "$json" ]]; then
    echo "  $what FAILED (exit $rc):"
    tail -n 12 "$base.err" | sed 's/^/    /'
    return 1
  fi
  "$PY" -c 'import json, re, sys
r = json.loads(sys.argv[1]); r["preload"] = sys.argv[3]
if sys.argv[2]: r["timer"] = json.loads(sys.argv[2])["cudnn_call_timer"]
for kv in sys.argv[4:]:
    k, v = kv.split("=", 1)
    r[k] = int(v) if re.fullmatch(r"-?[0-9]+", v) else v
print(json.dumps(r))' "$json" "$timed" "$line" "$@" >> "$RUNS"
  printf '  %s first %ss %s\n' "$what" \
    "$(grep -o '"first_iter_s": [0-9.]*' "$base.out" | tail -1 | cut -d' ' -f2)" "$line"
}
