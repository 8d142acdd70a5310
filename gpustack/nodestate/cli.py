"""What ``gpustack validate --state/--kubectl`` adds to the command, kept out of
:mod:`gpustack.cli.validate` so the command module only wires it."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.checker import CheckResult
from gpustack.nodestate.source import SourceError, from_kubectl, parse
from gpustack.nodestate.validate import check_against


def against_nodes(
    result: CheckResult, state_path: Path | None, use_kubectl: bool, context: str | None
) -> CheckResult:
    """``result`` checked against the node state; a usage error unless exactly one profile
    was checked and exactly one source given (a state is one cluster's)."""
    if state_path is not None and use_kubectl:
        raise click.UsageError("give one of --state FILE or --kubectl, not both")
    if result.files_checked != 1:
        raise click.UsageError(
            f"--state/--kubectl check one profile against its cluster; {result.files_checked}"
            " were given (name the cluster's profile file)"
        )
    try:
        if use_kubectl:
            cluster = from_kubectl(context)
        else:
            assert state_path is not None
            with click.open_file(str(state_path), encoding="utf-8") as f:
                text = f.read()
            cluster = parse(text, str(state_path))
    except (SourceError, OSError, UnicodeDecodeError) as exc:
        raise click.ClickException(str(exc)) from None
    return check_against(result, cluster)
