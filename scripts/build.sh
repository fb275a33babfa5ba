#!/usr/bin/env bash
# Configures and builds tunedb into ./build (Release with debug info).
# Arguments starting with -D go to CMake's configure step; `--target T...`
# builds only those targets.
set -euo pipefail
cd "$(dirname "$0")/.."
defs=() targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) shift; while [ $# -gt 0 ] && [[ "$1" != -* ]]; do targets+=(--target "$1"); shift; done ;;
    *) defs+=("$1"); shift ;;
  esac
done
# ccache, where installed, makes rebuilds after a checkout switch cheap.
if command -v ccache >/dev/null 2>&1; then
  defs=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache "${defs[@]}")
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${defs[@]}"
cmake --build build -j"$(nproc)" "${targets[@]}"
