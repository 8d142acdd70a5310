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
from dataclasses import dataclass

from gpustack.synth.layout import ClusterOutput, ManifestFile

#: Runs rendering fewer clusters keep their files in memory.
SPOOL_MIN = 32


class Spool:
    """One run's spool: closed (and gone) once no file kept in it is referenced."""

    def __init__(self) -> None:
        # open as long as a file kept in it is referenced: no `with` block spans that
        self._file = tempfile.TemporaryFile(prefix="gpustack-spool-")  # noqa: SIM115
        self._end = 0
        # closed (not left to the garbage collector's warning) when the spool goes
        weakref.finalize(self, self._file.close)

    def keep(self, output: ClusterOutput) -> ClusterOutput:
        """``output`` with its files' bytes written to the spool and dropped from memory."""
        fd = self._file.fileno()
        files = []
        for f in output.files:
            data = f.content
            offset = self._end
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, offset + len(data) - len(view)) :]
            self._end = offset + len(data)
            files.append(ManifestFile(f.path, _Place(self, offset, len(data)), f.head))
        return ClusterOutput(output.name, tuple(files))

    def read(self, offset: int, length: int) -> bytes:
        data = os.pread(self._file.fileno(), length, offset)
        if len(data) != length:  # the spool is this run's own file: never short
            raise OSError(f"the spool file of this run lost data at {offset}")
        return data


@dataclass(frozen=True, slots=True)
class _Place:
    """Where one file's bytes are in the spool (keeping the spool open)."""

    spool: Spool
    offset: int
    length: int

    def read(self) -> bytes:
        return self.spool.read(self.offset, self.length)
