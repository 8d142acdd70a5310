"""The options ``gpustack validate --state/--kubectl`` adds to the command; the action
(:mod:`gpustack.actions.validate`) reads the state and checks the profile against it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


def state_options(f: Any) -> Any:
    """``--state FILE``, ``--kubectl`` and ``--context`` for ``validate``."""
    f = click.option("--context", "kube_context", help="kubectl context (with --kubectl).")(f)
    f = click.option("--kubectl", "use_kubectl", is_flag=True, help="As --state, read by kubectl.")(
        f
    )
    return click.option(
        "--state",
        "state_path",
        type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
        help="Also check the profile against its nodes: output of `kubectl get"
        " nodes,pods,daemonsets,events -A -o json` (- for stdin), or an AICR snapshot.",
    )(f)
