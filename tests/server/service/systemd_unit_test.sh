#!/usr/bin/env bash
# deploy/tunedbd.service passes `systemd-analyze verify` without a warning,
# with ExecStart pointing at the built tunedbd (verify checks that the
# program exists), and is a Type=notify unit with a watchdog.
# deploy/tunedbd.socket (optional socket activation) passes it too, next to
# the service, and listens on the socket path the service's config uses.
# Usage: systemd_unit_test.sh <deploy/tunedbd.service> <tunedbd>
# Exits 77 (ctest: skipped) where systemd-analyze is not installed.
set -euo pipefail
unit=$1
tunedbd=$2
if ! command -v systemd-analyze > /dev/null; then
  echo "SKIP: systemd-analyze not installed (Debian package systemd)"
  exit 77
fi
grep -qx 'Type=notify' "$unit" || { echo "FAIL: not Type=notify"; exit 1; }
grep -q '^WatchdogSec=' "$unit" || { echo "FAIL: no WatchdogSec="; exit 1; }
if grep -q '^PrivateDevices=' "$unit"; then
  echo "FAIL: PrivateDevices= hides /dev/nvidia* from the workers"; exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|/opt/tunedb/bin/tunedbd|$tunedbd|g" "$unit" > "$dir/tunedbd.service"
socket_unit="$(dirname "$unit")/tunedbd.socket"
cp "$socket_unit" "$dir/tunedbd.socket"
socket_path=$(sed -n 's/^socket = //p' "$(dirname "$unit")/tunedbd.conf")
grep -qx "ListenStream=$socket_path" "$socket_unit" || {
  echo "FAIL: tunedbd.socket does not listen on $socket_path"; exit 1; }
grep -qx 'RuntimeDirectoryPreserve=yes' "$unit" || {
  echo "FAIL: stopping the service would remove the activated socket"; exit 1; }
set +e
output=$(systemd-analyze verify "$dir/tunedbd.service" "$dir/tunedbd.socket" 2>&1)
rc=$?
set -e
if [ $rc -ne 0 ] || [ -n "$output" ]; then
  echo "FAIL: systemd-analyze verify (rc $rc):"
  echo "$output"
  exit 1
fi
echo "PASS: systemd-analyze verify found nothing to report"
