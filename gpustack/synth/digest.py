"""Content digests that tell whether a cluster folder must be synthesized again.

A cluster's output is a function of two things only, and its digest covers both:

* its **inputs**: the bytes of the profile file and of every base it extends (the merged profile
  is made of nothing else), each recorded in the index as ``"<ref>": "sha256:..."``;
* the **generator**: gpustack's version, the versions of the libraries that render objects
  (cdk8s, constructs, jsii, PyYAML) and the bytes of every file gpustack ships that
  synthesis reads or runs (:func:`generator_digest`).

"Packaged" means every file of the installed ``gpustack`` package (code, data, scripts,
templates), except :data:`NOT_SYNTHESIS`: the subpackages ``synth`` never imports (a test
synthesizes every example profile and checks that none of them was loaded) and the packaged
default profile, which is an *input* of the clusters made from it, so a change to it invalidates
those clusters only. Upgrading gpustack changes its version and its files, so it invalidates
every cluster; so does editing any packaged module in a development checkout.

A cluster whose recorded digest equals today's and whose folder holds exactly the files the
index records is not validated or synthesized again (:mod:`gpustack.synth.fresh`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

import gpustack

#: Distributions whose code turns a profile into bytes.
LIBRARIES = ("cdk8s", "constructs", "jsii", "PyYAML")
#: Package paths (relative, POSIX) that synthesis never reads: changing them changes no output.
NOT_SYNTHESIS = (
    "conformance/",
    "docsite/",
    "doctor/",
    "explain.py",
    # the readers of gpustack.kube (its label table, shared with the constructs, is read; so are
    # manifests, pods and quantity, which the rollout note's comparison, gpustack.plan, reads)
    "kube/cel.py",
    "kube/claims.py",
    "kube/kubectl.py",
    "kube/nodes.py",
    "kube/state.py",
    "kube/suggest.py",
    "lint/",
    "plugin/backends/",
    "plugin/dra/",
    "plugin/v1beta1/",
    "data/default-profile.yaml",
)
#: Only these plugin modules are shared with the constructs (the config types).
_PLUGIN_SHARED = "plugin/config/"


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def package_root() -> Path:
    return Path(gpustack.__file__).resolve().parent


def packaged_files(root: Path | None = None) -> dict[str, Path]:
    """Every file of the package that synthesis may depend on, by POSIX path inside it."""
    base = root or package_root()
    found: dict[str, Path] = {}
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in names:
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(folder, name)
            rel = path.relative_to(base).as_posix()
            if rel.startswith(NOT_SYNTHESIS):
                continue
            if rel.startswith("plugin/") and rel.count("/") == 1 and rel != "plugin/__init__.py":
                continue  # the device plugin's own modules (server, allocate, ...)
            found[rel] = path
    return dict(sorted(found.items()))


def _library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


@cache
def generator_digest() -> str:
    """What every cluster depends on besides its profile (see the module docstring)."""
    return compute_generator_digest(package_root(), gpustack.__version__, _library_versions())


def compute_generator_digest(root: Path, version: str, libraries: Mapping[str, str]) -> str:
    files = {rel: _sha(path.read_bytes()) for rel, path in packaged_files(root).items()}
    doc = {"gpustack": version, "libraries": dict(libraries), "files": files}
    return _sha(json.dumps(doc, sort_keys=True).encode())


def file_digest(path: Path) -> str | None:
    """Digest of a file's bytes; ``None`` when it can't be read (then it is not fresh)."""
    try:
        return _sha(path.read_bytes())
    except OSError:
        return None


def cluster_digest(generator: str, inputs: Mapping[str, str]) -> str:
    """The digest recorded per cluster: generator and every input file's digest (references
    and digests hold no NUL, so joining them with one is unambiguous)."""
    parts = [generator, *(f"{ref}\0{d}" for ref, d in sorted(inputs.items()))]
    return _sha("\0".join(parts).encode())


def fleet_digest(
    generator: str, clusters: Iterable[tuple[str, str]], location: str | None = None
) -> str:
    """What ``<out>/gitops/`` depends on: the generator, every delivered cluster's digest and
    where the output folder is in its git checkout (the paths Argo CD and Flux are given)."""
    doc = {"generator": generator, "clusters": sorted(clusters), "location": location}
    return _sha(json.dumps(doc, sort_keys=True).encode())
