#!/usr/bin/env bash
# Build the Argo CD config management plugin sidecar from cmp-image/Containerfile with buildah:
# gpustack's synthesizer (the pinned wheels of cmp-image/requirements.txt, Node.js included as
# a wheel, and a wheel of this tree, installed offline; scripts/lib/image.sh says how and lists
# the environment it reads) and cmp-image/plugin.yaml where Argo CD's cmp-server reads it.
#
# Env: TAG  default localhost/<the image cmp-image/repo-server-patch.yaml names>[-arm64], so the
#           patch stays the one place the image is named
# Prints the image tag (the only line on stdout).
set -euo pipefail

# shellcheck source=scripts/lib/image.sh
source "$(dirname "$0")/lib/image.sh"
image_init "$@"
image=$(sed -n 's/^ *image: *//p' cmp-image/repo-server-patch.yaml)
[[ $image == *:"$version" ]] || {
    echo "error: cmp-image/repo-server-patch.yaml names $image, not version $version; run:" \
        "python -m gpustack.gitops.argocd_sidecar" >&2
    exit 1
}
image_wheels cmp-image cmp-deps
image_build cmp-image "${TAG:-localhost/$image$suffix}"
