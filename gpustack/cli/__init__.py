"""The ``gpustack`` command line: wiring only, one module per command.

Each command turns options into an action's options (:mod:`gpustack.actions`, or a library call
where the work is one call) and its outcome into output and exit codes. User errors exit 1
(``click.ClickException``), usage errors exit 2 (an action's refusals are mapped by
:func:`gpustack.cli.common.refusals`), and expected failures never print a traceback. Heavy modules
(cdk8s, Node) are imported inside the commands that synthesize only, so that ``validate`` stays fast
and Node-free.
"""

from __future__ import annotations

# The commands register themselves on ``main`` (:mod:`gpustack.cli.group`) when imported.
from gpustack.cli import (
    accept,
    completion,
    doctor,
    explain,
    images,
    init,
    lint,
    plan,
    synth,
    template,
    validate,
)
from gpustack.cli.group import main

__all__ = [
    "accept",
    "completion",
    "doctor",
    "explain",
    "images",
    "init",
    "lint",
    "main",
    "plan",
    "synth",
    "template",
    "validate",
]
