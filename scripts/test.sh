#!/usr/bin/env bash
# Builds tunedb with warnings as errors and runs every test suite (ctest).
# GPU tests (label 'gpu') skip with a reason where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DTUNEDB_WERROR=ON
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300
