"""A synthesized pod's view of a fake host root: its hostPath mounts, resolved to folders.

The toolkit's installer only ever sees container paths (``/runtime/config-dir/config.toml``,
``/host/etc/...``); what lands on the host is decided by the DaemonSet's ``volumeMounts`` and
``hostPath`` volumes. :class:`PodView` applies exactly those to a fake root, so a path the pod
does not mount is written to the container's own (throw-away) filesystem, as on a real node.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ReadOnlyError(OSError):
    """A write to a read-only mount, or to a host folder that is read-only (RHCOS's /usr)."""


@dataclass(frozen=True)
class Mount:
    ctr: str
    host: str
    read_only: bool


@dataclass
class PodView:
    """``root``: the fake host's ``/``; ``scratch``: the container's own filesystem;
    ``read_only_host``: host folders no one may write (RHCOS's ``/usr``), except those under
    ``writable_host`` (RHCOS's ``/usr/local``, a link to ``/var/usrlocal``)."""

    root: Path
    scratch: Path
    mounts: tuple[Mount, ...]
    read_only_host: tuple[str, ...] = ()
    writable_host: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        container: Mapping[str, Any],
        pod_spec: Mapping[str, Any],
        root: Path,
        scratch: Path,
        read_only_host: tuple[str, ...] = (),
        writable_host: tuple[str, ...] = (),
    ) -> PodView:
        volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
        mounts = []
        for m in container.get("volumeMounts", []):
            volume = volumes[m["name"]]
            if "hostPath" in volume:
                mounts.append(
                    Mount(m["mountPath"], volume["hostPath"]["path"], bool(m.get("readOnly")))
                )
        return cls(root, scratch, tuple(mounts), read_only_host, writable_host)

    def host_path(self, path: str) -> str | None:
        """The host path behind a container path; ``None`` when no hostPath mount covers it."""
        best: Mount | None = None
        for m in self.mounts:
            prefix = m.ctr.rstrip("/")
            if (path == prefix or path.startswith(prefix + "/")) and (
                best is None or len(prefix) > len(best.ctr.rstrip("/"))
            ):
                best = m
        if best is None:
            return None
        rest = path[len(best.ctr.rstrip("/")) :]
        return posixpath.normpath(best.host.rstrip("/") + rest) if rest else best.host

    def _mount_of(self, path: str) -> Mount | None:
        found = [m for m in self.mounts if path.startswith(m.ctr.rstrip("/") + "/")]
        return max(found, key=lambda m: len(m.ctr), default=None)

    def local(self, path: str) -> Path:
        """Where a container path lives in the fake world (host root or container scratch)."""
        host = self.host_path(path)
        if host is None:
            return self.scratch / path.lstrip("/")
        return self.root / host.lstrip("/")

    def write(self, path: str, text: str) -> None:
        mount = self._mount_of(path)
        host = self.host_path(path)
        if mount is not None and mount.read_only:
            raise ReadOnlyError(f"{path}: read-only mount")

        def under(folders: tuple[str, ...]) -> bool:
            return host is not None and any(host == d or host.startswith(d + "/") for d in folders)

        if under(self.read_only_host) and not under(self.writable_host):
            raise ReadOnlyError(f"{host}: read-only on this host")
        target = self.local(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def read(self, path: str) -> str | None:
        target = self.local(path)
        return target.read_text() if target.is_file() else None

    def exists(self, path: str) -> bool:
        return self.local(path).exists()
