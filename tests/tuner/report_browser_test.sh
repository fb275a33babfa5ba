#!/usr/bin/env bash
# `tunedb report` as a person sees it: a database made by the simulated
# finder (a model tuned under a made-up older cuDNN version, revalidated for
# the daemon's own, its answers served) is rendered into report.html, which
# headless Chromium loads. The page must run its script without errors and
# show every section and figure, with bars and a line in them. Exit 77
# (skipped) when Chromium is not installed.
#   report_browser_test.sh BUILD_DIR [SCREENSHOT.png]
set -uo pipefail
build=$1 screenshot=${2:-}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
T=$(mktemp -d)
daemon=0
cleanup() {
  if [[ $daemon -ne 0 ]]; then kill "$daemon" 2>/dev/null; wait "$daemon"; fi
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

start_daemon() {
  rm -f "$T/d.sock"
  "$build/bin/tunedbd" --db "$T/tunedb.db" --socket "$T/d.sock" \
    --finder simulated --simulated slow_ms=5 --log-level warn &
  daemon=$!
  for _ in $(seq 1 300); do [[ -S "$T/d.sock" ]] && return; sleep 0.1; done
  fail "tunedbd did not start"
}
stop_daemon() { kill "$daemon"; wait "$daemon"; daemon=0; }
tunedb() { "$build/bin/tunedb" --address "unix:$T/d.sock" "$@"; }

start_daemon
model=(-m resnet18 --batch 2 --ops fwd,bwd_filter)
tunedb prewarm "${model[@]}" --no-progress > /dev/null || fail "prewarm"
# The same records as a made-up cuDNN 9.14.0's, revalidated for 9.19.0.
tunedb export | sed 's/cudnn=9\.19\.0/cudnn=9.14.0/' > "$T/old.jsonl" ||
  fail "export"
tunedb invalidate --all --yes > /dev/null || fail "invalidate"
tunedb import "$T/old.jsonl" > /dev/null || fail "import"
tunedb revalidate --from 9.14 --no-progress > /dev/null || fail "revalidate"
# Answers served: each problem looked up twice (counted at the next flush;
# stopping the daemon flushes).
tunedb prewarm "${model[@]}" --no-progress > /dev/null || fail "served"
tunedb prewarm "${model[@]}" --no-progress > /dev/null || fail "served"
stop_daemon
start_daemon
tunedb report -o "$T/report.html" -m resnet18 --batch 2 --ops all ||
  fail "tunedb report exited $?"
stop_daemon

"$browser" --headless --disable-gpu --no-sandbox --no-first-run \
  --enable-logging=stderr --v=0 --virtual-time-budget=2000 \
  --dump-dom "file://$T/report.html" > "$T/dom.html" 2> "$T/console.log" ||
  { cat "$T/console.log"; fail "chromium exited $?"; }
if grep -E 'CONSOLE|Uncaught' "$T/console.log"; then
  fail "the page logged to its console (script errors above)"
fi
grep -q 'data-script="ok"' "$T/dom.html" ||
  fail "the page's script did not run to its end"
for id in summary devices saved weeks heuristic predictions revalidation workspaces
do
  grep -q "<section id=\"$id\"" "$T/dom.html" || fail "no section '$id'"
done
for figure in saved heuristic-rank heuristic-gain; do
  svg=$(grep -o "<svg data-figure=\"$figure\".*" "$T/dom.html" |
        sed 's#</svg>.*##')
  [[ -n "$svg" ]] || fail "no figure '$figure'"
  # Bars with a height; the speed-up over the heuristic's first choice may
  # have none to count (the simulated finder ranks no heuristic), and says so.
  grep -Eq '<rect [^>]*height="[1-9]' <<< "$svg" ||
    { [[ $figure == heuristic-gain ]] &&
      grep -q 'No record to count here.' <<< "$svg"; } ||
    fail "figure '$figure' draws no bar"
done
# What the browser drew in each figure (set by the page's script): the
# saving's day bar, axis and four labels; the ranks' title, bars and labels.
drawn() {
  grep -o "<svg data-figure=\"$1\"[^>]*data-drawn=\"[0-9]*\"" "$T/dom.html" |
    grep -o 'data-drawn="[0-9]*"' | grep -o '[0-9]*'
}
[[ $(drawn saved) -ge 6 ]] ||
  fail "the saving plot draws $(drawn saved) elements, not 6 or more"
[[ $(drawn heuristic-rank) -ge 13 ]] ||
  fail "the rank plot draws $(drawn heuristic-rank) elements, not 13 or more"
grep -q '<td>cuDNN 9.14.0</td><td>cuDNN 9.19.0</td>' "$T/dom.html" ||
  fail "the revalidation is not shown"
grep -Eq '<td>9\.19\.0</td><td class="n" data-v="[1-9]' "$T/dom.html" ||
  fail "no records shown for cuDNN 9.19.0"
grep -Eq '<b>[1-9][0-9]*</b><span>answers served' "$T/dom.html" ||
  fail "no answers served shown"
if [[ -n "$screenshot" ]]; then
  "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --hide-scrollbars --window-size=1200,2600 \
    --screenshot="$screenshot" "file://$T/report.html" 2> /dev/null ||
    fail "no screenshot"
fi
echo "report.html: $(wc -c < "$T/report.html") bytes; loaded in $browser" \
  "without console errors, every section and figure shown"
