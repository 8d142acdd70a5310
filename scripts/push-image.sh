#!/usr/bin/env bash
# Push an image gpustack builds to where clusters can pull it: `make image-push IMAGE=...` (the
# device plugin), `make cmp-image-push IMAGE=...` (the Argo CD plugin sidecar).
#
# usage: scripts/push-image.sh DESTINATION
#   DESTINATION  any containers-transports name: docker://registry/name:tag, oci-archive:/f.tar,
#                dir:/path, oci:/path, docker-archive:/f.tar; one without a transport is a
#                registry reference and gets docker://.
# Env:
#   SOURCE   the local image to push; default: build it first with BUILD, which prints its tag
#   BUILD    the build script; default scripts/build-plugin-image.sh
#   ARCH     passed on to the build (amd64 or arm64)
#   DRY_RUN  1: print the buildah push command instead of running it
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ne 1 || -z $1 ]]; then
    echo "usage: make image-push IMAGE=<registry>/<name>:<tag> (or IMAGE=oci-archive:<file>, dir:<path>, ...)" >&2
    exit 2
fi
dest=$1
case $dest in
    docker://* | oci-archive:* | oci:* | dir:* | docker-archive:* | containers-storage:* | docker-daemon:*) ;;
    *://*)
        echo "error: $dest: unknown transport (docker://, oci-archive:, oci:, dir:, docker-archive:)" >&2
        exit 2
        ;;
    *) dest=docker://$dest ;;
esac
source_image=${SOURCE:-}
if [[ -z $source_image ]]; then
    build=${BUILD:-scripts/build-plugin-image.sh}
    [[ $build == /* ]] || build=$repo/$build
    source_image=$("$build")
fi
command=(buildah push --quiet "$source_image" "$dest")
if [[ ${DRY_RUN:-0} == 1 ]]; then
    printf '%s\n' "${command[*]}"
    exit 0
fi
command -v buildah >/dev/null || { echo "error: buildah not found; apt-get install buildah" >&2; exit 1; }
"${command[@]}" >&2
echo "pushed $source_image to $dest"
