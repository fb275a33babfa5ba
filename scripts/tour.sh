#!/usr/bin/env bash
# The README's five-minute tour, as a script: starts tunedbd on a fresh
# database and runs the CLI against it, printing each command before its
# output. Usage: scripts/tour.sh DIR [tunedbd flags...], DIR being a build
# tree or a folder holding tunedbd, tunedb-worker and tunedb:
#   e.g. scripts/tour.sh build --finder simulated       (no GPU)
#        scripts/tour.sh .bundle/tunedb/bin              (GPU host)
set -uo pipefail
DIR=$(cd "$1" && pwd); shift
if [[ -x "$DIR/bin/tunedbd" ]]; then
  BIN=$DIR/bin
else
  BIN=$DIR
fi
T=/tmp/tunedb-tour
rm -rf "$T"; mkdir -p "$T"
"$BIN/tunedbd" --db "$T/tunedb.db" --socket "$T/tunedb.sock" --log-level warn "$@" &
DAEMON=$!
for _ in $(seq 1 300); do [[ -S "$T/tunedb.sock" ]] && break; sleep 0.1; done
export TUNEDB_ADDRESS="unix:$T/tunedb.sock"
# Prints the command as it can be pasted (arguments with spaces quoted), then
# runs it.
run() {
  local line='$' a
  for a in "$@"; do
    if [[ $a == *[[:space:]]* ]]; then line+=" \"$a\""; else line+=" $a"; fi
  done
  echo "$line"; "$@" 2>&1; echo
}
tunedb() { "$BIN/tunedb" "$@"; }
KEY="op=fwd n=64 c=256 k=256 in=14x14 filt=3x3 pad=1x1 stride=1x1 dil=1x1 groups=1 mode=xcorr in_type=f16 out_type=f16 compute=f32 layout=nhwc tc=1 tf32=0"
run tunedb devices
run tunedb tune "$KEY"
run tunedb lookup "$KEY"
run tunedb prewarm -m resnet50 --batch 64 --dtype fp16 --layout nhwc --no-progress
run tunedb query --op fwd --limit 5
run tunedb show 1
run tunedb stats
kill -TERM $DAEMON; wait $DAEMON
rm -rf "$T"
