"""The container images the real node runs, built on this machine and cached as OCI archives.

Why built here: no registry serves container images to these machines, so the pod sandbox
("pause") image and the device plugin image come from this tree and are imported into the node's
containerd (``ctr images import``), the way an air-gapped node gets them. Each archive is cached
under ``.cache/real-node/``, keyed by a digest of what shapes it, so a second run builds nothing.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[2]
CACHE: Final = REPO / ".cache" / "real-node"
PAUSE_SOURCE: Final = Path(__file__).with_name("pause.c")
PAUSE_IMAGE: Final = "localhost/gpustack-real-node-pause:1"
#: What goes into the device plugin image (scripts/build-plugin-image.sh builds a wheel of the
#: tree and installs it on plugin-image/'s base).
PLUGIN_INPUTS: Final = ("gpustack", "plugin-image", "scripts", "pyproject.toml")


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _run(args: list[str], **kwargs: object) -> str:
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return str(done.stdout)


def pause_archive() -> Path:
    """An OCI archive of :data:`PAUSE_IMAGE`: ``pause.c`` built static, the image's only file."""
    archive = CACHE / f"pause-{_digest([PAUSE_SOURCE])}.oci.tar"
    if archive.exists():
        return archive
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "pause"
        _run(["gcc", "-static", "-Os", "-o", str(binary), str(PAUSE_SOURCE)])
        container = _run(["buildah", "from", "scratch"]).strip()
        try:
            _run(["buildah", "copy", container, str(binary), "/pause"])
            _run(["buildah", "config", "--entrypoint", '["/pause"]', container])
            _run(["buildah", "commit", "--quiet", container, PAUSE_IMAGE])
        finally:
            _run(["buildah", "rm", container])
        partial = archive.with_suffix(".part")
        _run(["buildah", "push", "--quiet", PAUSE_IMAGE, f"oci-archive:{partial}:{PAUSE_IMAGE}"])
        partial.rename(archive)
    return archive


def _plugin_inputs() -> list[Path]:
    listed = _run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *PLUGIN_INPUTS],
        cwd=REPO,
    )
    return [REPO / f for f in listed.split("\0") if f and (REPO / f).is_file()]


def plugin_archive() -> tuple[Path, str]:
    """An OCI archive of the device plugin image ``make image`` builds from this tree, and the
    tag it carries (``localhost/gpustack-device-plugin:<version>``)."""
    archive = CACHE / f"plugin-{_digest(_plugin_inputs())}.oci.tar"
    tag_file = archive.with_suffix(".tag")
    if archive.exists() and tag_file.exists():
        return archive, tag_file.read_text().strip()
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(".part")
    env = {**os.environ, "OCI_ARCHIVE": str(partial)}
    tag = _run([str(REPO / "scripts" / "build-plugin-image.sh")], cwd=REPO, env=env).strip()
    partial.rename(archive)
    tag_file.write_text(tag + "\n")
    for old in CACHE.glob("plugin-*.oci.tar"):
        if old != archive:
            old.unlink()
            old.with_suffix(".tag").unlink(missing_ok=True)
    return archive, tag
