"""What Argo CD's plugin ``generate`` prints: one Application's manifests, or its one-line error.

``gpustack template --argocd`` runs it in a fresh process, and the plugin's warm renderer
(:mod:`gpustack.renderer`) runs the very same function in its long-lived one, so both answer
byte for byte alike: the manifests on stdout, or the line after ``Error:`` and exit 1. It reads
the process's working directory (Argo CD runs ``generate`` in the Application's source path) and
the environment it is given, never ``os.environ`` itself, so the renderer can pass each caller's.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpustack.actions.synth import render_one
from gpustack.gitops.argocd_plugin import (
    SOURCE_PATH_ENV,
    ParameterError,
    check_inside,
    profile_parameter,
)
from gpustack.report import render_text
from gpustack.synth.errors import SynthError
from gpustack.synth.stream import yaml_stream


@dataclass(frozen=True)
class Generated:
    """The manifests (``stdout``), or ``error``: the one line Argo CD shows on the Application.
    ``files``: what a successful render read (the profile, then its bases), as the loader named
    them relative to the working directory; ``profile``: the parameter's file, normalized."""

    stdout: bytes = b""
    error: str | None = None
    files: tuple[Path, ...] = ()
    profile: str = ""


def generate(env: Mapping[str, str]) -> Generated:
    """Render the profile the Application's parameters in ``env`` name, relative to the
    working directory; every failure is a :class:`Generated` with ``error`` set."""
    try:
        name = profile_parameter(env)
        check_inside(name)
    except ParameterError as exc:
        where = f"source path {source_path(env)!r};"
        return Generated(error=str(exc).replace("source path;", where, 1))
    try:
        rendered = render_one(Path(name))
    except SynthError as exc:
        return Generated(error=str(exc), profile=name)
    if rendered.refused is not None:
        return Generated(error=one_line(render_text(rendered.refused), source_path(env)))
    assert rendered.cluster is not None
    return Generated(yaml_stream(rendered.cluster.output), files=rendered.files, profile=name)


def source_path(env: Mapping[str, str]) -> str:
    """The Application's source path in the repository (Argo CD runs the command there)."""
    return env.get(SOURCE_PATH_ENV) or "."


def one_line(report: str, source_path: str) -> str:
    """validate's report (one line per finding, then a summary) as one line: the first
    finding, its file named from the repository root, and how many more there are."""
    lines = report.rstrip("\n").split("\n")
    findings, summary = lines[:-1], lines[-1]
    if not findings:
        return summary
    file, colon, rest = findings[0].partition(":")
    if colon and not file.startswith("/"):
        file = posixpath.normpath(posixpath.join(source_path, file))
    more = f" ({summary}; `gpustack validate` lists them)" if len(findings) > 1 else ""
    return f"{file}{colon}{rest}{more}"
