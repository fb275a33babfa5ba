#!/usr/bin/env bash
# Runs the built image as the DaemonSet would, without a container runtime
# (for hosts where `podman run` cannot start containers), and checks it from
# outside through the shared socket. Needs root, buildah, util-linux and
# Debian's python3-yaml and python3-grpcio; takes under a minute.
#
#   sudo deploy/container/run_check.sh [--tag NAME] [--dir HOSTDIR]
#       [--cli PATH] [--finder NAME]
#
#   --tag NAME    the image (default localhost/tunedb:latest)
#   --dir HOSTDIR host folder standing for the DaemonSet's hostPath volumes:
#                 HOSTDIR/run is /run/tunedb, HOSTDIR/state /var/lib/tunedb
#                 (default: a new folder under /var/tmp, kept afterwards)
#   --cli PATH    the tunedb CLI run on the host (default: the image's own
#                 bundle CLI, run from the image's mounted root on the host)
#   --finder NAME appended to the daemon's arguments (default simulated: a
#                 test double, for hosts without a GPU; `cudnn` on a GPU host
#                 with the driver and cuDNN mounted)
#
# From deploy/kubernetes/daemonset.yaml it takes the ConfigMap (mounted
# read-only at /etc/tunedb), the container's args and env, the init
# container's command, and the hostPath, emptyDir /tmp, uid/gid,
# supplemental groups, no-new-privileges and read-only root filesystem of
# the pod. The image's root (`buildah mount`) is bind-mounted read-only in a
# private mount namespace, the folders are mounted into it, and the image's
# ENTRYPOINT runs there under chroot as the image's USER. The host's network
# is shared (no network namespace), so the health and metrics ports are the
# host's. Checked: the init container's chown in the image, the daemon's
# uid/gids/capabilities, its database and socket in the host folder,
# `tunedb devices`, `tune`, `query`, grpc.health.v1 on the health port, the
# metrics page, a clean SIGTERM drain with exit status 0, and the record
# still there after a restart, where SIGTERM comes during a (slowed) search
# and the search must finish before the daemon exits 0.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
tag=localhost/tunedb:latest
dir=""
cli=""
finder=simulated
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    --finder) finder="$2"; shift 2 ;;
    *) echo "run_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "run_check.sh: run as root" >&2; exit 2; }
[[ -n "$dir" ]] || dir=$(mktemp -d /var/tmp/tunedb-run.XXXXXX)
mkdir -p "$dir/run" "$dir/state" "$dir/config"

failures=0
ok() { echo "  ok    $*"; }
bad() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# The DaemonSet's pieces, as shell words (Debian's python3-yaml).
eval "$(/usr/bin/python3 - "$repo/deploy/kubernetes/daemonset.yaml" \
    "$dir/config/tunedbd.conf" <<'EOF'
import shlex, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap")
ds = next(d for d in docs if d["kind"] == "DaemonSet")
pod = ds["spec"]["template"]["spec"]
c = next(c for c in pod["containers"] if c["name"] == "tunedbd")
init = pod["initContainers"][0]
open(sys.argv[2], "w").write(cm["data"]["tunedbd.conf"])
sc = pod["securityContext"]
def arr(name, words):
    print(f"{name}=({' '.join(shlex.quote(str(w)) for w in words)})")
arr("pod_args", c.get("args", []))
arr("pod_env", [f"{e['name']}={e['value']}" for e in c.get("env", [])])
arr("init_cmd", init["command"] + init["args"])
print(f"run_uid={sc['runAsUser']} run_gid={sc['runAsGroup']}")
print(f"groups={','.join(str(g) for g in sc.get('supplementalGroups', []))}")
print(f"ro_root={str(c['securityContext']['readOnlyRootFilesystem']).lower()}")
conf = dict(l.split("=", 1) for l in cm["data"]["tunedbd.conf"].splitlines()
            if "=" in l and not l.strip().startswith("#"))
conf = {k.strip(): v.strip() for k, v in conf.items()}
print(f"conf_socket={shlex.quote(conf['socket'])}")
print(f"conf_db={shlex.quote(conf['db'])}")
print(f"health_port={conf['health-listen'].rsplit(':', 1)[1]}")
print(f"metrics_port={conf['metrics-address'].rsplit(':', 1)[1]}")
EOF
)"
[[ "$(dirname "$conf_socket")" == /run/tunedb \
   && "$(dirname "$conf_db")" == /var/lib/tunedb ]] \
  || { echo "run_check.sh: ConfigMap paths moved; update this script" >&2; exit 2; }
host_sock="$dir/run/$(basename "$conf_socket")"
host_db="$dir/state/$(basename "$conf_db")"

ctr=$(buildah from --pull=never "$tag")
mnt=$(buildah mount "$ctr")
daemon=""
cleanup() {
  [[ -z "$daemon" ]] || kill -KILL "$daemon" 2>/dev/null || true
  buildah umount "$ctr" >/dev/null 2>&1 || true
  buildah rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT
image_user=$(buildah inspect --format '{{.OCIv1.Config.User}}' "$ctr")
mapfile -t entry < <(buildah inspect --format \
  '{{range .OCIv1.Config.Entrypoint}}{{println .}}{{end}}' "$ctr" | sed '/^$/d')
[[ -n "$cli" ]] || cli="$mnt/opt/tunedb/bin/tunedb"
tunedb() { "$cli" --address "unix:$host_sock" "$@"; }
echo "image $tag (USER $image_user, ENTRYPOINT ${entry[*]}), host folder $dir"
echo "daemon: ${entry[*]} ${pod_args[*]} --finder $finder (uid $run_uid," \
  "groups $run_gid,$groups, read-only root: $ro_root)"
[[ "$image_user" == "$run_uid:$run_gid" ]] \
  && ok "image USER $image_user is the pod's runAsUser:runAsGroup" \
  || bad "image USER $image_user, pod $run_uid:$run_gid"

echo "init container (in the image, as root): ${init_cmd[*]}"
# hostPath DirectoryOrCreate makes the folders root-owned; the init
# container hands them to the daemon's user.
chown 0:0 "$dir/run" "$dir/state"
chmod 0755 "$dir/run" "$dir/state"
if buildah run --isolation chroot --user 0:0 \
    -v "$dir/run:/run/tunedb" -v "$dir/state:/var/lib/tunedb" "$ctr" \
    -- "${init_cmd[@]}"; then
  ok "init container ran: $(stat -c '%n %u:%g %a' "$dir/run" "$dir/state" \
     | sed "s|$dir/||g" | tr '\n' ' ')"
else
  bad "init container failed"
fi

start_daemon() {  # the pod's container, in a private mount namespace;
                  # arguments are added to the daemon's
  mkdir -p "$mnt/run/tunedb" "$mnt/var/lib/tunedb" "$mnt/etc/tunedb"
  local ro=""
  [[ "$ro_root" == true ]] && ro='mount -o remount,bind,ro "$m" &&'
  M="$mnt" D="$dir" unshare --mount --propagation private sh -c '
    m=$M
    mount --bind "$m" "$m" && '"$ro"'
    mount --bind "$D/run" "$m/run/tunedb" &&
    mount --bind "$D/state" "$m/var/lib/tunedb" &&
    mount --bind "$D/config" "$m/etc/tunedb" &&
    mount -o remount,bind,ro "$m/etc/tunedb" &&
    mount -t tmpfs -o mode=1777 tmpfs "$m/tmp" &&
    mount -t proc proc "$m/proc" &&
    mount --rbind /dev "$m/dev" &&
    exec "$@"' sh \
    setpriv --no-new-privs \
    chroot --userspec="$run_uid:$run_gid" --groups="$run_gid,$groups" "$mnt" \
    /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "${pod_env[@]}" "${entry[@]}" "${pod_args[@]}" --finder "$finder" "$@" \
    >> "$dir/daemon.log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 600); do
    [[ -S "$host_sock" ]] && tunedb devices >/dev/null 2>&1 && return 0
    kill -0 "$daemon" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

stop_daemon() {  # SIGTERM; sets stop_rc and stop_ms
  local t0
  t0=$(date +%s%N)
  stop_rc=0
  kill -TERM "$daemon"
  wait "$daemon" || stop_rc=$?
  daemon=""
  stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}

health() {
  /usr/bin/python3 - "127.0.0.1:$health_port" <<'EOF'
import sys, grpc
with grpc.insecure_channel(sys.argv[1]) as ch:
    check = ch.unary_unary("/grpc.health.v1.Health/Check",
                           request_serializer=lambda b: b,
                           response_deserializer=lambda b: b)
    reply = check(b"", timeout=5)
print("SERVING" if reply == b"\x08\x01" else f"reply {reply!r}")
EOF
}

key="op=fwd n=8 c=16 k=32 in=28x28 filt=3x3 pad=1x1 stride=1x1 dil=1x1 groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw tc=1 tf32=1"
echo "run 1:"
: > "$dir/daemon.log"
if ! start_daemon; then
  bad "daemon did not start; its log:"
  sed 's/^/        /' "$dir/daemon.log"
  exit 1
fi
exe=$(readlink "/proc/$daemon/exe")
status=$(grep -E '^(Uid|Gid|Groups|CapEff|CapPrm|NoNewPrivs):' \
  "/proc/$daemon/status" | tr -s '\t ' ' ' | tr '\n' ';')
echo "  pid $daemon $exe; $status"
[[ "$exe" == */opt/tunedb/bin/tunedbd ]] && ok "tunedbd from the image" \
  || bad "pid $daemon runs $exe"
grep -q "^Uid:[[:space:]]*$run_uid[[:space:]]" "/proc/$daemon/status" \
  && grep -q "^Gid:[[:space:]]*$run_gid[[:space:]]" "/proc/$daemon/status" \
  && ok "runs as uid $run_uid, gid $run_gid" || bad "uid/gid: $status"
grep -q '^CapEff:[[:space:]]*0*$' "/proc/$daemon/status" \
  && grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$daemon/status" \
  && ok "no capabilities, no new privileges" || bad "privileges: $status"
for f in "$host_db" "$host_sock"; do
  [[ -e "$f" && "$(stat -c %u:%g "$f")" == "$run_uid:$run_gid" ]] \
    && ok "$(stat -c '%F %n, owner %u:%g, mode %a' "$f" | sed "s|$dir/||")" \
    || bad "$f missing or not owned by $run_uid:$run_gid"
done
root_opts=$(awk '$5 == "/" {print $6}' "/proc/$daemon/mountinfo" | head -1)
if [[ "$ro_root" == true ]]; then
  [[ "$root_opts" == ro,* || "$root_opts" == ro ]] \
    && ok "its root filesystem is read-only ($root_opts)" \
    || bad "its root is mounted $root_opts"
fi
if out=$(tunedb devices 2>&1); then
  ok "tunedb devices:"; echo "$out" | sed 's/^/        /'
else bad "tunedb devices: $out"; fi
if out=$(tunedb tune "$key" 2>&1); then
  ok "tunedb tune:"; echo "$out" | sed 's/^/        /'
else bad "tunedb tune: $out"; fi
if out=$(tunedb query 2>&1) && [[ "$out" == *"n=8 c=16 k=32"* || \
    $(echo "$out" | wc -l) -ge 2 ]]; then
  ok "tunedb query:"; echo "$out" | sed 's/^/        /'
else bad "tunedb query: $out"; fi
out=$(health 2>&1) && [[ "$out" == SERVING ]] \
  && ok "grpc.health.v1 Check on 127.0.0.1:$health_port: $out" \
  || bad "health on $health_port: $out"
metrics=$(/usr/bin/python3 -c "import urllib.request,sys; \
print(urllib.request.urlopen('http://127.0.0.1:$metrics_port/metrics', \
timeout=5).read().decode())" 2>&1 || true)
n=$(echo "$metrics" | grep -c '^tunedb' || true)
[[ $n -gt 0 ]] && ok "metrics on :$metrics_port: $n tunedb samples" \
  || bad "metrics on :$metrics_port: $(echo "$metrics" | tail -1)"
stop_daemon
[[ $stop_rc -eq 0 ]] && ok "SIGTERM: drained and exited 0 after $stop_ms ms" \
  || bad "SIGTERM: exit status $stop_rc after $stop_ms ms"
[[ -e "$host_sock" ]] && echo "  note  the socket file is left in place" \
  || ok "socket removed on exit"
echo "  daemon log (run 1):"
sed 's/^/        /' "$dir/daemon.log"

slow=()
[[ "$finder" != simulated ]] || slow=(--simulated slow_ms=3000)
echo "run 2 (the same host folder${slow:+, searches slowed to 3 s}):"
: > "$dir/daemon.log"
if start_daemon "${slow[@]}"; then
  out=$(tunedb lookup "$key" 2>&1) \
    && ok "the record survived the restart: $(echo "$out" | head -1)" \
    || bad "lookup after restart: $out"
  # SIGTERM while a search runs: the daemon drains it before it exits.
  tunedb tune --force "$key" > "$dir/tune.out" 2>&1 &
  tune=$!
  sleep 1
  stop_daemon
  tune_rc=0
  wait "$tune" || tune_rc=$?
  [[ $tune_rc -eq 0 ]] \
    && ok "a search in flight at SIGTERM finished: $(grep source "$dir/tune.out")" \
    || bad "the search in flight at SIGTERM: exit $tune_rc, $(cat "$dir/tune.out")"
  [[ $stop_rc -eq 0 ]] && ok "SIGTERM: drained and exited 0 after $stop_ms ms" \
    || bad "SIGTERM: exit status $stop_rc"
  echo "  daemon log (run 2):"
  sed 's/^/        /' "$dir/daemon.log"
else
  bad "daemon did not start again"; sed 's/^/        /' "$dir/daemon.log"
fi

if [[ $failures -gt 0 ]]; then
  echo "run check: $failures failed (host folder $dir)" >&2
  exit 1
fi
echo "run check: all passed (host folder $dir)"
