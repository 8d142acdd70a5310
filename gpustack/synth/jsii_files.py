"""Where jsii (which cdk8s runs on) writes its files, and its failures to write them in one line.

jsii writes two kinds of files when Node starts: its runtime (about 2 MB, from Python, in a
temporary folder) and the JavaScript packages it extracts (cdk8s and constructs, about 400
files), by default into a cache in the user's home (``~/.cache/aws/jsii/package-cache``). Issue
#33 found the cache in the home of every user who ran ``synth``, and a full ``TMPDIR``, a
read-only ``HOME`` or a file-size limit (``ulimit -f``) failing inside jsii with a traceback,
or with Node waiting forever.

So before Node starts, :func:`place_jsii_files` points jsii's package cache (its documented
``JSII_RUNTIME_PACKAGE_CACHE_ROOT``, unless the user set it or ``JSII_RUNTIME_PACKAGE_CACHE``)
at a folder gpustack makes for the user in the temporary folder, private to them (jsii checks
its own default for that, not a folder it is given, so this module does), and checks that the
temporary folder can take what jsii will write there: writable, room for
:data:`NEEDED_BYTES`, and a file-size limit above :data:`LARGEST_FILE`. Each failure is a
:class:`SynthError` naming the folder and the fix. Nothing of this runs where nothing is
rendered: Node starts only for a stale cluster (:mod:`gpustack.synth.fresh`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import stat
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

from gpustack.synth.errors import SynthError

CACHE_ROOT_VAR = "JSII_RUNTIME_PACKAGE_CACHE_ROOT"
CACHE_SWITCH_VAR = "JSII_RUNTIME_PACKAGE_CACHE"
#: What jsii writes on a first start: its runtime (2 MB) and cdk8s' and constructs' packages
#: extracted (about 20 MB), with room to spare.
NEEDED_BYTES = 64 << 20
#: The largest single file among those (cdk8s' ``.jsii`` assembly is a few MB).
LARGEST_FILE = 16 << 20

_FIX = "free space there, or set TMPDIR to a writable folder with room"


def cache_folder(tmp: str | None = None) -> Path:
    """The user's jsii package cache: ``<temporary folder>/gpustack-<uid>/jsii``."""
    return Path(tmp or tempfile.gettempdir()) / f"gpustack-{os.getuid()}" / "jsii"


def place_jsii_files(env: MutableMapping[str, str]) -> None:
    """Point jsii's package cache at :func:`cache_folder` in ``env`` (unless the user chose
    one) after checking that jsii can write its files; :class:`SynthError` otherwise."""
    try:
        tmp = tempfile.gettempdir()
    except OSError as exc:  # no usable temporary folder at all
        raise SynthError(f"cannot write cdk8s' runtime (jsii) files: {exc}; {_FIX}") from None
    _check_room(Path(tmp))
    # Node takes TMPDIR as it is, even where Python passed over it as unusable: then Node
    # writes where Python found room
    given = env.get("TMPDIR")
    if given and given != tmp and not _writable(given):
        env["TMPDIR"] = tmp
    if env.get(CACHE_ROOT_VAR) or env.get(CACHE_SWITCH_VAR):
        return
    cache = cache_folder(tmp)
    try:
        _private_folder(cache.parent)
        _private_folder(cache)
    except OSError as exc:
        raise SynthError(
            f"cannot make jsii's package cache {cache}: {exc.strerror or exc}; {_FIX}"
        ) from None
    env[CACHE_ROOT_VAR] = str(cache)


def _private_folder(path: Path) -> None:
    """``path`` as a folder only this user can write: made so, or refused when it is a link,
    someone else's, or writable by others (they could plant JavaScript that Node runs)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise SynthError(
            f"{path} is not a folder private to this user (a link, someone else's, or writable"
            " by others), so jsii's package cache cannot live there; remove it, or set TMPDIR "
            "to another folder"
        )


def _writable(folder: str) -> bool:
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _check_room(tmp: Path) -> None:
    """Refuse, in one line, a temporary folder jsii cannot write its files into."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft != resource.RLIM_INFINITY and soft < LARGEST_FILE:
        raise SynthError(
            f"the file size limit ({soft} bytes, `ulimit -f`) is below the {LARGEST_FILE >> 20}"
            " MiB of the largest file cdk8s' runtime (jsii) writes; raise it (`ulimit -f "
            "unlimited`)"
        )
    try:
        with tempfile.TemporaryFile(dir=tmp):
            pass
        room = os.statvfs(tmp)
    except OSError as exc:
        why = "it is read-only" if exc.errno == errno.EROFS else (exc.strerror or str(exc))
        raise SynthError(
            f"cannot write cdk8s' runtime (jsii) files into the temporary folder {tmp}: {why};"
            f" {_FIX}"
        ) from None
    free = room.f_bavail * room.f_frsize
    if free < NEEDED_BYTES:
        raise SynthError(
            f"the temporary folder {tmp} has {free >> 20} MiB free, and cdk8s' runtime (jsii) "
            f"writes up to {NEEDED_BYTES >> 20} MiB there; {_FIX}"
        )
