"""What ``gpustack validate --state/--kubectl`` adds to the command, kept out of
:mod:`gpustack.cli.validate` so the command module only wires it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from gpustack.checker import CheckResult


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


def against_nodes(
    result: CheckResult,
    state_path: Path | None = None,
    use_kubectl: bool = False,
    kube_context: str | None = None,
) -> CheckResult:
    """``result`` checked against the node state (unchanged when none is given); a usage error
    unless exactly one profile was checked and one source given (a state is one cluster's)."""
    if state_path is None and not use_kubectl:
        return result
    # imported here: every command imports this module for validate's options
    from gpustack.nodestate.source import SourceError, from_kubectl, read
    from gpustack.nodestate.validate import check_against

    if state_path is not None and use_kubectl:
        raise click.UsageError("give one of --state FILE or --kubectl, not both")
    if result.files_checked != 1:
        raise click.UsageError(
            f"--state/--kubectl check one profile against its cluster; {result.files_checked}"
            " were given (name the cluster's profile file)"
        )
    try:
        if use_kubectl:
            cluster = from_kubectl(kube_context)
        else:
            assert state_path is not None
            shown = "<stdin>" if str(state_path) == "-" else str(state_path)
            cluster = read(state_path, shown)
    except SourceError as exc:
        raise click.ClickException(str(exc)) from None
    return check_against(result, cluster)
