#!/usr/bin/env bash
# Builds the tunedb container image (deploy/container/Dockerfile) with no
# container registry, from Debian's archive alone, then checks what the
# runtime image carries. Needs root, Debian 12 (it installs debootstrap,
# buildah and podman from Debian if missing) and about 20 minutes on 2 cores.
#
#   sudo deploy/container/build_image.sh [--tag NAME] [--work DIR]
#       [--mirror URL] [--cuda DIR] [--rebase] [--check-only]
#
#   --tag NAME     the image to make (default localhost/tunedb:latest)
#   --work DIR     where the Debian roots and their tarballs are kept
#                  (default /var/tmp/tunedb-image)
#   --mirror URL   Debian mirror (default http://deb.debian.org/debian)
#   --cuda DIR     a CUDA toolkit folder holding cuDNN too, for the cuDNN
#                  finder (the Dockerfile's `cuda` build context)
#   --rebase       make the base images again (else reused when present)
#                  from the kept root, upgraded; remove DIR/rootfs to
#                  debootstrap afresh
#   --check-only   only check an image already built
#
# Steps: debootstrap a minimal Debian 12 root (bookworm, minbase, with
# bookworm-updates and bookworm-security, upgraded); import it as the build
# base localhost/tunedb-base:bookworm (the Dockerfile's debian:12) and, with
# man pages, locales and all documentation but the copyright files removed
# (as Debian's own -slim images are), as the runtime base
# localhost/tunedb-base:bookworm-slim (debian:12-slim); `buildah bud
# --isolation chroot` the Dockerfile on them. The check then fails the
# script unless the runtime image has no compiler, no headers, no test
# programs, a copyright file for every Debian package and every library in
# the bundle, only resolvable libraries, and runs tunedbd as uid 10001.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
tag=localhost/tunedb:latest
work=/var/tmp/tunedb-image
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
cuda=""
rebase=0
check_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    --cuda) cuda="$2"; shift 2 ;;
    --rebase) rebase=1; shift ;;
    --check-only) check_only=1; shift ;;
    *) echo "build_image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "build_image.sh: run as root" >&2; exit 2; }

build_base=localhost/tunedb-base:bookworm
runtime_base=localhost/tunedb-base:bookworm-slim
path_env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

need=()
for tool in debootstrap buildah podman; do
  command -v "$tool" >/dev/null || need+=("$tool")
done
if [[ ${#need[@]} -gt 0 ]]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

# The minbase root (kept in --work and reused), upgraded from
# bookworm-updates and bookworm-security.
make_root() {
  local root=$1
  if [[ ! -x "$root/usr/bin/apt-get" ]]; then
    rm -rf "$root"
    debootstrap --variant=minbase bookworm "$root" "$mirror"
  fi
  cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mount -t proc proc "$root/proc"
  trap 'umount "$root/proc" 2>/dev/null || true' RETURN
  chroot "$root" /usr/bin/env -i "$path_env" DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update -qq && apt-get upgrade -y -qq && apt-get clean'
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  : > "$root/etc/resolv.conf"  # the container runtime provides its own
}

# The runtime root: as Debian's -slim images, no man pages, info, locales
# or documentation beyond each package's copyright file, and dpkg told to
# leave them out of any package installed later.
slim_root() {
  local root=$1 slim=$2
  rm -rf "$slim"
  cp -a "$root" "$slim"
  cat > "$slim/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
# Leave out documentation but the copyright files (as debian:12-slim does).
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  # Keep the links /usr/share/doc/PKG -> OTHER (libstdc++6 -> gcc-12-base):
  # they lead to those packages' copyright files.
  find "$slim/usr/share/doc" -mindepth 1 -not -type d -not -name copyright \
    -not \( -type l -path "$slim/usr/share/doc/*" -not -path "$slim/usr/share/doc/*/*" \) \
    -delete
  find "$slim/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$slim"/usr/share/{man,groff,info,locale,lintian,linda}/*
  rm -rf "$slim"/var/cache/debconf/*-old "$slim"/var/log/*.log \
    "$slim"/var/log/apt/*
}

import_root() {  # import_root ROOT IMAGE
  tar -C "$1" --numeric-owner -cf "$1.tar" .
  podman rmi -f "$2" >/dev/null 2>&1 || true
  podman import --change "ENV $path_env" --change 'CMD ["/bin/bash"]' \
    --message "Debian 12 minbase, made by deploy/container/build_image.sh" \
    "$1.tar" "$2" >/dev/null
  rm -f "$1.tar"
  echo "base image $2: $(podman image inspect --format '{{.Size}}' "$2") bytes"
}

if [[ $check_only -eq 0 ]]; then
  mkdir -p "$work"
  if [[ $rebase -eq 1 ]] || ! podman image exists "$build_base" \
      || ! podman image exists "$runtime_base"; then
    make_root "$work/rootfs"
    slim_root "$work/rootfs" "$work/rootfs-slim"
    import_root "$work/rootfs" "$build_base"
    import_root "$work/rootfs-slim" "$runtime_base"
  fi
  cuda_args=()
  [[ -z "$cuda" ]] || cuda_args=(--build-context "cuda=$cuda")
  # buildah 1.28 leaves behind the working container of a stage that a
  # RUN --mount=from= used (the empty `cuda` stage): remove those this
  # build made.
  before=$(buildah containers -aq | sort)
  buildah bud --isolation chroot --layers --pull=never \
    -f "$repo/deploy/container/Dockerfile" \
    --ignorefile "$repo/deploy/container/Dockerfile.dockerignore" \
    --build-arg "BUILD_BASE=$build_base" \
    --build-arg "RUNTIME_BASE=$runtime_base" \
    "${cuda_args[@]}" -t "$tag" "$repo"
  left=$(comm -13 <(echo "$before") <(buildah containers -aq | sort))
  [[ -z "$left" ]] || buildah rm $left >/dev/null
fi

# --- The check of the runtime image ------------------------------------------
failures=0
ok() { echo "  ok    $*"; }
bad() { echo "  FAIL  $*"; failures=$((failures + 1)); }

ctr=$(buildah from --pull=never "$tag")
mnt=$(buildah mount "$ctr")
trap 'buildah umount "$ctr" >/dev/null; buildah rm "$ctr" >/dev/null' EXIT
in_image() { buildah run --isolation chroot "$ctr" -- "$@"; }

echo "image $tag"
podman images --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' "$tag"
echo "  $(podman image inspect --format '{{.Size}}' "$tag") bytes;" \
  "$(du -sh --exclude=proc --exclude=sys "$mnt" | cut -f1) on disk;" \
  "base $runtime_base: $(podman image inspect --format '{{.Size}}' \
  "$runtime_base" 2>/dev/null || echo '?') bytes"
echo "contents (du, MB):"
du -sm --exclude=proc --exclude=sys "$mnt"/* 2>/dev/null | sort -rn | head -8 \
  | sed "s|$mnt||; s/^/  /"
echo "  Debian packages: $(dpkg-query --admindir="$mnt/var/lib/dpkg" -W \
  -f '${Package}\n' | wc -l) (the minbase set)"
echo "/opt/tunedb:"
(cd "$mnt/opt/tunedb" && find . -maxdepth 2 -not -path './share/licenses/*' \
  \( -type f -o -type l \) -printf '  %p %s\n' | sort)
echo "checks:"

user=$(buildah inspect --format '{{.OCIv1.Config.User}}' "$ctr")
entry=$(buildah inspect --format '{{.OCIv1.Config.Entrypoint}}' "$ctr")
[[ "$user" == "10001:10001" ]] && ok "USER $user" || bad "USER '$user'"
[[ "$entry" == "[/opt/tunedb/bin/tunedbd]" ]] && ok "ENTRYPOINT $entry" \
  || bad "ENTRYPOINT '$entry'"

compilers=$(find "$mnt"/usr/bin "$mnt"/usr/local/bin "$mnt"/bin "$mnt"/opt \
  -regextype egrep -regex '.*/([a-z0-9_]+-linux-gnu-)?(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+|ld|as)(-[0-9.]+)?' \
  2>/dev/null || true)
[[ -z "$compilers" ]] && ok "no compiler, assembler or linker" \
  || bad "compilers: $compilers"

headers=$(find "$mnt"/usr/include "$mnt"/usr/local/include "$mnt"/opt \
  -type f \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.inc' \) \
  2>/dev/null | sed "s|$mnt||")
[[ -z "$headers" ]] && ok "no headers" \
  || bad "headers: $(echo "$headers" | wc -l), e.g. $(echo "$headers" | head -3)"

tests=$(find "$mnt/opt/tunedb" \( -path '*/tests*' -o -name '*_test*' \
  -o -name '*bench*' -o -name '*fuzz*' \) 2>/dev/null | sed "s|$mnt||")
bins=$(cd "$mnt/opt/tunedb/bin" && ls | tr '\n' ' ')
[[ -z "$tests" ]] && ok "no test programs (bin: $bins)" || bad "tests: $tests"
[[ "$bins" == "tunedb tunedb-worker tunedbd " ]] \
  || bad "unexpected programs in bin/: $bins"

static=$(find "$mnt/opt/tunedb" -name '*.a' -o -name '*.o' | sed "s|$mnt||")
[[ -z "$static" ]] && ok "no static libraries or objects" || bad "$static"

missing=()
while read -r pkg; do
  [[ -f "$mnt/usr/share/doc/$pkg/copyright" ]] || missing+=("$pkg")
done < <(dpkg-query --admindir="$mnt/var/lib/dpkg" -W -f '${Package}\n')
[[ ${#missing[@]} -eq 0 ]] \
  && ok "every Debian package has /usr/share/doc/PKG/copyright" \
  || bad "no copyright file: ${missing[*]}"

lic="$mnt/opt/tunedb/share/licenses"
missing=()
nlibs=0
for lib in "$mnt"/opt/tunedb/lib/*; do
  [[ -f "$lib" && ! -L "$lib" ]] || continue
  name=$(basename "$lib")
  [[ "$name" == libtunedb* ]] && continue
  nlibs=$((nlibs + 1))
  pkg=$(awk -v l="$name" '$1 == l {print $2; exit}' "$lic/LIBRARIES" 2>/dev/null)
  [[ -n "$pkg" && -s "$lic/$pkg/copyright" ]] || missing+=("$name")
done
[[ ${#missing[@]} -eq 0 ]] \
  && ok "all $nlibs libraries in /opt/tunedb/lib have a copyright file in share/licenses/" \
  || bad "no licence for: ${missing[*]}"

unresolved=$(in_image sh -c 'ldd /opt/tunedb/bin/* /opt/tunedb/lib/*.so* \
  | grep "not found" | grep -Ev "libcudnn|libcuda\.so" | sort -u' || true)
[[ -z "$unresolved" ]] && ok "every library resolves inside the image" \
  || bad "unresolved: $unresolved"

if in_image /opt/tunedb/bin/tunedbd --help >/dev/null \
    && in_image /opt/tunedb/bin/tunedb --help >/dev/null; then
  ok "tunedbd --help and tunedb --help run in the image"
else
  bad "tunedbd --help or tunedb --help failed in the image"
fi
uid=$(in_image id -u)
[[ "$uid" == 10001 ]] && ok "commands run as uid $uid" || bad "uid $uid"

if [[ $failures -gt 0 ]]; then
  echo "image check: $failures failed" >&2
  exit 1
fi
echo "image check: all passed"
