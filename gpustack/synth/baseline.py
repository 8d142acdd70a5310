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
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpustack.synth.errors import SynthError
from gpustack.synth.index import OwnershipIndex, index_path


@dataclass(frozen=True)
class Trust:
    """What the fresh check may rely on: ``index`` (``None``: nothing is fresh) and whether it
    is the working tree's own (only then may ``<out>/gitops/`` be skipped on its digest)."""

    index: OwnershipIndex | None
    own: bool


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
    return OwnershipIndex.from_bytes(data.stdout, f"{ref}:{rel}")


def trusted(out: Path, index: OwnershipIndex | None, *, base: str | None, full: bool) -> Trust:
    """The index the fresh check trusts for this run (see the module docstring); ``index`` is
    the working tree's own."""
    if full:
        return Trust(None, own=False)
    if base is not None:
        return Trust(base_index(out, base), own=False)
    return Trust(index, own=True)
