#!/usr/bin/env bash
# Builds tunedb with warnings as errors, then the fuzz build, runs each fuzz
# target for a bounded time (docs/fuzzing.md): TUNEDB_FUZZ_SECONDS a target,
# default 15; 0 leaves fuzzing out), and last every test suite (ctest), whose
# summary closes the output. GPU tests (label 'gpu') skip with a reason where
# there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DTUNEDB_WERROR=ON
fuzz_seconds="${TUNEDB_FUZZ_SECONDS:-15}"
if [ "$fuzz_seconds" != 0 ]; then
  scripts/fuzz.sh --seconds "$fuzz_seconds"
fi
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300
