#!/usr/bin/env bash
# The installed tunedb package, checked from a user's side (ctest
# install_consumer, label `install`):
#
#  1. `cmake --install BUILD_DIR --prefix <temporary folder>`;
#  2. the installed headers are exactly include/tunedb/*.h, with version.h
#     generated from version.h.in (the headers that include <cudnn.h> only
#     in a build with cuDNN), and nothing else lies under include/;
#  3. tests/install/consumer is configured with find_package(tunedb CONFIG
#     REQUIRED) against that prefix; its one source file includes every
#     header found under the package's include directories; its programs,
#     linked against tunedb::client (libtunedb.so) and tunedb::client_static,
#     build with -Wall -Wextra -Werror and run;
#  4. tests/client/tunedb_c_smoke.c (the C API from C) compiles as C99,
#     links and runs with `pkg-config --cflags --libs tunedb` from the
#     prefix, as a C user's program would.
#
# Everything happens in a temporary folder, removed at exit.
#
#   install_test.sh BUILD_DIR SOURCE_DIR HAVE_CUDNN(ON|OFF) CMAKE GENERATOR CXX CC
set -euo pipefail
[[ $# -eq 7 ]] || {
  echo "usage: install_test.sh BUILD_DIR SOURCE_DIR HAVE_CUDNN CMAKE GENERATOR CXX CC" >&2
  exit 2
}
BUILD=$1 SRC=$2 HAVE_CUDNN=$3 CMAKE=$4 GENERATOR=$5 CXX=$6 CC=$7

T=$(mktemp -d "${TMPDIR:-/tmp}/tunedb-install-test-XXXXXX")
trap 'rm -rf "$T"' EXIT
PREFIX=$T/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }
# step NAME COMMAND...: runs COMMAND with its output in $T/NAME.log, which
# is printed if it fails.
step() {
  local name=$1; shift
  echo "--- $name"
  if ! "$@" > "$T/$name.log" 2>&1; then
    cat "$T/$name.log" >&2
    fail "$name: $*"
  fi
}

# 1. Install.
step install "$CMAKE" --install "$BUILD" --prefix "$PREFIX"

# 2. The installed headers.
expected=$(cd "$SRC/include/tunedb" && for f in *.h *.h.in; do
  [[ -e "$f" ]] || continue
  if [[ "$HAVE_CUDNN" != ON ]] && grep -q '^#include <cudnn.h>' "$f"; then
    continue
  fi
  echo "${f%.in}"
done | sed 's|^|tunedb/|' | sort)
installed=$(cd "$PREFIX/include" && find . -type f | sed 's|^\./||' | sort)
if [[ "$installed" != "$expected" ]]; then
  diff -u --label include/tunedb --label installed <(echo "$expected") \
    <(echo "$installed") >&2 || true
  fail "the installed headers differ from include/tunedb"
fi
grep -q "TUNEDB_VERSION_STRING \"[0-9]" "$PREFIX/include/tunedb/version.h" ||
  fail "the installed tunedb/version.h has no version"
echo "installed headers: ${installed//$'\n'/ }"

# 3. A CMake project using the package.
step consumer_configure "$CMAKE" -S "$SRC/tests/install/consumer" \
  -B "$T/consumer" -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^tunedb_DIR:PATH=//p' "$T/consumer/CMakeCache.txt")
[[ "$found" == "$PREFIX"/* ]] ||
  fail "find_package(tunedb) found $found, not the package in $PREFIX"
included=$(sed -n 's|^#include "\(tunedb/.*\)"$|\1|p' \
  "$T/consumer/all_tunedb_headers.h" | sort)
[[ "$included" == "$installed" ]] ||
  fail "the consumer included ${included//$'\n'/ } instead of every installed header"
step consumer_build "$CMAKE" --build "$T/consumer" -j2
ldd "$T/consumer/consumer_shared" > "$T/ldd_shared.txt"
ldd "$T/consumer/consumer_static" > "$T/ldd_static.txt"
grep -q "libtunedb\.so.* => $PREFIX/" "$T/ldd_shared.txt" ||
  fail "consumer_shared does not load libtunedb.so from $PREFIX"
! grep -q libtunedb "$T/ldd_static.txt" ||
  fail "consumer_static loads libtunedb.so"
for variant in shared static; do
  step "consumer_$variant" "$T/consumer/consumer_$variant"
  cat "$T/consumer_$variant.log"
  if [[ "$HAVE_CUDNN" == ON ]]; then
    grep -q "^cudnn helpers: ok" "$T/consumer_$variant.log" ||
      fail "consumer_$variant did not check the cuDNN helpers"
  fi
done

# 4. A C program through pkg-config.
command -v pkg-config > /dev/null || fail "pkg-config is not installed"
PKG_CONFIG_PATH=$(dirname "$(find "$PREFIX" -name tunedb.pc)")
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags tunedb) || fail "pkg-config --cflags tunedb"
libs=$(pkg-config --libs tunedb) || fail "pkg-config --libs tunedb"
# shellcheck disable=SC2086
step c_build "$CC" -std=c99 -Wall -Wextra -Werror $cflags \
  "$SRC/tests/client/tunedb_c_smoke.c" -o "$T/c_smoke" $libs \
  -Wl,-rpath,"$(pkg-config --variable=libdir tunedb)"
step c_run "$T/c_smoke"
cat "$T/c_run.log"

echo "install test: ok"
