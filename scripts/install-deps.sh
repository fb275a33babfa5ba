#!/usr/bin/env bash
# Installs tunedb's build and test dependencies from Debian 12's archive.
# Nothing is downloaded from anywhere else. Run as root (or via sudo).
# clang and its runtime (libFuzzer, the sanitizers) are for the fuzz build
# (scripts/fuzz.sh, docs/fuzzing.md), which scripts/test.sh runs.
#
#   scripts/install-deps.sh            # everything: build, tests, fuzz
#   scripts/install-deps.sh --bundle   # only what `cmake --build build
#       --target bundle` needs with TUNEDB_BUILD_TESTS=OFF and
#       TUNEDB_BUILD_BENCH=OFF (the container image's build stage)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
bundle_only=0
case "${1:-}" in
  "") ;;
  --bundle) bundle_only=1 ;;
  *) echo "install-deps.sh: unknown argument $1" >&2; exit 2 ;;
esac
# What CMakeLists.txt finds (find_package, pkg_check_modules, protoc and
# grpc_cpp_plugin) plus the compiler, Ninja and make_bundle.sh's patchelf.
build_deps=(
  build-essential cmake ninja-build pkg-config patchelf
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev libabsl-dev libpq-dev libpqxx-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  prometheus-cpp-dev libsystemd-dev
)
test_deps=(
  sqlite3 postgresql
  libgtest-dev libgmock-dev libbenchmark-dev prometheus
  python3 python3-grpcio python3-protobuf python3-yaml python3-setuptools
  python3-pip openssl
  clang libclang-rt-dev
  chromium  # tests/tuner/report_browser_test.sh: the report in a browser
)
packages=("${build_deps[@]}")
if [ "$bundle_only" -eq 0 ]; then packages+=("${test_deps[@]}"); fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}"
