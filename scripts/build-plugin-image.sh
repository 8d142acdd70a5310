#!/usr/bin/env bash
# Build the device plugin image from plugin-image/Containerfile with buildah.
#
# pip cannot reach PyPI from inside a container build here (TLS: the host trusts a CA that
# containers lack), so the wheels are prepared on the host, into plugin-image/wheels/
# (git-ignored), and the Containerfile installs them offline:
#   deps/      the pinned runtime wheels of plugin-image/requirements.txt (cp311 manylinux x86_64)
#   gpustack/  a wheel of this working tree (pip wheel --no-deps)
#   tools/     pip itself, run from its wheel in the builder stage
#
# Env:
#   BASE_IMAGE  base for both stages; default: the local Debian archive that
#               scripts/build-base-image.sh makes (oci-archive:...), since no registry is reachable
#   TAG         default localhost/gpustack-device-plugin:<gpustack.__version__>
#   PYTHON      interpreter whose pip downloads the wheels; default .venv/bin/python, else python3
#   OCI_ARCHIVE also write the image to this OCI archive (for `ctr import` on an air-gapped node)
#   ISOLATION   buildah --isolation; default chroot (the default runtime fails on cgroup v1 hosts)
#   ARCH        amd64 (default) or arm64 (GH200/GB200 nodes; also --arch arm64): wheels for that
#               platform, an arm64 base and `buildah bud --arch arm64`, whose RUN steps execute
#               through qemu-user-static (binfmt_misc must have the qemu-aarch64 handler)
# Prints the image tag (the only line on stdout).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
arch=${ARCH:-amd64}
while [[ $# -gt 0 ]]; do
    case $1 in
        --arch) arch=${2:-}; shift 2 || { echo "usage: $0 [--arch amd64|arm64]" >&2; exit 2; } ;;
        *) echo "usage: $0 [--arch amd64|arm64]" >&2; exit 2 ;;
    esac
done
case $arch in
    amd64) machine=x86_64 ;;
    arm64) machine=aarch64 ;;
    *) echo "error: arch $arch: amd64 or arm64" >&2; exit 2 ;;
esac
cache=${CACHE_DIR:-$repo/.cache/plugin-image}
wheels=plugin-image/wheels
# The wheels are built for this CPython; the Containerfile refuses a base with another one.
python_version=3.11
python=${PYTHON:-}
if [[ -z $python ]]; then
    if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
command -v buildah >/dev/null || { echo "error: buildah not found; apt-get install buildah" >&2; exit 1; }

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' gpustack/__init__.py)
[[ -n $version ]] || { echo "error: no __version__ in gpustack/__init__.py" >&2; exit 1; }
suffix=$([[ $arch == amd64 ]] && echo "" || echo "-$arch")
tag=${TAG:-localhost/gpustack-device-plugin:$version$suffix}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# The public repository: [project.urls] in pyproject.toml, else the git remote.
source_url=$("$python" - <<'EOF'
import tomllib
urls = tomllib.load(open("pyproject.toml", "rb")).get("project", {}).get("urls", {})
print(next((urls[k] for k in ("Source", "Repository", "Homepage") if k in urls), ""))
EOF
)
[[ -n $source_url ]] || source_url=$(git config --get remote.origin.url 2>/dev/null || echo unknown)

if [[ -z ${BASE_IMAGE:-} ]]; then
    BASE_IMAGE=oci-archive:$(ARCH=$arch scripts/build-base-image.sh)
fi

pip_download() {  # target-dir requirements-file: cp311 manylinux wheels for $machine only
    "$python" -m pip download --quiet --disable-pip-version-check --only-binary :all: \
        --python-version "$python_version" --implementation cp \
        --abi "cp${python_version/./}" --abi abi3 --abi none \
        --platform "manylinux_2_28_$machine" --platform "manylinux_2_17_$machine" \
        --platform "manylinux2014_$machine" --platform any \
        --dest "$1" --requirement "$2"
}
# Downloaded wheels are cached per requirements file, so a warm build needs no network.
cached_wheels() {  # name requirements-file -> prints the cache dir, filled
    local dir
    dir=$cache/$1-$arch-$( { cat "$2"; echo "cp$python_version"; } | sha256sum | cut -c1-16)
    if [[ ! -f $dir/.complete ]]; then
        rm -rf "$dir"
        pip_download "$dir" "$2" >&2
        touch "$dir/.complete"
        find "$cache" -mindepth 1 -maxdepth 1 -name "$1-$arch-*" ! -path "$dir" -exec rm -rf {} +
    fi
    echo "$dir"
}

mkdir -p "$cache"
# One build at a time per working tree: they share plugin-image/wheels/ and the caches.
exec 8>"$cache/.plugin.lock"
flock 8
rm -rf "$wheels"
mkdir -p "$wheels/deps" "$wheels/gpustack" "$wheels/tools"
cp "$(cached_wheels deps plugin-image/requirements.txt)"/*.whl "$wheels/deps/"
cp plugin-image/requirements.txt "$wheels/deps/requirements.txt"
cp "$(cached_wheels tools plugin-image/build-requirements.txt)"/*.whl "$wheels/tools/"

# Build the gpustack wheel from a copy of the working tree (tracked and untracked files that
# git does not ignore): setuptools' in-tree build/ would leak stale or ignored files into it.
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard \
        | while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf - | tar -C "$src" -xf -
else
    cp -a pyproject.toml gpustack "$src/"
    [[ -e README.md ]] && cp README.md "$src/"
fi
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --wheel-dir "$wheels/gpustack" "$src" >&2

previous=$(buildah images --noheading --format '{{.ID}}' "$tag" 2>/dev/null || true)
echo "building $tag from $BASE_IMAGE ..." >&2
buildah bud --quiet --isolation "${ISOLATION:-chroot}" --arch "$arch" \
    --file plugin-image/Containerfile --ignorefile plugin-image/Containerfile.dockerignore \
    --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "PYTHON_VERSION=$python_version" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" --build-arg "SOURCE_URL=$source_url" \
    --tag "$tag" . >&2
# A rebuild under the same tag leaves the previous image untagged: drop it unless still in use.
current=$(buildah images --noheading --format '{{.ID}}' "$tag")
if [[ -n $previous && $previous != "$current" ]]; then
    buildah rmi "$previous" >/dev/null 2>&1 || true
fi
if [[ -n ${OCI_ARCHIVE:-} ]]; then
    buildah push --quiet "$tag" "oci-archive:$OCI_ARCHIVE:$tag" >&2
fi
echo "$tag"
