#!/usr/bin/env bash
# Installs tunedb's build and test dependencies from Debian 12's archive.
# Nothing is downloaded from anywhere else. Run as root (or via sudo).
# clang and its runtime (libFuzzer, the sanitizers) are for the fuzz build
# (scripts/fuzz.sh, docs/fuzzing.md), which scripts/test.sh runs.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config patchelf \
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
  libsqlite3-dev sqlite3 libabsl-dev \
  postgresql libpq-dev libpqxx-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev \
  prometheus-cpp-dev libsystemd-dev prometheus \
  python3 python3-grpcio python3-protobuf python3-yaml python3-setuptools \
  python3-pip openssl \
  clang libclang-rt-dev
