"""The ownership index: which cluster folders of an output directory gpustack wrote.

It lives at ``<out>/.gpustack/index.json``, outside ``<out>/clusters/*``, which are the only
paths Argo CD and Flux are pointed at; cluster folders hold nothing but manifests and their
``kustomization.yaml``. The index is committed with ``dist/`` so every checkout knows what it
may replace or delete. It is deterministic (sorted keys, no timestamps, no tool version), so
re-running ``gpustack synth`` never changes it without a reason.

Each cluster records the profile it came from, as a path relative to the output directory (or
:data:`PACKAGED_DEFAULT` for the built-in profile), and the SHA-256 digest of every file gpustack
wrote there, so a file changed or added by hand is told apart from gpustack's own output.

The index is committed, so it is input like any other: a pull request can edit it. Every name
read from it must be a cluster name (a DNS label, hence a folder right inside ``clusters/``) and
every file a relative path inside its cluster; anything else is an error, never a path to use.

Format 2 (current): ``files`` maps each path to ``"sha256:<hex>"``; ``previous``, present only
after a run was killed while swapping folders in, holds the digests of the folder it was
replacing (the folder holds one or the other). Format 1 listed paths without digests; it is still
read (a changed file can't be told then, an added one can) and rewritten as format 2.

Optional in format 2 (an older gpustack ignores them and drops them, which only costs the next
run a full synthesis): per cluster, ``digest`` (see :mod:`gpustack.synth.digest`), ``inputs``
(each file its profile was read from, as a reference like ``profile``, with its digest) and
``delivery`` (``true`` when the profile enables Argo CD or Flux); at the top, ``gitops``: the
digest of the fleet ``<out>/gitops/`` was last generated from.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from gpustack.limits import Refused, read_limited
from gpustack.synth import json_text
from gpustack.synth.errors import SynthError

INDEX_DIR = ".gpustack"
#: Far more than an index of thousands of clusters (about 6 KiB each); past it, not gpustack's.
MAX_INDEX_BYTES = 64 << 20
INDEX_FILE = "index.json"
#: Bumped when the file's meaning changes; older gpustack refuses newer indexes.
FORMAT = 2
#: Formats this gpustack reads (older ones are rewritten in :data:`FORMAT`).
READABLE = (1, 2)
#: Profile reference recorded for clusters synthesized from the packaged default profile.
PACKAGED_DEFAULT = "gpustack:default-profile.yaml"
#: A cluster name is a DNS label, so it can only ever be one folder right inside ``clusters/``.
CLUSTER_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_PLAIN_PATH = re.compile(r"[^/]+(/[^/]+)*")
_DOT_PART = re.compile(r"(^|/)\.\.?(/|$)")
_HEX = b"0123456789abcdef"

#: Digests of a cluster's files by path; ``None`` where the index has no digest (format 1).
Digests = Mapping[str, "str | None"]


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


@dataclass(frozen=True)
class IndexEntry:
    """One owned cluster folder: the profile it came from and the files gpustack wrote there."""

    profile: str
    files: Digests = field(default_factory=dict)
    #: Only after an interrupted swap: the digests of the folder that was being replaced.
    previous: Digests = field(default_factory=dict)
    #: What the files were synthesized from (:mod:`gpustack.synth.digest`); ``None``: unknown.
    digest: str | None = None
    #: Digest of each file the profile was read from (the profile, then its bases).
    inputs: Mapping[str, str] = field(default_factory=dict)
    #: Whether the profile enables a GitOps tool (its cluster appears in ``<out>/gitops/``).
    delivery: bool = False

    def knows(self, path: str, found: str) -> bool:
        """Whether a file at ``path`` with digest ``found`` is one gpustack wrote."""
        for recorded in (self.files, self.previous):
            if path in recorded and recorded[path] in (None, found):
                return True
        return False


@dataclass(frozen=True)
class OwnershipIndex:
    """All cluster folders gpustack owns in one output directory (empty: owns none yet)."""

    clusters: Mapping[str, IndexEntry] = field(default_factory=dict)
    #: Fleet digest ``<out>/gitops/`` was generated from (:func:`~.digest.fleet_digest`).
    gitops: str | None = None

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.write_to(buffer)
        return buffer.getvalue()

    def write_to(self, stream: BinaryIO) -> None:
        """Write the index's bytes (:meth:`to_bytes`) to ``stream`` as they are encoded.

        ``json.dumps`` with an indent collects every token in one list before joining them:
        for 10,000 clusters, ~6 million strings (hundreds of MB) at the end of a run whose
        memory must stay flat (issue #37); :func:`~.json_text.chunks` writes the same text a
        cluster at a time, and several times faster than ``json.dump``."""
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
        for piece in json_text.chunks(self._document()):
            text.write(piece)
        text.write("\n")
        text.flush()
        text.detach()

    def _document(self) -> dict[str, Any]:
        clusters: dict[str, Any] = {}
        for name, e in sorted(self.clusters.items()):
            # the entry's own maps, not copies: written as they are (json_text takes mappings)
            doc: dict[str, Any] = {"profile": e.profile, "files": e.files}
            if e.previous:
                doc["previous"] = e.previous
            if e.digest is not None:
                doc["digest"] = e.digest
                doc["inputs"] = e.inputs
            if e.delivery:
                doc["delivery"] = True
            clusters[name] = doc
        doc = {"format": FORMAT, "generator": "gpustack", "clusters": clusters}
        if self.gitops is not None:
            doc["gitops"] = self.gitops
        return doc

    def ownership(self) -> OwnershipIndex:
        """This index without what only decides whether to synthesize again (digests, inputs,
        delivery, the gitops digest): what ``--check`` compares, since stale provenance costs
        the next run time, never correctness."""
        return OwnershipIndex(
            clusters={
                n: IndexEntry(e.profile, e.files, e.previous) for n, e in self.clusters.items()
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> OwnershipIndex:
        """Parse an index (the last one parsed is remembered: a run reads it more than once)."""
        last = _LAST_PARSED.get(where)
        if last is not None and last[0] == data:
            return last[1]
        parsed = cls._parse(data, where)
        _LAST_PARSED.clear()
        _LAST_PARSED[where] = (data, parsed)
        return parsed

    @classmethod
    def _parse(cls, data: bytes, where: str) -> OwnershipIndex:
        restore = f"restore it from git (`git checkout -- {where}`)"
        bad = (
            f"{where} is not a gpustack index; {restore}, or delete the output folder's "
            ".gpustack/ and re-run with --force to take the folder over"
        )
        text, doc = _document(data, where, bad)
        raw = doc.get("clusters")
        if not isinstance(raw, dict):
            raise SynthError(bad)

        def unsafe(needle: Any, what: str) -> SynthError:
            return SynthError(
                f"{_locate(where, text, needle)}: {what}; the index only names clusters "
                f"gpustack wrote, so it was edited: {restore}"
            )

        clusters: dict[str, IndexEntry] = {}
        for name, entry in raw.items():
            if not CLUSTER_NAME.fullmatch(name):
                raise unsafe(
                    name,
                    f"cluster name {name!r} is not a DNS label (lowercase letters, digits and "
                    "'-'), so it is no folder inside clusters/",
                )
            if not isinstance(entry, dict) or not isinstance(entry.get("profile"), str):
                raise SynthError(bad)
            files, previous = (
                _digests(name, entry, key, doc["format"], bad, unsafe)
                for key in ("files", "previous")
            )
            clusters[name] = IndexEntry(entry["profile"], files, previous, *_provenance(entry))
        gitops = doc.get("gitops")
        return cls(clusters=clusters, gitops=gitops if _is_digest(gitops) else None)


def _document(data: bytes, where: str, bad: str) -> tuple[str, dict[str, Any]]:
    """The index's text and its JSON object, refused unless gpustack wrote it in a format this
    gpustack reads."""
    try:
        text = data.decode()
        doc: Any = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SynthError(bad) from exc
    if not isinstance(doc, dict) or doc.get("generator") != "gpustack":
        raise SynthError(bad)
    if doc.get("format") not in READABLE:
        raise SynthError(
            f"{where} has format {doc.get('format')!r}, this gpustack reads formats "
            f"{', '.join(map(str, READABLE))}; use the gpustack version that wrote it"
        )
    return text, doc


def _digests(
    name: str,
    entry: dict[str, Any],
    key: str,
    fmt: int,
    bad: str,
    unsafe: Callable[[Any, str], SynthError],
) -> Digests:
    """An entry's ``files`` or ``previous``: each path inside the cluster's folder, with its
    sha256 (format 1 listed ``files`` without digests)."""
    value = entry.get(key, {} if key == "previous" or fmt > 1 else [])
    if fmt == 1 and key == "files" and isinstance(value, list):
        value = dict.fromkeys(value)
    if not isinstance(value, dict):
        raise SynthError(bad)
    if _all_valid(value, digested=fmt > 1):
        return value
    for path, hashed in value.items():
        if not _inside(path):
            raise unsafe(
                path,
                f"file {path!r} of cluster {name!r} is not a relative path inside "
                "its cluster folder",
            )
        if (hashed is not None or fmt > 1) and (
            not isinstance(hashed, str) or not _DIGEST.fullmatch(hashed)
        ):
            raise unsafe(hashed, f"file {path!r} has no sha256 digest")
    return value


def _all_valid(value: dict[Any, Any], *, digested: bool) -> bool:
    """Whether every path of ``value`` is inside the folder (as :func:`_inside` judges) and,
    with ``digested``, every value a sha256 digest.

    A fast sufficient test: string searches over the entry's paths joined by NUL (which no path
    may hold) and its digests joined by newlines, instead of two regex calls per file, which
    were most of the time reading a fleet's 55 MB index took (issue #37). ``False`` may still
    be valid: the caller then judges path by path, for the message."""
    if not value:
        return True
    try:
        paths = "\0".join(value)
        digests = "\n".join(value.values()) if digested else ""
    except TypeError:  # a key or value that is no string
        return False
    count = len(value)
    if (
        not paths
        or paths.count("\0") != count - 1  # a NUL inside a path
        or paths[0] in "/\0"
        or paths[-1] in "/\0"
        or "//" in paths  # an empty part
        or "/\0" in paths
        or "\0/" in paths
        or "\0\0" in paths  # an empty path
        or "\\" in paths
        or paths[0] == "."  # any part of "." or ".." (and some harmless ones) is judged alone
        or "/." in paths
        or "\0." in paths
    ):
        return False
    if not digested:
        return all(v is None for v in value.values())
    # n values of 71 characters, n - 1 separators each followed by "sha256:", and nothing but
    # hex digits besides: then no value holds a newline, and each is "sha256:" and 64 of them
    if (
        set(map(len, value.values())) != {71}
        or not digests.startswith("sha256:")
        or digests.count("\nsha256:") != count - 1
    ):
        return False
    try:
        rest = digests.encode("ascii").translate(None, _HEX)
    except UnicodeEncodeError:
        return False
    return rest == b"sh:" + b"\nsh:" * (count - 1)  # "sha256:" less its hex digits


_LAST_PARSED: dict[str, tuple[bytes, OwnershipIndex]] = {}


def _is_digest(value: Any) -> bool:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def _provenance(entry: Mapping[str, Any]) -> tuple[str | None, dict[str, str], bool]:
    """``digest``, ``inputs`` and ``delivery`` of an index entry. Malformed ones are dropped,
    not refused: they only decide whether to synthesize again, never what to write or delete."""
    digest_, inputs = entry.get("digest"), entry.get("inputs")
    delivery = entry.get("delivery") is True
    if not _is_digest(digest_) or not isinstance(inputs, dict):
        return None, {}, delivery
    if not all(isinstance(k, str) and _is_digest(v) for k, v in inputs.items()):
        return None, {}, delivery
    return digest_, dict(inputs), delivery


def _inside(path: str) -> bool:
    """A relative POSIX path that stays inside the folder it is relative to."""
    if not isinstance(path, str) or not path or "\\" in path or "\0" in path:
        return False
    if _PLAIN_PATH.fullmatch(path) and not _DOT_PART.search(path):
        return True  # the common case, without building a path object
    parts = PurePosixPath(path).parts
    return not path.startswith("/") and all(p not in (".", "..") for p in parts) and bool(parts)


def _locate(where: str, text: str, needle: Any) -> str:
    """``file:line:col`` of the first occurrence of ``needle`` as a JSON string, if found."""
    at = text.find(json.dumps(needle, ensure_ascii=False)) if isinstance(needle, str) else -1
    if at < 0:
        at = text.find(json.dumps(needle)) if isinstance(needle, str) else -1
    if at < 0:
        return where
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"{where}:{line}:{col}"


def index_path(out: Path) -> Path:
    return out / INDEX_DIR / INDEX_FILE


def read_index(out: Path) -> OwnershipIndex | None:
    """The index of ``out``, or ``None`` when gpustack never wrote there. Read as every file
    someone else may have written (:mod:`gpustack.limits`): a FIFO or device put there by a
    pull request is refused, not waited on or read without end."""
    path = index_path(out)
    if not path.exists():
        return None
    try:
        data = read_limited(path, MAX_INDEX_BYTES, what="gpustack index")
    except Refused as exc:
        raise SynthError(
            f"cannot read {path}: {exc.message}; remove it, or restore it from git"
        ) from None
    return OwnershipIndex.from_bytes(data, str(path))


def profile_ref(profile: Path | None, out: Path) -> str:
    """How the index names a profile: relative to ``out`` (portable across checkouts).

    The path is the one the profile was reached by, symbolic links left in it (only ``out`` is
    resolved, so the ``..`` steps out of it are plain folders): reading the reference again
    follows the links as they are *then*. A base reached through a link that was re-pointed
    since therefore reads as the new target, whose bytes the fresh check compares; resolving
    the links here would record the old target, unchanged, and call the cluster fresh.
    """
    if profile is None:
        return PACKAGED_DEFAULT
    try:
        rel = os.path.relpath(os.path.abspath(profile), os.path.realpath(out))
    except ValueError:  # different drives (Windows): no relative path exists
        return Path(os.path.abspath(profile)).as_posix()
    return Path(rel).as_posix()


def ref_file(ref: str, out: Path) -> Path:
    """The file a reference names (see :func:`profile_ref`: relative to the resolved ``out``)."""
    return Path(os.path.realpath(out)) / ref


def profile_exists(ref: str, out: Path) -> bool:
    """Whether the profile a cluster came from is still there (the packaged one: never)."""
    if ref == PACKAGED_DEFAULT:
        return False
    return ref_file(ref, out).is_file()
