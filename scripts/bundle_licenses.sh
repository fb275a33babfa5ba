#!/usr/bin/env bash
# Copies the licence of every third-party shared library in a bundle's lib/
# into its share/licenses/: for each library, the Debian package that owns
# it (dpkg -S) and that package's /usr/share/doc/PKG/copyright, as
# share/licenses/PKG/copyright, with share/licenses/LIBRARIES mapping each
# library to its package. tunedb's own libraries (libtunedb*) are skipped.
# A library no Debian package owns (libcudart from a CUDA toolkit) is named
# on stderr (add its licence by hand); with --strict that is an error.
#
#   scripts/bundle_licenses.sh [--strict] BUNDLE_DIR
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
for path in "$dir"/lib/*; do
  [[ -f "$path" && ! -L "$path" ]] || continue
  name=$(basename "$path")
  [[ "$name" == libtunedb* ]] && continue
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
