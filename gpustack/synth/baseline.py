"""What ``synth --check`` trusts: the index of a base commit, or nothing.

Why: the fresh check skips every cluster whose inputs and folder match the digests the index
records. Plain ``--check`` reads that index from the working tree, which the very change under
review may have edited: a pull request that edits a manifest *and* its digest in
``dist/.gpustack/index.json`` (or a profile and its recorded input digests) passed. So a check
that guards a merge names what it trusts instead:

- ``--base REF``: the index as committed at ``REF`` (the target branch in CI, ``HEAD`` in a
  pre-commit hook), read with ``git show``. A cluster is skipped only when its inputs and every
  file of its folder are what ``REF`` recorded; anything the change touched (profile, base,
  manifest, index entry) is synthesized in full and compared byte for byte, and so is the index
  file itself. ``<out>/gitops/`` is always computed again.
- ``--full``: nothing is trusted; every cluster is synthesized (a release gate).

A ``REF`` git does not know is an error in one line; ``HEAD`` in a repository without a commit
yet (the very first pre-commit run) trusts nothing, like ``--full``.

The base's record is trusted only where the base itself backs it (issue #33): a cluster is
fresh under ``--base`` only when every input file the base recorded is, byte for byte, the blob
committed at ``REF`` (:class:`BaseTree`). An index-only change that records the digests of a
profile the base does not hold yet therefore buys nothing once merged: the later change that
brings that profile changes a file the base committed, and the cluster is synthesized again.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpustack.synth.errors import SynthError
from gpustack.synth.index import OwnershipIndex, index_path


@dataclass(frozen=True)
class Trust:
    """What the fresh check may rely on: ``index`` (``None``: nothing is fresh) and whether it
    is the working tree's own (only then may ``<out>/gitops/`` be skipped on its digest)."""

    index: OwnershipIndex | None
    own: bool
    #: Under ``--base``: the files committed there, which every trusted input must equal.
    tree: BaseTree | None = None
    #: Under ``--base``: the index committed there (``index``), named for messages.
    ref: str | None = None


@dataclass(frozen=True)
class BaseTree:
    """The blobs committed at the base for the files the base's index names as inputs: a
    working file is *as committed* when its bytes hash to the blob id recorded there (git's
    own object hash, so no content is read from git)."""

    root: Path
    #: Blob ids of regular files, by path relative to ``root`` (POSIX).
    blobs: dict[str, str] = field(default_factory=dict)
    #: ``sha1`` or ``sha256``: the repository's object format.
    algorithm: str = "sha1"

    def committed(self, path: Path, content: bytes) -> bool:
        """Whether ``content`` read from ``path`` is the regular file committed at the base
        (a link, a file outside the checkout or one the base lacks never is)."""
        try:
            rel = Path(os.path.normpath(os.path.abspath(path))).relative_to(self.root)
        except ValueError:
            return False
        blob = self.blobs.get(rel.as_posix())
        if blob is None:
            return False
        header = b"blob %d\0" % len(content)
        return hashlib.new(self.algorithm, header + content).hexdigest() == blob


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise SynthError("--base needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise SynthError(f"git {' '.join(args)} did not answer within 60 s") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "no output"


def base_index(out: Path, ref: str) -> OwnershipIndex | None:
    """The index of ``out`` as committed at ``ref`` (``None`` when it had none there)."""
    found = base_state(out, ref)
    return found[0] if found is not None else None


def base_state(out: Path, ref: str) -> tuple[OwnershipIndex, BaseTree] | None:
    """The index of ``out`` as committed at ``ref`` and the blobs of the inputs it names
    (``None`` when it had no index there)."""
    folder = Path(os.path.realpath(out))
    while not folder.is_dir():  # out itself may not exist yet
        folder = folder.parent
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise SynthError(f"--base {ref}: {out} is not in a git checkout")
    root = Path(top.stdout.decode().strip())
    commit = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        if ref == "HEAD" and _git(root, "rev-parse", "--verify", "--quiet", "HEAD").returncode:
            return None  # no commit yet: nothing to trust
        raise SynthError(
            f"--base {ref}: not a commit in {root} (fetch it, e.g. `git fetch origin main`, or"
            " name another)"
        )
    sha = commit.stdout.decode().strip()
    rel = Path(os.path.realpath(index_path(out))).relative_to(root).as_posix()
    shown = _git(root, "cat-file", "-e", f"{sha}:{rel}")
    if shown.returncode != 0:
        return None  # gpustack had not written there at that commit
    data = _git(root, "show", f"{sha}:{rel}")
    if data.returncode != 0:
        raise SynthError(f"--base {ref}: cannot read {rel}: {_first_line(data.stderr)}")
    index = OwnershipIndex.from_bytes(data.stdout, f"{ref}:{rel}")
    return index, _tree(root, sha, out, index)


def _tree(root: Path, sha: str, out: Path, index: OwnershipIndex) -> BaseTree:
    """The blobs at commit ``sha`` of the folders holding the inputs ``index`` names."""
    from gpustack.synth.fresh import ref_path

    algorithm = "sha256" if len(sha) == 64 else "sha1"
    tree = BaseTree(root, {}, algorithm)
    folders: set[str] = set()
    for entry in index.clusters.values():
        for ref in entry.inputs:
            folder = Path(os.path.normpath(os.path.abspath(ref_path(ref, out)))).parent
            try:
                folders.add(folder.relative_to(root).as_posix())
            except ValueError:
                continue  # outside the checkout: never as committed
    if not folders:
        return tree
    specs = [] if "." in folders else _literal(folders)
    listed = _git(root, "ls-tree", "-r", "-z", "--full-tree", sha, "--", *specs)
    if listed.returncode != 0:
        raise SynthError(f"--base: cannot list {sha}: {_first_line(listed.stderr)}")
    for record in listed.stdout.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] in (b"100644", b"100755") and parts[1] == b"blob":
            tree.blobs[name.decode("utf-8", "surrogateescape")] = parts[2].decode()
    return tree


def _literal(folders: Iterable[str]) -> list[str]:
    """Pathspecs matching exactly these folders (no glob magic in a folder's name)."""
    return sorted(f":(literal){f}" for f in folders)


def trusted(out: Path, index: OwnershipIndex | None, *, base: str | None, full: bool) -> Trust:
    """The index the fresh check trusts for this run (see the module docstring); ``index`` is
    the working tree's own."""
    if full:
        return Trust(None, own=False)
    if base is not None:
        found = base_state(out, base)
        if found is None:
            return Trust(None, own=False, ref=base)
        return Trust(found[0], own=False, tree=found[1], ref=base)
    return Trust(index, own=True)
