"""A fake ``/dev`` with NVIDIA device nodes for gpustack's ``/dev/char`` script.

Real character devices where ``mknod`` is allowed (root); elsewhere regular files, with a
``stat`` on ``PATH`` that answers their major:minor in ``stat -c '%t %T'``'s format, so the
script runs unchanged either way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: NVIDIA's device nodes and their numbers on a two-GPU node (195: nvidia, 511: nvidia-uvm and
#: 510: nvidia-caps are dynamic majors; these are typical).
NVIDIA_NODES: dict[str, tuple[int, int]] = {
    "nvidia0": (195, 0),
    "nvidia1": (195, 1),
    "nvidiactl": (195, 255),
    "nvidia-modeset": (195, 254),
    "nvidia-uvm": (511, 0),
    "nvidia-uvm-tools": (511, 1),
    "nvidia-caps/nvidia-cap1": (510, 1),
    "nvidia-caps/nvidia-cap2": (510, 2),
}


def make_nodes(
    dev: Path, nodes: dict[str, tuple[int, int]], shim: Path, *, files: bool = False
) -> dict[str, str]:
    """Create ``nodes`` under ``dev`` (``files``: regular files even where ``mknod`` works);
    returns the env (``PATH``) the script must run with."""
    fake: dict[str, tuple[int, int]] = {}
    for name, (major, minor) in nodes.items():
        path = dev / name
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if files:
                raise PermissionError
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        except PermissionError:
            path.write_text("")
            fake[str(path)] = (major, minor)
    env = dict(os.environ)
    if fake:
        shim.mkdir(parents=True, exist_ok=True)
        cases = "".join(f'  "{p}") echo "{ma:x} {mi:x}" ;;\n' for p, (ma, mi) in fake.items())
        (shim / "stat").write_text(
            f'#!/bin/sh\nfor last; do :; done\ncase "$last" in\n{cases}'
            '  *) exec /usr/bin/stat "$@" ;;\nesac\n'
        )
        (shim / "stat").chmod(0o755)
        env["PATH"] = f"{shim}:{env['PATH']}"
    return env
