#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan into
# ./build-fuzz (apart from the normal gcc build in ./build), runs each for a
# bounded time or number of executions, one after another, and writes a
# report: per target its executions, time, exec/s, corpus size, coverage
# (edges and features) and crashes (docs/fuzzing.md).
#
#   scripts/fuzz.sh [--seconds N | --runs N] [--targets "key_text ..."]
#                   [--report FILE] [--build-dir DIR] [--no-build]
#
# Default: 20 seconds a target, every target, build in build-fuzz/ (another
# --build-dir keeps a long run apart from the one scripts/test.sh makes),
# report in <build dir>/fuzz/report.md. Each target grows its own corpus in
# <build dir>/fuzz/corpus/<target>/ (kept between runs) from the seeds in
# tests/fuzz/corpus/<target>/ and the inputs in tests/fuzz/regressions/;
# a crash is saved in <build dir>/fuzz/artifacts/<target>/. Exit 1 if any
# target crashed or failed a property.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=20 runs="" report="" build=1 dir=build-fuzz
targets="key_text shape_file import_line request request_stream worker_frame"
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; runs=""; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --report) report="$2"; shift 2 ;;
    --build-dir) dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "usage: $0 [--seconds N | --runs N] [--targets \"T ...\"]" \
            "[--report FILE] [--build-dir DIR] [--no-build]" >&2; exit 2 ;;
  esac
done
out=$dir/fuzz
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit="$commit + changes"; fi
report="${report:-$out/report.md}"

if [ "$build" = 1 ]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  build_start=$(date +%s)
  # Debug keeps assertions (ValidKey's check among them); -O1 keeps it fast.
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DTUNEDB_FUZZ=ON -DTUNEDB_BUILD_TESTS=OFF \
    -DTUNEDB_BUILD_BENCH=OFF -DTUNEDB_WITH_CUDNN=OFF "${launcher[@]}" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target tunedb_fuzzers
  echo "fuzz build: $(( $(date +%s) - build_start )) s"
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$out/logs" "$(dirname "$report")"
if [ -n "$runs" ]; then budget="$runs executions"; else budget="$seconds s"; fi
rows=() failed=0
for t in $targets; do
  bin=$dir/tests/fuzz/fuzz_$t
  corpus=$out/corpus/$t
  artifacts=$out/artifacts/$t
  log=$out/logs/$t.log
  mkdir -p "$corpus" "$artifacts"
  args=(-print_final_stats=1 -timeout=25 -artifact_prefix="$artifacts/")
  if [ -n "$runs" ]; then args+=(-runs="$runs"); else args+=(-max_total_time="$seconds"); fi
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
  inputs=("$corpus" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regressions/$t" ] && inputs+=("tests/fuzz/regressions/$t")
  echo "fuzz $t: $budget"
  start=$(date +%s)
  rc=0
  "$bin" "${args[@]}" "${inputs[@]}" >"$log" 2>&1 || rc=$?
  wall=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  status=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  if [ -z "$execs" ]; then execs=$(echo "$status" | sed -n 's/^#\([0-9]*\).*/\1/p'); fi
  cov=$(echo "$status" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$status" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$status" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
  crashes=$(find "$artifacts" -type f -newermt "@$start" | wc -l)
  if [ "$rc" -ne 0 ]; then
    failed=1
    what=$(grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|property failed' "$log" || echo "exit $rc")
    crash="yes ($crashes saved): $what"
  else
    crash="none"
  fi
  echo "  $t: ${execs:-?} executions in $wall s, ${rate:-?} exec/s, corpus $corp, cov ${cov:-?}, ft ${ft:-?}, crashes: $crash"
  rows+=("| $t | ${execs:-?} | $wall | ${rate:-?} | $corp | ${cov:-?} | ${ft:-?} | $crash |")
done

{
  echo "# Fuzz run: $budget a target"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit (at the start)," \
       "$(clang --version | head -1), ASan + UBSan, $(nproc) cores."
  echo "corpus: inputs in the target's corpus at the end (seeds and regressions that add coverage, and what the run found);"
  echo "seconds: wall time, the start (loading the corpus) included."
  echo "cov: edges covered; ft: libFuzzer's coverage features."
  echo
  echo "| target | executions | seconds | exec/s | corpus | cov | ft | crashes |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  printf '%s\n' "${rows[@]}"
} >"$report"
echo "report: $report"
exit "$failed"
