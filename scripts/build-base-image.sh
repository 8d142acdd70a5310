#!/usr/bin/env bash
# Build the device plugin's base image locally: Debian bookworm (minbase) with its python3
# (3.11), made by mmdebstrap and imported with buildah, written as an OCI archive.
#
# Why: no container registry is reachable from our build machines, so the base cannot be
# pulled. Debian's python3 matches the cp311 wheels the plugin image installs.
#
# Prints the archive's path (the only line on stdout); use it as
#   --build-arg BASE_IMAGE=oci-archive:<path>
# The archive is cached under .cache/plugin-image/, keyed by everything that shapes it (this
# script, suite, mirrors, packages), so a second run costs nothing. Pass --refresh (or remove
# the file) to pick up new Debian security updates.
#
# Needs: mmdebstrap, buildah; root (or user namespaces for mmdebstrap's unshare mode).
# ARCH=arm64 builds the arm64 base (GH200/GB200 nodes) on an amd64 host: mmdebstrap runs the
# foreign maintainer scripts through qemu-user-static, which needs binfmt_misc with the
# qemu-aarch64 handler registered (apt-get install qemu-user-static binfmt-support).
# Env: ARCH (amd64), SUITE (bookworm), MIRROR (http://deb.debian.org/debian),
#      SECURITY_MIRROR (http://deb.debian.org/debian-security), CACHE_DIR (.cache/plugin-image)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
suite=${SUITE:-bookworm}
mirror=${MIRROR:-http://deb.debian.org/debian}
security_mirror=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=${CACHE_DIR:-$repo/.cache/plugin-image}
# python3 pulls python3.11 and its full standard library (grpcio needs more than
# python3-minimal has). No pip, no compilers: the plugin image installs prebuilt wheels.
packages=python3
refresh=0
arch=${ARCH:-amd64}
case $arch in amd64 | arm64) ;; *) echo "error: ARCH=$arch: amd64 or arm64" >&2; exit 2 ;; esac

usage() { echo "usage: $0 [--refresh]" >&2; exit 2; }
for arg in "$@"; do
    case $arg in
        --refresh) refresh=1 ;;
        *) usage ;;
    esac
done
for tool in mmdebstrap buildah; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found; apt-get install $tool" >&2; exit 1; }
done

sources=("deb $mirror $suite main" "deb $mirror $suite-updates main"
         "deb $security_mirror $suite-security main")
key=$( { cat "$0"; printf '%s\n' "$suite" "$packages" "$arch" "${sources[@]}"; } | sha256sum | cut -c1-16)
archive=$cache/base-$suite-python3-$arch-$key.oci.tar

mkdir -p "$cache"
# Concurrent builds (make image while the tests run) must not write the same archive.
exec 9>"$cache/.base.lock"
flock 9

if [[ -s $archive && $refresh == 0 ]]; then
    echo "$archive"
    exit 0
fi

work=$(mktemp -d "$cache/base-work.XXXXXX")
image=localhost/gpustack-base-build:$key
ctr=
cleanup() {
    [[ -n $ctr ]] && buildah rm "$ctr" >/dev/null 2>&1
    buildah rmi "$image" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

# merged-usr hook: bookworm wants a merged /usr; without the hook apt installs the usrmerge
# package and full perl (~50 MB) just to perform the merge.
# Docs, man pages and translations are dropped (copyright files kept) to keep the image small.
echo "building the $suite base with mmdebstrap ..." >&2
mmdebstrap --quiet --variant=minbase --mode=auto --include="$packages" --architectures="$arch" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$suite" "$work/rootfs.tar" "${sources[@]}" >"$work/mmdebstrap.log" 2>&1 \
    || { cat "$work/mmdebstrap.log" >&2; echo "error: mmdebstrap failed (log above)" >&2; exit 1; }

# A rootfs tarball is not an image yet: give it an image config and write it as OCI.
ctr=$(buildah from --arch "$arch" scratch)
buildah add --quiet "$ctr" "$work/rootfs.tar" / >/dev/null
buildah config --arch "$arch" \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 \
    --cmd /usr/bin/python3 \
    --label "org.opencontainers.image.title=gpustack-base-$suite-python3" \
    --label "org.opencontainers.image.description=Debian $suite minbase with python3, built by mmdebstrap" \
    "$ctr"
buildah commit --quiet --rm "$ctr" "$image" >/dev/null
ctr=
buildah push --quiet "$image" "oci-archive:$work/base.oci.tar" >&2
mv -f "$work/base.oci.tar" "$archive"
# Older archives of this suite are dead weight now, and so is the copy of each that builds
# pulled into container storage (untagged, ID = the archive's config digest). An image still
# used by a plugin image stays; rmi refuses it.
for old in "$cache"/base-"$suite"-python3-"$arch"-*.oci.tar; do
    [[ -e $old && $old != "$archive" ]] || continue
    id=$(python3 - "$old" <<'EOF' || true
import json, sys, tarfile
with tarfile.open(sys.argv[1]) as tar:
    index = json.load(tar.extractfile("index.json"))
    manifest = json.load(tar.extractfile("blobs/sha256/" + index["manifests"][0]["digest"][7:]))
print(manifest["config"]["digest"][7:])
EOF
)
    if [[ -n $id ]]; then buildah rmi "$id" >/dev/null 2>&1 || true; fi
    rm -f "$old"
done
echo "$archive"
