"""Make sure Node.js is present, and quiet, before anything imports cdk8s.

cdk8s is a JavaScript library; its Python binding (jsii) starts a ``node`` child process on
import. Without Node that fails with a long traceback, and with an end-of-life Node every start
prints an 11-line banner to stderr that users can do nothing about in the middle of a synth. So
the CLI calls :func:`prepare_node` first: it finds the binary jsii will use (``JSII_NODE`` or
``node`` on ``PATH``), reports a missing one in one line, and sets jsii's documented opt-outs
for the current Node version's support warnings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import MutableMapping

from gpustack.synth.errors import SynthError

#: jsii's opt-out variables: the end-of-life one must list the running Node's major version.
EOL_VAR = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
_ON_OFF_VARS = (
    "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION",
    "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION",
)

#: The oldest Node the cdk8s and cdk8s-plus JavaScript packages declare support for
#: (``engines.node: ">= 16.20.0"``); older ones fail inside jsii with a Python traceback.
MIN_NODE = (16, 20, 0)

INSTALL_HINT = (
    "install Node.js 20 or newer (e.g. `apt-get install nodejs`, or from https://nodejs.org), "
    "or point JSII_NODE at a node binary"
)


def find_node(env: MutableMapping[str, str]) -> str:
    """The node binary jsii will start, as an absolute path; :class:`SynthError` if none."""
    wanted = env.get("JSII_NODE") or "node"
    found = shutil.which(wanted, path=env.get("PATH"))
    if found is None:
        source = "JSII_NODE" if env.get("JSII_NODE") else "PATH"
        raise SynthError(
            f"gpustack synth needs Node.js (cdk8s runs on it) but {wanted!r} was not found "
            f"on {source}; {INSTALL_HINT}"
        )
    return found


def node_major(node: str) -> str:
    """The major version of ``node`` (e.g. ``"20"``); :class:`SynthError` if it doesn't run
    or is older than :data:`MIN_NODE`."""
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SynthError(f"{node} --version failed ({exc}); {INSTALL_HINT}") from exc
    printed = done.stdout.strip()
    parts = printed.lstrip("v").split("-", 1)[0].split(".")
    if not parts[0].isdigit():
        raise SynthError(f"{node} --version printed {printed!r}; {INSTALL_HINT}")
    version = tuple(int(p) if p.isdigit() else 0 for p in (parts + ["0", "0"])[:3])
    if version < MIN_NODE:
        minimum = ".".join(map(str, MIN_NODE))
        raise SynthError(
            f"{node} is Node.js {printed}, too old for cdk8s (needs {minimum} or newer); "
            f"{INSTALL_HINT}"
        )
    return parts[0]


def prepare_node(env: MutableMapping[str, str] | None = None) -> str:
    """Check Node and silence jsii's version banners in ``env`` (default ``os.environ``).

    Must run before the first ``import cdk8s``; returns the node binary found.
    """
    target: MutableMapping[str, str] = os.environ if env is None else env
    node = find_node(target)
    major = node_major(node)
    listed = [v.strip() for v in target.get(EOL_VAR, "").split(",") if v.strip()]
    if major not in listed:
        target[EOL_VAR] = ",".join([*listed, major])
    for var in _ON_OFF_VARS:
        target.setdefault(var, "1")
    return node
