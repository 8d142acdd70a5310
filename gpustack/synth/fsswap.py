"""Swap a freshly written folder into place so readers never see a half-written one.

On Linux ``renameat2(RENAME_EXCHANGE)`` swaps two paths in one atomic step: a reader sees the old
folder or the new one, never a mix and never nothing. Where that call is missing (other systems,
some filesystems) we fall back to two renames, which still never exposes a partial folder but
leaves the path absent for an instant.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}


def _load_renameat2() -> Callable[..., Any] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _load_renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap ``a`` and ``b``; ``False`` when this system can't (nothing changed)."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(a))


def sibling(path: Path, tag: str) -> Path:
    """A hidden, unused name next to ``path`` (same folder, so same filesystem for renames)."""
    return path.with_name(f".{path.name}.gpustack-{tag}-{secrets.token_hex(4)}")


def swap_in(staged: Path, target: Path) -> Path | None:
    """Move ``staged`` to ``target``; returns where the previous ``target`` now is, if any
    (in ``staged``'s folder, which must be on the same filesystem as ``target``)."""
    if not os.path.lexists(target):
        os.rename(staged, target)
        return None
    if exchange(staged, target):
        return staged
    old = sibling(staged.parent / target.name, "old")  # beside the staged copy, not the target
    os.rename(target, old)
    try:
        os.rename(staged, target)
    except OSError:
        os.rename(old, target)
        raise
    return old


def swap_back(target: Path, old: Path | None, staged: Path) -> None:
    """Undo :func:`swap_in`: the old folder goes back to ``target``, the new one to ``staged``."""
    if old is None:
        os.rename(target, staged)
    elif not exchange(old, target):
        os.rename(target, staged)
        os.rename(old, target)


def remove(path: Path) -> None:
    """Delete a file, a symlink (never what it points to) or a folder tree."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)
