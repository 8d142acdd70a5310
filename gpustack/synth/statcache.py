"""A local record of what each cluster folder's files looked like to ``stat`` when they were
last known to hold what the index records: the fresh check's way to skip reading them (issue #37).

Why: proving a fleet's folders unchanged by reading and hashing every file took 10 s for 10,000
clusters (367,500 files). Like git's index, this record keeps per cluster one key made of every
file's stat facts (path, mode, size, mtime, ctime, inode, device) and of the digests the index
records for the folder. A later run that finds the same facts takes the folder as recorded
without reading it; anything else (one fact differs, a file added or gone, the index's digests
changed, no record) is read and hashed as before. Content cannot change without changing ctime,
which no user can set back (``touch -d`` sets the mtime and, doing so, the ctime to now).

Racy-git rule: a file changed within the same tick of the filesystem's clock as its recorded
ctime keeps the very same facts. So a folder is recorded only when each of its files' ctime and
mtime are older than a stamp taken from the same filesystem's clock *after* the facts (for
folders gpustack wrote: after the run) or *before* them (for folders the fresh check read and
hashed: a change after the stamp gets a newer ctime). A folder too recent is simply not
recorded, and read again next time.

The same record vouches for the index file itself: its stat facts when gpustack wrote it, or
read it back equal to what it would write, so a no-op proves the 55 MB index of 10,000 clusters
canonical without encoding it again (:mod:`gpustack.synth.writer`).

The record is a cache, not input: it lives in ``<out>/.gpustack/stat-cache/`` (which holds a
``.gitignore`` of ``*``, so it is never committed), is rewritten whole, and every fault in it
(missing, unreadable, malformed, on another filesystem than the clusters) only means reading
the folders. It is never used under ``--base``, where the checkout is the pull request's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from gpustack.synth.index import INDEX_DIR

#: The cache's folder inside the index folder (gpustack's own, checked to be a plain folder by
#: :mod:`.lock`); the check's gate (:mod:`.gate`) lets it be when it is a plain folder.
CACHE_NAME = "stat-cache"
CACHE_DIR = os.path.join(INDEX_DIR, CACHE_NAME)
CACHE_FILE = "stat.json"
FORMAT = 2
#: Far more than 10,000 clusters' keys (about 90 bytes each); past it, not gpustack's.
MAX_BYTES = 16 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


#: One file's stat facts as they enter a folder's key: path, mode, size, mtime, ctime, inode and
#: device (a string and integers, so a sorted list of them encodes stably: :func:`_encode`).
Row = tuple[str, int, int, int, int, int, int]


def facts_row(rel: str, st: os.stat_result) -> Row:
    return (rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


@dataclass
class FolderFacts:
    """A folder's stat facts, a row per file (:data:`Row`)."""

    rows: list[Row] = field(default_factory=list)

    def add(self, rel: str, st: os.stat_result) -> None:
        self.rows.append(facts_row(rel, st))

    @property
    def newest(self) -> int:
        """The newest mtime or ctime of any file (0 for none)."""
        if not self.rows:
            return 0
        return max(max(r[3] for r in self.rows), max(r[4] for r in self.rows))

    def digest(self) -> bytes:
        return hashlib.sha256(_encode(sorted(self.rows))).digest()


def key(facts: bytes, files: Mapping[str, str | None]) -> str:
    """A folder's key: its facts' digest bound to the index's digests of its files."""
    return hashlib.sha256(facts + _encode(sorted(files.items()))).hexdigest()


def _encode(value: list[Row] | list[tuple[str, str | None]]) -> bytes:
    """Bytes for a list of tuples of strings, integers and ``None``, equal exactly when the
    values are: ``marshal`` version 2, which has no back-references (later versions write
    one where an object is shared, so equal values could encode differently). A third of the
    cost of ``repr`` for the 20,000 keys of a 10,000-cluster no-op (issue #37)."""
    return marshal.dumps(value, 2)


def folder_facts(folder: str) -> FolderFacts | None:
    """The facts of every file in ``folder`` (``lstat``, never followed); ``None`` when it
    holds anything but plain files and non-empty folders (gpustack writes nothing else).

    Tuned for the 367,500 files of 10,000 clusters: folders and links are told by the
    directory entry's type (no system call), only files are ``lstat``-ed."""
    rows: list[Row] = []
    todo = [("", folder)]
    while todo:
        prefix, here = todo.pop()
        try:
            with os.scandir(here) as listing:
                entries = list(listing)
        except OSError:
            return None
        if not entries and prefix:
            return None
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    todo.append((prefix + e.name + "/", e.path))
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                return None
            if not stat.S_ISREG(st.st_mode):
                return None
            rows.append(
                (
                    prefix + e.name,
                    st.st_mode,
                    st.st_size,
                    st.st_mtime_ns,
                    st.st_ctime_ns,
                    st.st_ino,
                    st.st_dev,
                )
            )
    return FolderFacts(rows)


class StatCache:
    """The cache of one output folder: read once, updated in memory, written once if changed."""

    def __init__(
        self, out: str, keys: dict[str, str], device: int | None, index: str | None = None
    ) -> None:
        self.out = out
        self.keys = keys
        #: Device of ``<out>/clusters``: the cache's clock must be the clusters' filesystem's.
        self.device = device
        #: The index file's key (:func:`_key_of` its stat facts) when its bytes were last known
        #: canonical.
        self.index = index
        self.changed = False

    @classmethod
    def load(cls, out: str) -> StatCache:
        """The cache of ``out``; an empty one when there is none or it is not usable."""
        device = _device(out)
        if device is None:
            return cls(out, {}, None)
        keys, index = _read(out)
        return cls(out, keys, device, index)

    def index_unchanged(self, path: str) -> bool:
        """Whether the index file at ``path`` has the facts it had when it was recorded."""
        st = _lstat(path)
        return st is not None and st.st_dev == self.device and _key_of(st) == self.index

    def remember_index(
        self, path: str, holds: Callable[[str], bool], wait: float = 0.05
    ) -> bool | None:
        """Record the index file at ``path`` as canonical if ``holds(path)``, the caller's
        check that the file's bytes are what gpustack writes for the index it describes.
        ``True``: recorded; ``False``: the check failed; ``None``: not recorded, unchecked.

        Racy-git rule as for folders: the facts are taken after a stamp and must be older than
        it, and the check reads the bytes after the facts (a change after them gets a newer
        ctime than the facts recorded). A file just written shares the clock's tick with the
        stamp: waiting up to ``wait`` seconds for the next tick costs a few ms, and saves the
        next no-op the comparison this record exists to skip."""
        deadline = time.monotonic() + wait
        while True:
            stamp = self.stamp()
            st = _lstat(path)
            if stamp is None or st is None or self.device is None or st.st_dev != self.device:
                self._drop_index()
                return None
            if max(st.st_mtime_ns, st.st_ctime_ns) < stamp:
                break
            if time.monotonic() >= deadline:
                self._drop_index()
                return None
            time.sleep(0.002)
        if not holds(path):
            self._drop_index()
            return False
        k = _key_of(st)
        if self.index != k:
            self.index = k
            self.changed = True
        return True

    def _drop_index(self) -> None:
        if self.index is not None:
            self.index = None
            self.changed = True

    def unchanged(self, name: str, facts: FolderFacts, files: Mapping[str, str | None]) -> bool:
        """Whether the folder of cluster ``name`` has the facts recorded with these digests."""
        recorded = self.keys.get(name)
        return recorded is not None and recorded == key(facts.digest(), files)

    def forget(self, name: str) -> None:
        if self.keys.pop(name, None) is not None:
            self.changed = True

    def remember(
        self, name: str, facts: bytes, newest: int, files: Mapping[str, str | None], stamp: int
    ) -> None:
        """Record a folder, unless a file of it is as recent as ``stamp`` (racy, see above)."""
        if newest >= stamp:
            self.forget(name)
            return
        k = key(facts, files)
        if self.keys.get(name) != k:
            self.keys[name] = k
            self.changed = True

    def stamp(self) -> int | None:
        """The clusters' filesystem's clock now (``None``: no usable cache folder)."""
        folder = _folder(self.out, create=True)
        if folder is None or self.device is None:
            return None
        try:
            if os.fstat(folder).st_dev != self.device:
                return None
            name = f".stamp-{os.getpid()}"
            fd = os.open(
                name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644, dir_fd=folder
            )
            try:
                os.write(fd, b"x")  # a write sets the mtime from the clock even if it existed
                return os.fstat(fd).st_mtime_ns
            finally:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=folder)
        except OSError:
            return None
        finally:
            os.close(folder)

    def keep_only(self, names: Iterable[str]) -> None:
        """Drop the keys of clusters no longer in the index."""
        wanted = set(names)
        for name in [n for n in self.keys if n not in wanted]:
            self.forget(name)

    def save(self) -> None:
        """Write the cache if it changed (a failure only costs the next run a read)."""
        if not self.changed:
            return
        folder = _folder(self.out, create=True)
        if folder is None:
            return
        doc: dict[str, object] = {"format": FORMAT, "clusters": self.keys}
        if self.index is not None:
            doc["index"] = self.index
        data = json.dumps(doc, sort_keys=True).encode()
        tmp = f".{CACHE_FILE}.{os.getpid()}.tmp"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o644, dir_fd=folder
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, CACHE_FILE, src_dir_fd=folder, dst_dir_fd=folder)
            self.changed = False
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
        finally:
            os.close(folder)


def _device(out: str) -> int | None:
    try:
        return os.stat(os.path.join(out, "clusters")).st_dev
    except OSError:
        return None


def _folder(out: str, *, create: bool) -> int | None:
    """A descriptor of ``<out>/.gpustack/stat-cache`` (a plain folder, never a link), made with its
    ``.gitignore`` when ``create``; ``None`` when it cannot be had."""
    path = os.path.join(out, CACHE_DIR)
    try:
        if create and not os.path.lexists(path):
            os.mkdir(path)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
            try:
                ignore = os.open(
                    ".gitignore", os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o644, dir_fd=fd
                )
                try:
                    os.write(ignore, b"# gpustack's local stat cache: never committed\n*\n")
                finally:
                    os.close(ignore)
            except OSError:
                os.close(fd)
                raise
            return fd
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except OSError:
        return None


def _lstat(path: str) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _key_of(st: os.stat_result) -> str:
    return hashlib.sha256(repr(facts_row("index", st)).encode()).hexdigest()


def _read(out: str) -> tuple[dict[str, str], str | None]:
    """The clusters' keys and the index's key; empty for a missing or unusable cache."""
    folder = _folder(out, create=False)
    if folder is None:
        return {}, None
    try:
        fd = os.open(CACHE_FILE, os.O_RDONLY | _NOFOLLOW, dir_fd=folder)
    except OSError:
        return {}, None
    finally:
        os.close(folder)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return {}, None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        doc = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return {}, None
    finally:
        os.close(fd)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return {}, None
    clusters = doc.get("clusters")
    if not isinstance(clusters, dict):
        return {}, None
    index = doc.get("index")
    keys = {n: k for n, k in clusters.items() if isinstance(n, str) and isinstance(k, str)}
    return keys, index if isinstance(index, str) else None
