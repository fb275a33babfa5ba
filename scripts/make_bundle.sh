#!/usr/bin/env bash
# Makes a relocatable tunedb bundle: DIR/{bin,lib,tests,share} holding the
# given programs, every non-system shared library they need (from ldd), and
# $ORIGIN-relative run paths, so the folder runs on another Linux host with
# a compatible glibc/libstdc++ and an NVIDIA driver.
#
#   scripts/make_bundle.sh --out DIR [--tarball FILE] [--bin PROG]...
#       [--lib SHAREDLIB]... [--tests PROG]... [--share FILE]...
#
# Left out on purpose: glibc and the compiler runtime (libc, libm, libdl,
# libpthread, librt, ld-linux, libstdc++, libgcc_s: the host's are used),
# zlib and OpenSSL 3 (libz.so.1, libssl.so.3, libcrypto.so.3: on every
# current distribution, and security updates should come from the host),
# the NVIDIA driver (libcuda, libnvidia-*) and cuDNN (libcudnn*: chosen per
# worker with --cudnn-lib-dir / LD_LIBRARY_PATH). The CUDA runtime
# (libcudart) IS carried: the worker and tests need it and it is small.
# The licences of the carried libraries go to share/licenses/
# (bundle_licenses.sh: their Debian packages' copyright files).
set -euo pipefail

out=""
tarball=""
bins=()
libs=()
tests=()
shares=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --tarball) tarball="$2"; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --lib) libs+=("$2"); shift 2 ;;
    --tests) tests+=("$2"); shift 2 ;;
    --share) shares+=("$2"); shift 2 ;;
    *) echo "make_bundle.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$out" ]] || { echo "make_bundle.sh: --out is required" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "make_bundle.sh: needs patchelf" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
[[ ${#tests[@]} -eq 0 ]] || mkdir -p "$out/tests"
[[ ${#shares[@]} -eq 0 ]] || mkdir -p "$out/share"

skip_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so|libstdc\+\+\.so|libgcc_s\.so|libz\.so|libssl\.so|libcrypto\.so|libsystemd\.so|libcudnn|libcuda\.so|libnvidia|libnvrtc|libcublas)'

copy_deps() {  # copies the non-system libraries `$1` needs into lib/
  ldd "$1" | awk '/=>/ {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip_re ]] && continue
    [[ "$path" == "not" || -z "$path" ]] && continue
    if [[ ! -e "$out/lib/$name" ]]; then
      cp -L "$path" "$out/lib/$name"
      chmod u+w "$out/lib/$name"
    fi
  done
}

place() {  # place FILE SUBDIR RPATH
  local dst="$out/$2/$(basename "$1")"
  cp -L "$1" "$dst"
  chmod u+w "$dst"
  strip --strip-debug "$dst" 2>/dev/null || true
  patchelf --set-rpath "$3" "$dst"
  copy_deps "$1"
}

for b in "${bins[@]}"; do place "$b" bin '$ORIGIN/../lib'; done
for l in "${libs[@]}"; do
  place "$l" lib '$ORIGIN'
  # Install shared libraries under their SONAME, with the dev symlink.
  soname=$(patchelf --print-soname "$l" 2>/dev/null || true)
  base=$(basename "$l")
  if [[ -n "$soname" && "$soname" != "$base" ]]; then
    mv "$out/lib/$base" "$out/lib/$soname"
    ln -sf "$soname" "$out/lib/${soname%%.so*}.so"
  fi
done
for t in "${tests[@]}"; do place "$t" tests '$ORIGIN/../lib'; done
for s in "${shares[@]}"; do cp "$s" "$out/share/"; done
for l in "$out"/lib/*; do
  [[ -L "$l" ]] && continue
  patchelf --set-rpath '$ORIGIN' "$l"
done

# Every carried program must resolve everything but the left-out libraries.
missing=$(for f in "$out"/bin/* "$out"/tests/* ; do
  [[ -f "$f" ]] && ldd "$f" | grep 'not found' | grep -Ev 'libcudnn|libcuda\.so' || true
done)
if [[ -n "$missing" ]]; then
  echo "make_bundle.sh: unresolved libraries:" >&2
  echo "$missing" >&2
  exit 1
fi

# The Debian copyright file of every library carried (share/licenses/).
"$(dirname "$0")/bundle_licenses.sh" "$out"

if [[ -n "$tarball" ]]; then
  tar -C "$(dirname "$out")" -czf "$tarball" "$(basename "$out")"
  echo "bundle: $out ($(du -sh "$out" | cut -f1)), tarball $tarball ($(du -h "$tarball" | cut -f1))"
else
  echo "bundle: $out ($(du -sh "$out" | cut -f1))"
fi
