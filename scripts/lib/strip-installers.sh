#!/bin/sh
# Run by the final stage of each image (plugin-image/, cmp-image/): nothing in a gpustack image
# may install software. A base from a registry (e.g. python:slim) ships pip, setuptools and
# ensurepip's wheels; remove them. A no-op on the local Debian base (scripts/build-base-image.sh).
set -eu
for d in /usr/local/lib/python3*/site-packages /usr/lib/python3/dist-packages; do
    rm -rf "$d"/pip "$d"/pip-* "$d"/setuptools "$d"/setuptools-* "$d"/wheel "$d"/wheel-* \
        "$d"/_distutils_hack "$d"/distutils-precedence.pth "$d"/pkg_resources
done
rm -rf /usr/local/bin/pip* /usr/bin/pip* /usr/local/lib/python3*/ensurepip/_bundled \
    /usr/share/python-wheels
