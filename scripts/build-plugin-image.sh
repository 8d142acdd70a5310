#!/usr/bin/env bash
# Build the device plugin image from plugin-image/Containerfile with buildah: the pinned
# runtime wheels of plugin-image/requirements.txt and a wheel of this tree, installed offline
# (scripts/lib/image.sh says how, and lists the environment it reads).
#
# Env: TAG  default localhost/gpustack-device-plugin:<gpustack.__version__>[-arm64]
# Prints the image tag (the only line on stdout).
set -euo pipefail

# shellcheck source=scripts/lib/image.sh
source "$(dirname "$0")/lib/image.sh"
image_init "$@"
image_wheels plugin-image deps
image_build plugin-image "${TAG:-localhost/gpustack-device-plugin:$version$suffix}"
