#!/usr/bin/env bash
# Checks the README's two set-up commands as a new user would: in a fresh
# Debian 12 (bookworm, minbase) made with debootstrap, on a clean clone of
# this repository's HEAD. Needs root and Debian's archive; takes ~10 min.
#
#   sudo scripts/fresh_debian_check.sh [ROOTFS_DIR]   # default /tmp/tunedb-fresh
#
# Runs `scripts/install-deps.sh && scripts/test.sh`, then
# `scripts/install-deps.sh && scripts/run-daemon.sh` for 20 s, and prints
# the test summary and the daemon's start-up lines.
set -euo pipefail
ROOT=${1:-/tmp/tunedb-fresh}
REPO=$(cd "$(dirname "$0")/.." && pwd)
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
if [[ ! -x "$ROOT/bin/bash" ]]; then
  debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
rm -rf "$ROOT/root/tunedb"
git clone -q "$REPO" "$ROOT/root/tunedb"
mount --bind /proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/tmp"
trap 'umount "$ROOT/proc" "$ROOT/dev" "$ROOT/tmp" 2>/dev/null || true' EXIT
chroot "$ROOT" /bin/bash -c '
  set -e
  cd /root/tunedb
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  scripts/install-deps.sh && scripts/test.sh
  scripts/install-deps.sh && { timeout 20 scripts/run-daemon.sh || [ $? -eq 124 ]; }
'
echo "fresh Debian 12 check: both README commands passed"
