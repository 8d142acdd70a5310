"""What Argo CD's plugin ``generate`` prints: one Application's manifests, or its one-line error.

``gpustack template --argocd`` runs :func:`generate` in a fresh process, and the plugin's warm
renderer (:mod:`gpustack.renderer`) runs its very steps in its long-lived one, so both answer
byte for byte alike: the manifests on stdout, or the line after ``Error:`` and exit 1. Only the
first step, :func:`check`, reads the process's working directory (Argo CD runs ``generate`` in
the Application's source path); :func:`build` (cdk8s) and :func:`finish` (the files, as one
stream) work from what it read, so the renderer can run one caller's ``check`` while another's
render goes on. Each step reads the environment it is given, never ``os.environ`` itself, so the
renderer can pass each caller's.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.checker import check_paths
from gpustack.gitops.argocd_plugin import (
    SOURCE_PATH_ENV,
    ParameterError,
    check_inside,
    profile_parameter,
)
from gpustack.profile.model import Profile
from gpustack.report import render_text
from gpustack.synth.errors import SynthError
from gpustack.synth.header import source_name
from gpustack.synth.layout import layout_cluster
from gpustack.synth.node import prepare_node
from gpustack.synth.pipeline import labelled
from gpustack.synth.stream import yaml_stream
from gpustack.synth.worker import objects_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gpustack.constructs import SynthObject


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
    checked = check(env)
    if isinstance(checked, Generated):
        return checked
    built = build(checked)
    return built if isinstance(built, Generated) else finish(checked, built)


@dataclass(frozen=True)
class Checked:
    """A profile that passed validation: all that the rest of its render needs, read from the
    working directory, which :func:`build` and :func:`finish` do not read again (the warm
    renderer runs them for one caller while the next caller's :func:`check` has the
    directory)."""

    profile: Profile
    path: Path
    #: how the generated-file header names the profile (:func:`gpustack.synth.header.source_name`)
    source: str
    #: what was read: the profile, then each base it extends (the renderer's cache key)
    files: tuple[Path, ...]
    #: the ``profile`` parameter, as :class:`Generated` names it
    name: str


@dataclass(frozen=True)
class Built:
    """The objects cdk8s rendered for a :class:`Checked` profile."""

    objects: Sequence[SynthObject]


def check(env: Mapping[str, str]) -> Checked | Generated:
    """The step that reads the working directory: the parameters, the profile and its bases,
    validated as ``gpustack validate`` does."""
    try:
        name = profile_parameter(env)
        check_inside(name)
    except ParameterError as exc:
        where = f"source path {source_path(env)!r};"
        return Generated(error=str(exc).replace("source path;", where, 1))
    try:
        result = check_paths([Path(name)])
        if not result.ok or len(result.profiles) != 1:
            return Generated(error=one_line(render_text(result), source_path(env)))
        (loaded,) = result.profiles
        source = source_name(loaded.path)
    except SynthError as exc:  # as ``gpustack template`` reports it: one line
        return Generated(error=str(exc), profile=name)
    return Checked(loaded.profile, loaded.path, source, loaded.files, name)


def build(checked: Checked) -> Built | Generated:
    """The step that runs cdk8s (jsii's kernel takes one caller at a time)."""
    try:
        if "cdk8s" not in sys.modules:  # Node is checked before cdk8s first starts it
            prepare_node()
        return Built(objects_of(checked.path, checked.profile))
    except SynthError as exc:
        return Generated(error=str(exc), profile=checked.name)


def finish(checked: Checked, built: Built) -> Generated:
    """The step that lays the objects out as files and joins them into one stream."""
    try:
        output = layout_cluster(checked.profile.metadata.name, built.objects)
    except SynthError as exc:
        return Generated(error=str(exc), profile=checked.name)
    stream = yaml_stream(labelled(output, checked.source))
    return Generated(stream, files=checked.files, profile=checked.name)


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
