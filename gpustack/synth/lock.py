"""The output folder's lock: one synth (or ``--check``) at a time per output folder.

Apart from planning and writing because it is the one piece that talks to the kernel about other
processes: :func:`locked` is held around a whole plan-and-write, so two runs never plan from the
same index (issue #11, item 6).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from gpustack.synth.errors import SynthError
from gpustack.synth.index import INDEX_DIR

#: Seconds a run waits for another one writing the same output folder before it gives up.
LOCK_WAIT = 300.0


def check_output(out: Path) -> None:
    """Refuse an output that is not a folder, and an index folder that is a link or a file:
    followed, a link would put the index (and the Argo CD record) outside ``out``, wherever a
    pull request pointed it, and read back whatever stands there (issue #21, item 6)."""
    existing = next((p for p in (out, *out.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        what = "" if existing == out else f" ({existing} is a file)"
        raise SynthError(f"output {out} is not a folder{what}; choose another --out")
    index_dir = out / INDEX_DIR
    if index_dir.is_symlink() or (os.path.lexists(index_dir) and not index_dir.is_dir()):
        raise SynthError(
            f"{index_dir} must be a plain folder, not a link or a file; remove it (the next "
            "run writes a new index)"
        )


_held = threading.local()


def _held_outs() -> set[str]:
    outs: set[str] | None = getattr(_held, "outs", None)
    if outs is None:
        outs = _held.outs = set()
    return outs


@contextlib.contextmanager
def locked(
    out: Path,
    *,
    shared: bool = False,
    wait: float = LOCK_WAIT,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold a lock on the output folder for a whole plan-and-write (``shared``: a read-only
    ``--check``), so two runs never plan from the same index. Another run's lock is waited for
    (``on_wait`` is called once if so) for up to ``wait`` seconds. ``flock`` on the folder
    itself: no lock file to commit, and the kernel drops it when a run dies, even by SIGKILL.

    Creates ``out`` (and its missing parents) to lock it, and removes them again when the block
    fails. Re-entrant within a thread; a missing ``out`` is not created for a shared lock.
    """
    key = os.path.realpath(out)
    if key in _held_outs():
        yield
        return
    check_output(out)
    created: list[Path] = []
    if not os.path.lexists(out):
        if shared:
            yield  # nothing there to read or to protect
            return
        created = [p for p in (out, *out.parents) if not os.path.lexists(p)]
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise SynthError(f"cannot create {exc.filename or out}: {exc.strerror}") from exc
    try:
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            _acquire(fd, out, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, wait, on_wait)
            _held_outs().add(key)
            try:
                yield
            finally:
                _held_outs().discard(key)
        finally:
            os.close(fd)
    except BaseException:
        for folder in created:  # deepest first: a failed first run leaves no trace
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _acquire(fd: int, out: Path, op: int, wait: float, on_wait: Callable[[], None] | None) -> None:
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not told and on_wait is not None:
                on_wait()
            told = True
            if time.monotonic() >= deadline:
                raise SynthError(
                    f"another gpustack synth has been writing {out} for {wait:g} s; wait for "
                    "it to finish, or stop it if it hangs, then run again"
                ) from None
            time.sleep(0.05)
