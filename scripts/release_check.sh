#!/usr/bin/env bash
# The checks to run before a release, each as a new user would meet the
# project, on a Debian 12 host with root and Debian's archive (about 45 min
# on 2 cores; no GPU needed):
#   1. scripts/fresh_debian_check.sh: the README's set-up commands in a
#      fresh debootstrapped Debian 12 (install-deps.sh, test.sh, run-daemon.sh);
#   2. deploy/container/build_image.sh: the container image built without a
#      registry and its contents checked (no compiler, headers or tests;
#      licences kept);
#   3. deploy/container/run_check.sh: that image run as the DaemonSet runs
#      it and driven through its socket and health port.
#
#   sudo scripts/release_check.sh [--skip-fresh] [BUILD_IMAGE_ARGS...]
#
# --skip-fresh leaves out step 1; other arguments go to build_image.sh
# (e.g. --rebase, --check-only).
set -euo pipefail
cd "$(dirname "$0")/.."
skip_fresh=0
if [[ "${1:-}" == "--skip-fresh" ]]; then skip_fresh=1; shift; fi
tag=localhost/tunedb:latest
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ "${args[$i]}" == --tag ]] && tag="${args[$((i + 1))]}"
done
if [[ $skip_fresh -eq 0 ]]; then
  scripts/fresh_debian_check.sh
fi
deploy/container/build_image.sh "$@"
deploy/container/run_check.sh --tag "$tag"
echo "release checks passed"
