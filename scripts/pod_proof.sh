#!/usr/bin/env bash
# The drop-in in a Kubernetes pod, proved offline: the DaemonSet of
# deploy/kubernetes/daemonset.yaml (its init containers and tunedbd) and the
# workload of deploy/kubernetes/example-preload-pod.yaml run as Kubernetes
# would run them, sharing the host folders the manifests name, and the
# workload's program, under the node-installed preload, gets the daemon's
# answers. Fails (exit 1) when any step fails. Needs root, debootstrap,
# patchelf, util-linux and Debian's python3-yaml; a few minutes once the
# Debian roots exist (they are kept in --work).
#
#   sudo scripts/pod_proof.sh [--build DIR] [--work DIR] [--mirror URL]
#
#   --build DIR   the build tree: DIR/bundle/tunedb (`--target bundle`) and
#                 the preload tests' fake cuDNN and probe (default: build)
#   --work DIR    where the roots and the host folders go
#                 (default /var/tmp/tunedb-pod)
#
# No container runtime and no registry: each container is its image's root
# filesystem, run by chroot in a private mount namespace (unshare) with the
# pod's volumes bind-mounted, its read-only root, user, groups, environment
# and no-new-privileges.
# - The daemon's image is the Dockerfile's runtime stage assembled by hand:
#   a Debian 12 minbase root (deploy/container/build_image.sh's, reused from
#   /var/tmp/tunedb-image/rootfs when present), the bundle in /opt/tunedb
#   with OpenSSL, zlib and libsystemd beside it as the build stage adds them,
#   and USER 10001:10001.
# - The workload's image is another base, Debian 13 (trixie) minbase, with
#   nothing of tunedb: only a program that calls cuDNN (the preload tests'
#   preload_probe) and the cuDNN it is linked against (their fake
#   libcudnn.so.9), in /app, standing for a training image and its cuDNN.
# The daemon searches with the simulated finder (no GPU here), so the
# workload names the daemon's device (TUNEDB_DEVICE_KEY), as the preload
# tests do.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build
work=/var/tmp/tunedb-pod
mirror=http://deb.debian.org/debian
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    *) echo "pod_proof.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "pod_proof.sh: run as root" >&2; exit 2; }
bundle=$build/bundle/tunedb
probe=$build/tests/preload/preload_probe
fake_cudnn=$build/tests/preload/fake/libcudnn.so.9
for f in "$bundle/bin/tunedbd" "$bundle/lib/libtunedb_preload.so" \
    "$bundle/lib/libtunedb_preload_core.so" "$probe" "$fake_cudnn"; do
  [[ -e "$f" ]] || { echo "pod_proof.sh: $f missing (build the bundle," \
    "preload_probe and fake_cudnn targets)" >&2; exit 2; }
done

step() { echo; echo "== $*"; }
fail() { echo "FAIL  $*" >&2; exit 1; }
ok() { echo "ok    $*"; }
mkdir -p "$work"

# --- The manifests, as shell words (Debian's python3-yaml) -------------------
eval "$(/usr/bin/python3 - "$repo/deploy/kubernetes" <<'EOF'
import shlex, sys, yaml
def docs(name):
    return [d for d in yaml.safe_load_all(open(f"{sys.argv[1]}/{name}")) if d]
ds_docs = docs("daemonset.yaml")
conf = next(d for d in ds_docs if d["kind"] == "ConfigMap")["data"]["tunedbd.conf"]
pod = next(d for d in ds_docs if d["kind"] == "DaemonSet")["spec"]["template"]["spec"]
work = next(d for d in docs("example-preload-pod.yaml") if d["kind"] == "Pod")["spec"]
def arr(name, words):
    print(f"{name}=({' '.join(shlex.quote(str(w)) for w in words)})")
def mounts(name, spec, c):  # "hostpath:containerpath:ro|rw" per hostPath volume
    vols = {v["name"]: v for v in spec["volumes"]}
    arr(name, [f"{vols[m['name']]['hostPath']['path']}:{m['mountPath']}:"
               f"{'ro' if m.get('readOnly') else 'rw'}"
               for m in c.get("volumeMounts", []) if "hostPath" in vols[m["name"]]])
print(f"daemon_conf={shlex.quote(conf)}")
for c in pod["initContainers"]:
    n = c["name"].replace("-", "_")
    arr(f"init_{n}_cmd", c["command"] + c["args"])
    mounts(f"init_{n}_mounts", pod, c)
    print(f"init_{n}_caps={','.join(c['securityContext']['capabilities'].get('add', []))}")
arr("init_names", [c["name"].replace("-", "_") for c in pod["initContainers"]])
d = next(c for c in pod["containers"] if c["name"] == "tunedbd")
arr("daemon_args", d.get("args", []))
arr("daemon_env", [f"{e['name']}={e['value']}" for e in d.get("env", [])])
mounts("daemon_mounts", pod, d)
sc = pod["securityContext"]
print(f"daemon_user={sc['runAsUser']}:{sc['runAsGroup']}")
print(f"daemon_groups={','.join(str(g) for g in [sc['runAsGroup']] + sc['supplementalGroups'])}")
w = work["containers"][0]
arr("work_env", [f"{e['name']}={e['value']}" for e in w.get("env", [])])
arr("work_cmd", w["command"])
mounts("work_mounts", work, w)
print(f"work_groups={','.join(str(g) for g in work['securityContext']['supplementalGroups'])}")
EOF
)"
host=$work/host  # the node's / for hostPath volumes
conf_socket=$(sed -n 's/^socket *= *//p' <<<"$daemon_conf")
sock=$host$conf_socket
address=unix:$conf_socket
echo "DaemonSet: init containers ${init_names[*]}; tunedbd ${daemon_args[*]}" \
  "as $daemon_user (groups $daemon_groups); volumes ${daemon_mounts[*]}"
echo "workload: ${work_cmd[*]}; env ${work_env[*]}; volumes ${work_mounts[*]}"

# --- The two images' roots ---------------------------------------------------
debian_root() {  # debian_root SUITE DIR: a minbase root, kept
  [[ -x "$2/usr/bin/apt-get" ]] && return 0
  rm -rf "$2"
  debootstrap --variant=minbase "$1" "$2" "$mirror" >"$2.log" 2>&1 \
    || fail "debootstrap $1 (see $2.log)"
}
step "images"
base=/var/tmp/tunedb-image/rootfs  # build_image.sh's Debian 12 root
[[ -x "$base/usr/bin/apt-get" ]] || { base=$work/bookworm-rootfs; debian_root bookworm "$base"; }
debian_root trixie "$work/trixie-rootfs"
daemon_root=$work/daemon-image
work_root=$work/workload-image
rm -rf "$daemon_root" "$work_root" "$host"
cp -a "$base" "$daemon_root"
cp -a "$bundle" "$daemon_root/opt/tunedb"
# As the Dockerfile's build stage: the libraries the bundle leaves to the
# host, from this Debian 12 host, found beside the rest.
for lib in libssl.so.3 libcrypto.so.3 libz.so.1 libsystemd.so.0; do
  path=$(ldd "$bundle/bin/tunedbd" | awk -v l="$lib" '$1 == l {print $3}')
  [[ -z "$path" ]] && continue
  cp -L "$path" "$daemon_root/opt/tunedb/lib/"
  patchelf --set-rpath '$ORIGIN' "$daemon_root/opt/tunedb/lib/$lib"
done
mkdir -p "$daemon_root/etc/tunedb"
cp -a "$work/trixie-rootfs" "$work_root"
mkdir -p "$work_root/app/bin" "$work_root/app/lib"
cp "$probe" "$work_root/app/bin/" && cp "$fake_cudnn" "$work_root/app/lib/"
patchelf --set-rpath /app/lib "$work_root/app/bin/preload_probe"
work_cmd=(/app/bin/preload_probe --n 32 --c 64 --k 64 --hw 56 --filt 3
          --stride 2 --pad 1 --call find_ex)
found=$(find "$work_root" -mindepth 1 \( -name 'libtunedb*' -o -name 'tunedb*' \) -print -quit)
[[ -z "$found" ]] && ok "the workload image has no tunedb file" || fail "$found"
echo "daemon image: $(. "$daemon_root/etc/os-release"; echo "$PRETTY_NAME"), glibc" \
  "$(chroot "$daemon_root" ldd --version | head -1 | awk '{print $NF}')"
echo "workload image: $(. "$work_root/etc/os-release"; echo "$PRETTY_NAME"), glibc" \
  "$(chroot "$work_root" ldd --version | head -1 | awk '{print $NF}')"

# --- Containers: a root, its volumes, user, groups, environment --------------
# run_in ROOT USER GROUPS CAPS "VOLUMES..." -- ENV... -- COMMAND...
# VOLUMES are hostPath:mountPath:ro|rw. The root is read-only; /tmp is a
# tmpfs. CAPS "none" empties the bounding set, else keeps those
# (comma-separated, e.g. CHOWN,FOWNER); a user other than root has none
# left anyway. The switch to the pod's user, groups, no-new-privileges and
# capabilities is made inside the root by its own setpriv (util-linux, in
# both Debian images), as a container runtime makes it before the exec.
run_in() {
  local root=$1 user=$2 groups=$3 caps=$4 vols=$5 setup="" v hp mp mode
  shift 6
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  for v in $vols; do
    IFS=: read -r hp mp mode <<<"$v"
    mkdir -p "$host$hp" "$root$mp"
    setup+="mount --bind '$host$hp' '$root$mp' && "
    [[ $mode == ro ]] && setup+="mount -o remount,bind,ro '$root$mp' && "
  done
  local bounding=-all
  [[ $caps == none ]] || bounding+=",+${caps//,/,+}"
  local run=(unshare --mount --propagation private sh -c "
    mount --bind '$root' '$root' && mount -o remount,bind,ro '$root' &&
    $setup
    mount -t tmpfs -o mode=1777 tmpfs '$root/tmp' &&
    mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' &&
    exec \"\$@\"" sh \
    chroot "$root" /usr/bin/setpriv --reuid "${user%:*}" --regid "${user#*:}" \
    --groups "$groups" --no-new-privs --bounding-set "${bounding,,}" \
    --inh-caps -all -- \
    /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/tmp "${env[@]}" "$@")
  # RUN_IN_EXEC=1: become the container (its pid is the caller's $!).
  [[ -z ${RUN_IN_EXEC:-} ]] || exec "${run[@]}"
  "${run[@]}"
}

# The workload container: the pod's env and volumes, uid 1000 (not the
# daemon's), the pod's supplemental groups.
workload() {  # workload ENV... -- COMMAND...
  run_in "$work_root" 1000:1000 "1000,$work_groups" none "${work_mounts[*]}" \
    -- "${work_env[@]}" "$@"
}

# --- The node: hostPath folders as the kubelet makes them (root, 0755) -------
mkdir -p "$host"
step "workload before the DaemonSet has run on the node"
out=$(workload -- "${work_cmd[@]}" 2>"$work/run0.err") \
  || { cat "$work/run0.err"; fail "run 0"; }
cat "$work/run0.err"
/usr/bin/python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["status"] == 0 and o["real_calls"]["fwd_find_ex"] == 1, o' "$out" \
  && grep -q "cannot be preloaded" "$work/run0.err" \
  && ok "the program runs without tunedb (the loader's one line says why)" \
  || fail "run 0"

step "DaemonSet init containers (in the daemon image, as root)"
for name in "${init_names[@]}"; do
  declare -n cmd="init_${name}_cmd" vols="init_${name}_mounts" caps="init_${name}_caps"
  run_in "$daemon_root" 0:0 0 "${caps:-none}" "${vols[*]}" -- -- "${cmd[@]}" \
    || fail "init container $name"
  ok "init container $name"
  unset -n cmd vols caps
done
client_dir=$(for v in "${work_mounts[@]}"; do echo "${v%%:*}"; done \
  | grep -v "^$(dirname "$conf_socket")\$")
current=$(readlink "$host$client_dir/current")
[[ $current == versions/* && -f "$host$client_dir/$current/lib/libtunedb_preload.so" ]] \
  && ok "node's $client_dir/current -> $current ($(du -sh "$host$client_dir/$current" | cut -f1))" \
  || fail "no client in $host$client_dir: $(ls -la "$host$client_dir")"

step "tunedbd (the DaemonSet's container, as $daemon_user)"
printf '%s\n' "$daemon_conf" > "$daemon_root/etc/tunedb/tunedbd.conf"
daemon=""
trap '[[ -z "$daemon" ]] || kill -KILL "$daemon" 2>/dev/null || true' EXIT
RUN_IN_EXEC=1 run_in "$daemon_root" "$daemon_user" "$daemon_groups" none \
  "${daemon_mounts[*]}" \
  -- "${daemon_env[@]}" -- /opt/tunedb/bin/tunedbd "${daemon_args[@]}" \
  --finder simulated >"$work/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 300); do
  [[ -S "$sock" ]] && break
  kill -0 "$daemon" 2>/dev/null || { cat "$work/daemon.log"; fail "tunedbd exited"; }
  sleep 0.1
done
[[ -S "$sock" ]] || fail "no socket at $sock"
ok "socket $conf_socket on the node: uid:gid $(stat -c '%u:%g mode %a' "$sock")"

step "workload (Debian 13 image, uid 1000): the node's client"
core=/opt/tunedb-client/current/lib/libtunedb_preload_core.so
libs=$(workload -- ldd "$core") || fail "ldd in the workload"
! grep -q "not found" <<<"$libs" || fail "unresolved in the workload: $libs"
ok "the preload core's $(grep -c '=>' <<<"$libs") libraries resolve in the workload;" \
  "$(grep -E 'lib(c|stdc\+\+)\.so' <<<"$libs" | awk '{print $3}' | tr '\n' ' ')from its image"
cli=/opt/tunedb-client/current/bin/tunedb
devices=$(workload -- $cli --address "$address" devices --csv) \
  || fail "tunedb devices in the workload"
echo "$devices"
device_key=$(workload -- $cli --address "$address" --json devices \
  | /usr/bin/python3 -c '
import json, re, sys
d = json.load(sys.stdin)["devices"][0]  # as DeviceKey::ToText writes it
gpu = re.sub(r"[^A-Za-z0-9._()-]", lambda m: "%%%02X" % ord(m.group()), d["gpu"])
print("gpu=%s cc=%s sms=%s cudnn=%s cuda=%s"
      % (gpu, d["cc"], d["sms"], d["cudnn"], d["cuda"]))') \
  || fail "device key"
ok "the node-installed CLI reaches the daemon; device $device_key"
preload_env=("TUNEDB_DEVICE_KEY=$device_key" TUNEDB_PRELOAD_LOG=calls)

step "workload, first run: a miss, passed to cuDNN; the daemon searches it"
out=$(workload "${preload_env[@]}" TUNEDB_PRELOAD_EXIT_WAIT_S=30 -- \
  "${work_cmd[@]}" 2>"$work/run1.err") || { cat "$work/run1.err"; fail "run 1"; }
cat "$work/run1.err"; echo "$out"
grep -q "tunedb preload: fwd miss" "$work/run1.err" \
  && grep -q "1 calls: 0 hits, 1 misses" "$work/run1.err" \
  && [[ $(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["real_calls"]["fwd_find_ex"])' "$out") == 1 ]] \
  && ok "the preload took the call (a miss) and cuDNN answered it" \
  || fail "run 1 was not a preload miss"
stored=$(workload -- $cli --address "$address" --json query) || fail "query"
tuned_algo=$(/usr/bin/python3 -c '
import json, sys
d = json.loads(sys.argv[1])
recs = d if isinstance(d, list) else d.get("records", [])
assert len(recs) == 1, recs
r = recs[0]
print(r["choice"]["algo"] if "choice" in r else r["results"][0]["algo"])' "$stored") \
  || fail "one stored record expected: $stored"
ok "the daemon stored the search: algorithm $tuned_algo"

step "workload, second run: answered by the daemon, cuDNN's Find not called"
out=$(workload "${preload_env[@]}" -- "${work_cmd[@]}" 2>"$work/run2.err") \
  || { cat "$work/run2.err"; fail "run 2"; }
cat "$work/run2.err"; echo "$out"
/usr/bin/python3 - "$out" "$tuned_algo" <<'EOF' || fail "run 2 was not answered by the daemon"
import json, sys
out = json.loads(sys.argv[1])
assert out["status"] == 0, out
assert out["real_calls"]["fwd_find_ex"] == 0, out["real_calls"]
assert out["perf"][0]["algo"] == int(sys.argv[2]), (out["perf"][0], sys.argv[2])
EOF
grep -q "1 calls: 1 hits, 0 misses" "$work/run2.err" || fail "no hit counted"
ok "the daemon's choice (algorithm $tuned_algo) came first, with no benchmark"

step "an upgrade: a new client version, switched to atomically"
echo "upgrade" > "$daemon_root/opt/tunedb/lib/UPGRADE"
install_vols="init_install_client_mounts[*]"
run_in "$daemon_root" 0:0 0 none "${!install_vols}" -- -- \
  "${init_install_client_cmd[@]}" || fail "install-client again"
next=$(readlink "$host$client_dir/current")
[[ $next != "$current" && -d "$host$client_dir/$current" ]] \
  && ok "current -> $next; the previous $current kept" || fail "no switch"
out=$(workload "${preload_env[@]}" -- "${work_cmd[@]}" 2>"$work/run3.err") \
  || { cat "$work/run3.err"; fail "run 3"; }
grep -q "1 calls: 1 hits, 0 misses" "$work/run3.err" \
  && ok "the workload, through the new version, is answered" || fail "run 3"
echo "again" > "$daemon_root/opt/tunedb/lib/UPGRADE"
run_in "$daemon_root" 0:0 0 none "${!install_vols}" -- -- \
  "${init_install_client_cmd[@]}" || fail "install-client a third time"
left=$(cd "$host$client_dir/versions" && ls | tr '\n' ' ')
[[ ! -e "$host$client_dir/$current" && -d "$host$client_dir/$next" \
   && $(ls "$host$client_dir/versions" | wc -l) -eq 2 ]] \
  && ok "the next upgrade keeps two versions ($left), the oldest removed" \
  || fail "versions left: $left"

step "tunedbd stops on SIGTERM"
kill -TERM "$daemon"
rc=0; wait "$daemon" || rc=$?
daemon=""
[[ $rc -eq 0 ]] && ok "exit status 0" || { cat "$work/daemon.log"; fail "exit $rc"; }
echo
echo "pod proof: all steps passed"
