#!/usr/bin/env bash
# The README's tour (scripts/tour.sh) on the simulated finder: it must run,
# and every command it prints must paste back as the same arguments (a key
# text with spaces comes quoted).
#   tour_test.sh REPO_ROOT BUILD_DIR
set -uo pipefail
root=$1 build=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$root/scripts/tour.sh" "$build" --finder simulated > "$out" 2>&1; then
  echo "FAIL: the tour exited non-zero"; cat "$out"; exit 1
fi
checked=0
while IFS= read -r line; do
  # What a user pastes: the line without its prompt, split as the shell does.
  eval "set -- ${line#\$ }"
  case "$2" in
    tune|lookup)
      if [[ $# -ne 3 ]]; then
        echo "FAIL: '$line' pastes as $# words, not 3 (tunedb $2 KEY)"; exit 1
      fi
      checked=$((checked + 1)) ;;
  esac
done < <(grep '^\$ tunedb ' "$out")
if [[ $checked -lt 2 ]]; then
  echo "FAIL: the tour printed no tune/lookup command"; cat "$out"; exit 1
fi
echo "tour ran; $checked tune/lookup commands paste back as printed"
