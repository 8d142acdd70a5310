"""A problem found in a profile, before it is given a file position.

Schema errors and semantic rules both speak in JSON paths; the checker turns a path into
``file:line:col`` with the document's position map, so neither needs to know about files.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile.document import JsonPath


@dataclass(frozen=True)
class Finding:
    """What is wrong (``message``), at which path, and how to fix it (``hint``).

    ``at_key`` points at the key rather than its value (unknown or duplicate keys). ``rule`` is
    the ID of the rule that found it (see :mod:`gpustack.profile.rules.registry`); the registry
    stamps it, so a rule function never spells its own ID a second time. ``notice``: the finding
    informs and fails nothing (a Kubernetes release past its end of life, by default); it is
    printed with the issues and the profile stays valid.
    """

    path: JsonPath
    message: str
    hint: str | None = None
    at_key: bool = False
    rule: str | None = None
    notice: bool = False
