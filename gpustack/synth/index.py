"""The ownership index: which cluster folders of an output directory gpustack wrote.

It lives at ``<out>/.gpustack/index.json``, outside ``<out>/clusters/*``, which are the only
paths Argo CD and Flux are pointed at; cluster folders hold nothing but manifests and their
``kustomization.yaml``. The index is committed with ``dist/`` so every checkout knows what it
may replace or delete. It is deterministic (sorted keys, no timestamps, no tool version), so
re-running ``gpustack synth`` never changes it without a reason.

Each cluster records the profile it came from, as a path relative to the output directory (or
:data:`PACKAGED_DEFAULT` for the built-in profile). The writer uses that to tell a cluster whose
profile was deleted or renamed (remove it) from one whose profile merely wasn't part of this run
(keep it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpustack.synth.errors import SynthError

INDEX_DIR = ".gpustack"
INDEX_FILE = "index.json"
#: Bumped when the file's meaning changes; older gpustack refuses newer indexes.
FORMAT = 1
#: Profile reference recorded for clusters synthesized from the packaged default profile.
PACKAGED_DEFAULT = "gpustack:default-profile.yaml"


@dataclass(frozen=True)
class IndexEntry:
    """One owned cluster folder: the profile it came from and the files gpustack wrote there."""

    profile: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class OwnershipIndex:
    """All cluster folders gpustack owns in one output directory (empty: owns none yet)."""

    clusters: Mapping[str, IndexEntry] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        doc = {
            "format": FORMAT,
            "generator": "gpustack",
            "clusters": {
                name: {"profile": e.profile, "files": list(e.files)}
                for name, e in sorted(self.clusters.items())
            },
        }
        return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> OwnershipIndex:
        bad = (
            f"{where} is not a gpustack index; restore it from git, or delete the output "
            "folder's .gpustack/ and re-run with --force to take the folder over"
        )
        try:
            doc: Any = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SynthError(bad) from exc
        if not isinstance(doc, dict) or doc.get("generator") != "gpustack":
            raise SynthError(bad)
        if doc.get("format") != FORMAT:
            raise SynthError(
                f"{where} has format {doc.get('format')!r}, this gpustack reads format {FORMAT}; "
                "use the gpustack version that wrote it"
            )
        clusters: dict[str, IndexEntry] = {}
        raw = doc.get("clusters")
        if not isinstance(raw, dict):
            raise SynthError(bad)
        for name, entry in raw.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("profile"), str):
                raise SynthError(bad)
            files = entry.get("files", [])
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise SynthError(bad)
            clusters[str(name)] = IndexEntry(profile=entry["profile"], files=tuple(files))
        return cls(clusters=clusters)


def index_path(out: Path) -> Path:
    return out / INDEX_DIR / INDEX_FILE


def read_index(out: Path) -> OwnershipIndex | None:
    """The index of ``out``, or ``None`` when gpustack never wrote there."""
    path = index_path(out)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SynthError(f"cannot read {path}: {exc.strerror}") from exc
    return OwnershipIndex.from_bytes(data, str(path))


def profile_ref(profile: Path | None, out: Path) -> str:
    """How the index names a profile: relative to ``out`` (portable across checkouts)."""
    if profile is None:
        return PACKAGED_DEFAULT
    try:
        rel = os.path.relpath(profile.resolve(), out.resolve())
    except ValueError:  # different drives (Windows): no relative path exists
        return profile.resolve().as_posix()
    return Path(rel).as_posix()


def profile_exists(ref: str, out: Path) -> bool:
    """Whether the profile a cluster came from is still there (the packaged one: never)."""
    if ref == PACKAGED_DEFAULT:
        return False
    return (out / ref).is_file()
