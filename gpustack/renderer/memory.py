"""How much memory the renderer holds: its own resident set and its children's (jsii's Node).

Read from ``/proc``, where the kernel lists each thread's children; elsewhere it reads as 0 and
only the render count replaces a renderer.
"""

from __future__ import annotations

import os
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss(pid: str) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _children() -> set[str]:
    found: set[str] = set()
    try:
        tasks = list(Path("/proc/self/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.update((task / "children").read_text().split())
        except OSError:
            continue
    return found


def resident_bytes() -> int:
    """This process's resident bytes plus its direct children's."""
    return _rss("self") + sum(_rss(pid) for pid in _children())
