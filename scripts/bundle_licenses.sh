#!/usr/bin/env bash
# Copies the licence of every third-party shared library in a bundle's lib/
# into its share/licenses/: for each library, the Debian package that owns
# it (dpkg -S) and that package's /usr/share/doc/PKG/copyright, as
# share/licenses/PKG/copyright, with share/licenses/LIBRARIES mapping each
# library to its package. tunedb's own libraries (libtunedb*) are skipped.
# The CUDA runtime (libcudart), which no Debian package owns, takes the
# licence its toolkit ships (EULA.txt of an NVIDIA installer's toolkit, or
# License.txt of the nvidia-cuda-runtime wheel's dist-info), looked for in
# CUDA_HOME (default /usr/local/cuda), as share/licenses/cuda-runtime/. Any
# other library no Debian package owns is named on stderr (add its licence
# by hand); with --strict that is an error.
#
#   [CUDA_HOME=DIR] scripts/bundle_licenses.sh [--strict] BUNDLE_DIR
#
# make_bundle.sh runs it; deploy/container/Dockerfile runs it again after
# adding the libraries the image carries beyond the bundle.
set -euo pipefail
strict=0
if [[ "${1:-}" == "--strict" ]]; then strict=1; shift; fi
dir=${1:?usage: bundle_licenses.sh [--strict] BUNDLE_DIR}
command -v dpkg >/dev/null || { echo "bundle_licenses.sh: needs dpkg" >&2; exit 2; }
lic="$dir/share/licenses"
rm -rf "$lic"
mkdir -p "$lic"
unowned=()
cuda=${CUDA_HOME:-/usr/local/cuda}
# cuda_runtime_licence NAME: copies the CUDA runtime's licence, if found.
cuda_runtime_licence() {
  local src
  for src in "$cuda/EULA.txt" \
      "$cuda"/dist-info/nvidia_cuda_runtime-*.dist-info/licenses/License.txt; do
    [[ -f "$src" ]] || continue
    mkdir -p "$lic/cuda-runtime"
    cp -L "$src" "$lic/cuda-runtime/copyright"
    echo "$1 cuda-runtime" >> "$lic/LIBRARIES"
    return 0
  done
  return 1
}
for path in "$dir"/lib/*; do
  [[ -f "$path" && ! -L "$path" ]] || continue
  name=$(basename "$path")
  [[ "$name" == libtunedb* ]] && continue
  if [[ "$name" == libcudart.so* ]] && cuda_runtime_licence "$name"; then
    continue
  fi
  pkgs=$(dpkg -S "*/$name" 2>/dev/null | cut -d: -f1 | tr ',' '\n' \
         | sed 's/^ *//' | sort -u || true)
  if [[ -z "$pkgs" ]]; then
    unowned+=("$name")
    continue
  fi
  for pkg in $pkgs; do
    src="/usr/share/doc/$pkg/copyright"
    if [[ ! -f "$src" ]]; then
      unowned+=("$name ($pkg has no $src)")
      continue
    fi
    mkdir -p "$lic/$pkg"
    cp -L "$src" "$lic/$pkg/copyright"
    echo "$name $pkg" >> "$lic/LIBRARIES"
  done
done
if [[ ${#unowned[@]} -gt 0 ]]; then
  echo "bundle_licenses.sh: no Debian licence found for:" >&2
  printf '  %s\n' "${unowned[@]}" >&2
  [[ $strict -eq 0 ]] || exit 1
fi
echo "licences: $(ls "$lic" | grep -cv '^LIBRARIES$') packages in $lic"
