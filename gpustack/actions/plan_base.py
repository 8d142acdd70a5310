"""The base side of ``gpustack plan``: the cluster folders of the output as committed at a git
ref, read from git's object store (``ls-tree``, then one ``cat-file --batch``), so neither the
checkout nor its index is touched and a ref that is not checked out reads the same.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gpustack.actions.errors import Refused
from gpustack.synth.plan import CLUSTERS_DIR

#: cluster name -> its folder's files (path inside the folder -> bytes)
Folders = dict[str, dict[str, bytes]]


def _run(root: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, input=stdin, capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise Refused("plan needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise Refused(f"git {args[0]} did not answer within 120 s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Refused(f"git {args[0]}: {lines[0] if lines else 'failed'}")
    return done.stdout


def _root(out: Path) -> Path:
    folder = Path(os.path.realpath(out))
    while not folder.is_dir():  # the output folder may not exist in the working tree
        folder = folder.parent
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, check=False
    )
    if top.returncode != 0:
        raise Refused(f"{out} is not in a git checkout: plan compares with a commit")
    return Path(top.stdout.decode().strip())


def committed_clusters(out: Path, ref: str) -> Folders:
    """Every cluster folder under ``<out>/clusters`` at ``ref``: :class:`Refused` with one line
    when ``ref`` is no commit."""
    root = _root(out)
    check = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if check.returncode != 0:
        raise Refused(f"--base {ref}: not a commit in {root}")
    sha = check.stdout.decode().strip()
    rel = (Path(os.path.realpath(out)) / CLUSTERS_DIR).relative_to(root).as_posix()
    listed = _run(root, ["ls-tree", "-r", "-z", "--full-tree", sha, "--", f":(literal){rel}"])
    blobs: list[tuple[str, str, str]] = []
    for record in listed.split(b"\0"):
        info, _, name = record.partition(b"\t")
        parts = info.split()
        if len(parts) == 3 and parts[1] == b"blob":
            inside = name.decode("utf-8", "surrogateescape")[len(rel) + 1 :]
            cluster, _, path = inside.partition("/")
            if path:
                blobs.append((cluster, path, parts[2].decode()))
    return _read(root, blobs)


def _read(root: Path, blobs: list[tuple[str, str, str]]) -> Folders:
    """The blobs' contents, read in one ``git cat-file --batch``."""
    found: Folders = {}
    if not blobs:
        return found
    data = _run(root, ["cat-file", "--batch"], "".join(f"{b[2]}\n" for b in blobs).encode())
    at = 0
    for cluster, path, _ in blobs:
        end = data.index(b"\n", at)
        size = int(data[at:end].split()[2])
        found.setdefault(cluster, {})[path] = data[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found
