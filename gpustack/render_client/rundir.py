"""Where the renderer's socket lives, checked before anything connects to it, and its settings.

The socket is a file in ``<base>/gpustack-renderer-<uid>``: ``<base>`` is
``GPUSTACK_RENDERER_DIR``, else ``XDG_RUNTIME_DIR``, else ``TMPDIR``, else ``/tmp`` (the
sidecar's own emptyDir). The folder is created with mode 0700 and, before every connection, must
be a real folder (not a link), owned by this user, that nobody else may enter: a socket another
user placed or could replace would be asked to render, and would be believed. A folder that fails
the check is not repaired (someone else made it); the plugin renders in its own process instead
and says why on stderr.

Settings come from the environment (the sidecar container's ``env``), so they also reach the
renderer the client starts; :class:`Settings` reads them once, and a malformed one is an error.
"""

from __future__ import annotations

import os
import stat
import zlib

#: ``off`` turns the warm renderer off: each ``generate`` renders in a fresh process.
SWITCH = "GPUSTACK_RENDERER"
BASE_DIR = "GPUSTACK_RENDERER_DIR"
#: Longest unix socket path Linux takes (``sun_path`` is 108 bytes with its NUL).
SOCKET_PATH_MAX = 107

#: name -> (default, what it bounds); every one is a positive number.
KNOBS: dict[str, tuple[float, str]] = {
    "GPUSTACK_RENDERER_ACK_S": (5.0, "seconds a renderer has to take a call before it is wedged"),
    "GPUSTACK_RENDERER_TIMEOUT_S": (120.0, "seconds a renderer has to answer a call"),
    "GPUSTACK_RENDERER_START_S": (60.0, "seconds a new renderer has to open its socket"),
    "GPUSTACK_RENDERER_IDLE_S": (900.0, "seconds without a call after which a renderer exits"),
    "GPUSTACK_RENDERER_MAX_RENDERS": (1000.0, "renders after which a renderer is replaced"),
    "GPUSTACK_RENDERER_RSS_MIB": (1024.0, "MiB (with Node) past which a renderer is replaced"),
    "GPUSTACK_RENDERER_CACHE_MIB": (128.0, "MiB of rendered output a renderer keeps"),
}


class Unusable(Exception):
    """The socket folder or a setting cannot be used; the message is one line."""


class Settings:
    """The knobs, read (a plain class: :class:`typing.NamedTuple` would import ``typing``)."""

    __slots__ = (
        "ack_s",
        "cache_bytes",
        "idle_s",
        "max_renders",
        "rss_bytes",
        "start_s",
        "timeout_s",
    )

    def __init__(
        self,
        ack_s: float,
        timeout_s: float,
        start_s: float,
        idle_s: float,
        max_renders: int,
        rss_bytes: int,
        cache_bytes: int,
    ) -> None:
        self.ack_s, self.timeout_s, self.start_s, self.idle_s = ack_s, timeout_s, start_s, idle_s
        self.max_renders, self.rss_bytes, self.cache_bytes = max_renders, rss_bytes, cache_bytes


def settings(env: dict[str, str] | os._Environ[str]) -> Settings:
    """The knobs of :data:`KNOBS` from ``env``; :class:`Unusable` for one that is not a
    positive number."""
    values: list[float] = []
    for name, (default, what) in KNOBS.items():
        raw = env.get(name)
        try:
            value = default if raw is None or not raw.strip() else float(raw)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise Unusable(f"{name}={raw!r} is not a positive number ({what})")
        values.append(value)
    ack, timeout, start, idle, renders, rss, cache = values
    mib = 1 << 20
    return Settings(ack, timeout, start, idle, int(renders), int(rss * mib), int(cache * mib))


def folder(env: dict[str, str] | os._Environ[str]) -> str:
    """The socket folder for this user, created when missing, checked by :func:`check`."""
    base = env.get(BASE_DIR) or env.get("XDG_RUNTIME_DIR") or env.get("TMPDIR") or "/tmp"
    path = os.path.join(base, f"gpustack-renderer-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise Unusable(f"cannot create {path}: {exc.strerror}") from None
    check(path)
    return path


def check(path: str) -> None:
    """:class:`Unusable` unless ``path`` is a folder (not a link) of this user, mode 0700 or
    narrower."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise Unusable(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Unusable(f"{path} is not a folder (a link or a file is never followed)")
    if st.st_uid != os.geteuid():
        raise Unusable(f"{path} belongs to uid {st.st_uid}, not to this user ({os.geteuid()})")
    if st.st_mode & 0o077:
        raise Unusable(f"{path} has mode {stat.S_IMODE(st.st_mode):o}; only 700 is trusted")


def socket_path(folder: str, version: str, package: str, python: str) -> str:
    """One renderer per gpustack version, installation and interpreter: two releases' sidecars
    or two checkouts never answer for each other."""
    tag = zlib.crc32(f"{package}\0{python}".encode()) & 0xFFFFFFFF
    path = os.path.join(folder, f"{version}-{tag:08x}.sock")
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        raise Unusable(f"{path} is longer than a unix socket path may be; set {BASE_DIR}")
    return path
