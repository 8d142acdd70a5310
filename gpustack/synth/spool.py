"""Keep a fleet's rendered files on disk from the moment each cluster is laid out.

A run renders every changed cluster before it plans and writes (the plan needs all of them:
ownership, hand edits, the index, the GitOps folder), and a cluster's files are ~130 KB. Held in
memory, 1,000 clusters took 130 MB more than 10 did, and 10,000 would have needed 2 GiB
(issue #37). So as each cluster arrives from the renderer its files' bytes go to one anonymous
temporary file, and the cluster keeps only their places in it; whoever needs a file's bytes
(its digest, the comparison with the folder, the write) reads them back, one file at a time.

The file is created already unlinked (:func:`tempfile.TemporaryFile`), so nothing is left
behind whatever stops the run; it lives in the temporary folder (``TMPDIR``), not in the output
folder, so ``--check`` writes nothing there. Small runs (:data:`SPOOL_MIN`) keep their bytes in
memory: a single ``gpustack template`` reads nothing back.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from dataclasses import dataclass
from typing import Any

from gpustack.synth.layout import ClusterOutput, Head, ManifestFile

#: Runs rendering fewer clusters keep their files in memory.
SPOOL_MIN = 32


class Spool:
    """One run's spool: closed (and gone) once no file kept in it is referenced."""

    def __init__(self) -> None:
        # open as long as a file kept in it is referenced: no `with` block spans that
        self._file = tempfile.TemporaryFile(prefix="gpustack-spool-")  # noqa: SIM115
        self._end = 0
        # A fleet's clusters have the same paths and heads over and over (they differ in
        # labels, not in which objects they have): one tuple of each, kept by all of them.
        self._shared: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        # closed (not left to the garbage collector's warning) when the spool goes
        weakref.finalize(self, self._file.close)

    def keep(self, output: ClusterOutput) -> ClusterOutput:
        """``output`` with its files' bytes written to the spool and dropped from memory; what
        is left of it is their paths, heads and lengths (:class:`_Spooled`)."""
        fd = self._file.fileno()
        start = self._end
        lengths = array("Q")
        for f in output.files:
            data = f.content
            offset = self._end
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, offset + len(data) - len(view)) :]
            self._end = offset + len(data)
            lengths.append(len(data))
        files = output.files
        paths = self._one(tuple(f.path for f in files))
        heads = self._one(tuple(f.head for f in files))
        return ClusterOutput(output.name, _Spooled(self, start, lengths, paths, heads))

    def _one(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        return self._shared.setdefault(value, value)

    def read(self, offset: int, length: int) -> bytes:
        data = os.pread(self._file.fileno(), length, offset)
        if len(data) != length:  # the spool is this run's own file: never short
            raise OSError(f"the spool file of this run lost data at {offset}")
        return data


class _Spooled:
    """One cluster's files in the spool, one after the other from ``start``: made into
    :class:`ManifestFile` objects only while someone goes through them."""

    __slots__ = ("spool", "start", "lengths", "paths", "heads")

    def __init__(
        self,
        spool: Spool,
        start: int,
        lengths: array[int],
        paths: tuple[str, ...],
        heads: tuple[Head | None, ...],
    ) -> None:
        self.spool = spool
        self.start = start
        self.lengths = lengths
        self.paths = paths
        self.heads = heads

    def files(self) -> tuple[ManifestFile, ...]:
        files = []
        offset = self.start
        for path, head, length in zip(self.paths, self.heads, self.lengths, strict=True):
            files.append(ManifestFile(path, _Place(self.spool, offset, length), head))
            offset += length
        return tuple(files)


@dataclass(frozen=True, slots=True)
class _Place:
    """Where one file's bytes are in the spool (keeping the spool open)."""

    spool: Spool
    offset: int
    length: int

    def read(self) -> bytes:
        return self.spool.read(self.offset, self.length)
