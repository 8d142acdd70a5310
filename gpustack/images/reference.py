"""An image reference in parts: ``[registry/]path[:tag][@digest]``.

Facts used (the reference grammar of the distribution project, ``reference/reference.go`` and
``normalize.go`` of github.com/distribution/reference, which the container runtimes follow):
a digest follows ``@``; a tag follows the last ``:`` after the last ``/``; the first path
component names a registry when it holds a ``.`` or a ``:``, or is ``localhost``, and otherwise
the image is on Docker Hub (``docker.io``), where a one-component path is in ``library/``.
The registry rule is :func:`gpustack.profile.model.names_registry`, the one
:func:`~gpustack.profile.model.rehome` follows when it moves an image to ``cluster.imageRegistry``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile.model import names_registry

#: Where an image whose reference names no registry is pulled from.
DEFAULT_REGISTRY = "docker.io"


@dataclass(frozen=True)
class Reference:
    """``name`` is everything before the tag and digest, as written (registry included when
    one was written); ``tag`` and ``digest`` are ``None`` when absent."""

    name: str
    tag: str | None = None
    digest: str | None = None

    @property
    def registry(self) -> str:
        """The registry the image is pulled from (``docker.io`` when none is written)."""
        first, sep, _ = self.name.partition("/")
        return first if sep and names_registry(first) else DEFAULT_REGISTRY

    @property
    def path(self) -> str:
        """The repository inside its registry (``library/busybox`` for ``busybox``)."""
        first, sep, rest = self.name.partition("/")
        if sep and names_registry(first):
            return rest
        return self.name if sep else f"library/{self.name}"

    @property
    def tail(self) -> str:
        """``:tag@digest`` as written (what follows the name)."""
        tag = f":{self.tag}" if self.tag is not None else ""
        return tag + (f"@{self.digest}" if self.digest is not None else "")


def parse(reference: str) -> Reference:
    """``reference`` split into name, tag and digest (never raises: a malformed reference is
    the API server's and the runtime's to refuse, and is listed as written)."""
    rest, at, digest = reference.partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        return Reference(rest[:colon], rest[colon + 1 :], digest if at else None)
    return Reference(rest, None, digest if at else None)
