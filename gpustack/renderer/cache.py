"""The renderer's content-addressed cache of manifests: a re-render of unchanged inputs answered
from memory, bounded by bytes.

A key is the SHA-256 of everything the output is a function of (:mod:`gpustack.synth.digest`
says what that is for ``synth``; here it is taken per call):

* the generator: gpustack's version and :func:`~gpustack.synth.digest.generator_digest` (the
  libraries' versions and every packaged file synthesis reads), as the renderer loaded them;
* the profile parameter, the header's name for the profile and the profiles root ``extends``
  may not leave, relative to the working directory (both follow from where the source path
  sits in the repository: the same bytes elsewhere may render otherwise, or be refused);
* each file the last render of this profile read (the profile, then every base it extends),
  by its path relative to the working directory and its bytes;
* the day: validation dates its end-of-life findings by the clock's day, and
  ``cluster.endOfLife: error`` turns a release past its end into a refusal from that day on, so
  yesterday's manifests are not today's answer.

The absolute working directory is left out on purpose: Argo CD unpacks every call into a fresh
folder. Which files to hash is remembered per profile from its last render; the profile's bytes
are among them, so a profile that now extends other bases has another key and is rendered.
Only successful renders are kept: an error is rendered again, with the same line. The key of a
render is taken after it, from the files as they are then; so that a file changed while it
rendered cannot file the old output under the new bytes, a render is kept only when no file it
read changed (its ``ctime``) since shortly before the render began (:data:`RACY_NS`, more than
the kernel's coarse file clock lags).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from gpustack.profile.loader import profiles_root
from gpustack.synth.header import source_name

#: Profiles whose file lists are remembered (a few hundred bytes each).
MANIFESTS = 4096
#: A file changed this close to a render's start may have changed during it.
RACY_NS = 50_000_000


def _layout(cwd: str, profile: str) -> tuple[str, str]:
    """Where the profile sits: the header's name for it and its profiles root, relative."""
    path = Path(cwd, profile)
    root = os.path.relpath(profiles_root(path), os.path.realpath(cwd))
    return source_name(path), root


def input_key(
    generator: str,
    cwd: str,
    profile: str,
    files: Sequence[str],
    day: date,
    changed_after: int | None = None,
) -> str | None:
    """The key of rendering ``profile`` in ``cwd`` from ``files`` (relative to ``cwd``) on
    ``day``; ``None`` when one of them cannot be read (the render will say why) or, with
    ``changed_after`` (nanoseconds since the epoch), changed later than that."""
    digest = hashlib.sha256()
    for part in (generator, day.isoformat(), profile, *_layout(cwd, profile)):
        digest.update(f"{len(part)}:{part}\0".encode("utf-8", "surrogateescape"))
    for file in files:
        try:
            with open(os.path.join(cwd, file), "rb") as handle:
                data = handle.read()
                changed = os.fstat(handle.fileno()).st_ctime_ns
        except OSError:
            return None
        if changed_after is not None and changed > changed_after:
            return None
        name = file.encode("utf-8", "surrogateescape")
        digest.update(b"%d:%s\0%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()


class OutputCache:
    """Manifests by :func:`input_key`, least recently used dropped first past ``limit`` bytes;
    safe to use from the renderer's connection threads."""

    def __init__(self, generator: str, limit: int) -> None:
        self.generator = generator
        self.limit = limit
        self.size = 0
        self._outputs: OrderedDict[str, bytes] = OrderedDict()
        self._files: OrderedDict[tuple[str, str, str], tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def _where(self, cwd: str, profile: str) -> tuple[str, str, str]:
        return (profile, *_layout(cwd, profile))

    def lookup(self, cwd: str, profile: str) -> bytes | None:
        """The output of an earlier render of the same inputs, or ``None``."""
        with self._lock:
            files = self._files.get(self._where(cwd, profile))
        if files is None:
            return None
        key = input_key(self.generator, cwd, profile, files, date.today())
        with self._lock:
            output = self._outputs.get(key) if key is not None else None
            if output is not None and key is not None:
                self._outputs.move_to_end(key)
            return output

    def store(
        self, cwd: str, profile: str, files: Sequence[str], output: bytes, started: int
    ) -> None:
        """Keep ``output``, rendered in ``cwd`` from ``files`` from ``started`` (``time_ns``),
        unless it alone is over the limit or a file may have changed during the render."""
        day = date.fromtimestamp(started / 1e9)  # the day validation saw (local, as date.today)
        key = input_key(self.generator, cwd, profile, files, day, started - RACY_NS)
        if key is None or len(output) > self.limit:
            return
        with self._lock:
            self._files[self._where(cwd, profile)] = tuple(files)
            self._files.move_to_end(self._where(cwd, profile))
            while len(self._files) > MANIFESTS:
                self._files.popitem(last=False)
            if key not in self._outputs:
                self._outputs[key] = output
                self.size += len(output)
            self._outputs.move_to_end(key)
            while self.size > self.limit:
                _, dropped = self._outputs.popitem(last=False)
                self.size -= len(dropped)
