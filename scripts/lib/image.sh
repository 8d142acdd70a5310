# shellcheck shell=bash
# What gpustack's image builds share; sourced by scripts/build-plugin-image.sh (the device
# plugin) and scripts/build-cmp-image.sh (the Argo CD plugin sidecar), never run.
#
# pip cannot reach PyPI from inside a container build here (TLS: the host trusts a CA that
# containers lack), so the wheels are prepared on the host, into <image folder>/wheels/
# (git-ignored), and each Containerfile installs them offline:
#   deps/      the pinned runtime wheels of <image folder>/requirements.txt (cp311 manylinux)
#   gpustack/  a wheel of this working tree (pip wheel --no-deps)
#   tools/     pip itself (scripts/lib/build-requirements.txt), run from its wheel in the
#              builder stage only
# and scripts/lib/strip-installers.sh, which each final stage runs.
#
# Env (both scripts):
#   BASE_IMAGE  base for both stages; default: the local Debian archive that
#               scripts/build-base-image.sh makes (oci-archive:...), since no registry is reachable
#   TAG         the image's tag (each script has its default)
#   PYTHON      interpreter whose pip downloads the wheels; default .venv/bin/python, else python3
#   OCI_ARCHIVE also write the image to this OCI archive (for `ctr import` on an air-gapped node)
#   ISOLATION   buildah --isolation; default chroot (the default runtime fails on cgroup v1 hosts)
#   CACHE_DIR   downloaded wheels and the base archive; default .cache/plugin-image
#   ARCH        amd64 (default) or arm64 (also --arch arm64): wheels for that platform, an arm64
#               base and `buildah bud --arch arm64`, whose RUN steps execute through
#               qemu-user-static (binfmt_misc must have the qemu-aarch64 handler)

# image_init "$@": parse [--arch amd64|arm64], cd to the repository and set what a build needs:
# repo arch machine suffix cache python python_version version revision source_url license.
image_init() {
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    cd "$repo" || exit 1
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
    # shellcheck disable=SC2034  # the calling script's tag suffix
    suffix=$([[ $arch == amd64 ]] && echo "" || echo "-$arch")
    cache=${CACHE_DIR:-$repo/.cache/plugin-image}
    # The wheels are built for this CPython; the Containerfiles refuse a base with another one.
    python_version=3.11
    python=${PYTHON:-}
    if [[ -z $python ]]; then
        if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
    fi
    command -v buildah >/dev/null || { echo "error: buildah not found; apt-get install buildah" >&2; exit 1; }

    version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' gpustack/__init__.py)
    [[ -n $version ]] || { echo "error: no __version__ in gpustack/__init__.py" >&2; exit 1; }
    revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    # The public repository ([project.urls], else the git remote) and the licence, from
    # pyproject.toml: the labels say what the wheel's metadata says.
    local meta
    meta=$("$python" - <<'EOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb")).get("project", {})
urls = project.get("urls", {})
print(next((urls[k] for k in ("Source", "Repository", "Homepage") if k in urls), ""))
print(project.get("license", "") if isinstance(project.get("license"), str) else "")
EOF
)
    source_url=$(sed -n 1p <<<"$meta")
    license=$(sed -n 2p <<<"$meta")
    [[ -n $source_url ]] || source_url=$(git config --get remote.origin.url 2>/dev/null || echo unknown)
    mkdir -p "$cache"
    # One build at a time per working tree: builds share the wheel caches and the tree copy.
    exec 8>"$cache/.build.lock"
    flock 8
}

_pip_download() {  # target-dir requirements-file: cp311 manylinux wheels for $machine only
    "$python" -m pip download --quiet --disable-pip-version-check --only-binary :all: \
        --python-version "$python_version" --implementation cp \
        --abi "cp${python_version/./}" --abi abi3 --abi none \
        --platform "manylinux_2_28_$machine" --platform "manylinux_2_17_$machine" \
        --platform "manylinux2014_$machine" --platform any \
        --dest "$1" --requirement "$2"
}

# Downloaded wheels are cached per requirements file, so a warm build needs no network.
_cached_wheels() {  # name requirements-file -> prints the cache dir, filled
    local dir
    dir=$cache/$1-$arch-$( { cat "$2"; echo "cp$python_version"; } | sha256sum | cut -c1-16)
    if [[ ! -f $dir/.complete ]]; then
        rm -rf "$dir"
        _pip_download "$dir" "$2" >&2
        touch "$dir/.complete"
        find "$cache" -mindepth 1 -maxdepth 1 -name "$1-$arch-*" ! -path "$dir" -exec rm -rf {} +
    fi
    echo "$dir"
}

# image_wheels FOLDER NAME: fill FOLDER/wheels/ from FOLDER/requirements.txt (cached as NAME).
image_wheels() {
    local wheels=$1/wheels src
    rm -rf "$wheels"
    mkdir -p "$wheels/deps" "$wheels/gpustack" "$wheels/tools"
    cp "$(_cached_wheels "$2" "$1/requirements.txt")"/*.whl "$wheels/deps/"
    cp "$1/requirements.txt" "$wheels/deps/requirements.txt"
    cp "$(_cached_wheels tools scripts/lib/build-requirements.txt)"/*.whl "$wheels/tools/"

    # The gpustack wheel, from a copy of the working tree (tracked and untracked files that git
    # does not ignore): setuptools' in-tree build/ would leak stale or ignored files into it.
    src=$(mktemp -d)
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard \
            | while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done \
            | tar --null -T - -cf - | tar -C "$src" -xf -
    else
        cp -a pyproject.toml gpustack "$src/"
        [[ -e README.md ]] && cp README.md "$src/"
    fi
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
        --wheel-dir "$wheels/gpustack" "$src" >&2 || { rm -rf "$src"; return 1; }
    rm -rf "$src"
}

# image_build FOLDER TAG: buildah bud FOLDER/Containerfile (context: the repository root, only
# what FOLDER/Containerfile.dockerignore lets in), with the version, revision, source and
# licence labels; prints TAG.
image_build() {
    local folder=$1 tag=$2 previous current
    if [[ -z ${BASE_IMAGE:-} ]]; then
        BASE_IMAGE=oci-archive:$(ARCH=$arch scripts/build-base-image.sh)
    fi
    previous=$(buildah images --noheading --format '{{.ID}}' "$tag" 2>/dev/null || true)
    echo "building $tag from $BASE_IMAGE ..." >&2
    buildah bud --quiet --isolation "${ISOLATION:-chroot}" --arch "$arch" \
        --file "$folder/Containerfile" --ignorefile "$folder/Containerfile.dockerignore" \
        --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "PYTHON_VERSION=$python_version" \
        --label "org.opencontainers.image.version=$version" \
        --label "org.opencontainers.image.revision=$revision" \
        --label "org.opencontainers.image.source=$source_url" \
        --label "org.opencontainers.image.licenses=$license" \
        --tag "$tag" . >&2
    # A rebuild under the same tag leaves the previous image untagged: drop it unless in use.
    current=$(buildah images --noheading --format '{{.ID}}' "$tag")
    if [[ -n $previous && $previous != "$current" ]]; then
        buildah rmi "$previous" >/dev/null 2>&1 || true
    fi
    if [[ -n ${OCI_ARCHIVE:-} ]]; then
        buildah push --quiet "$tag" "oci-archive:$OCI_ARCHIVE:$tag" >&2
    fi
    echo "$tag"
}
