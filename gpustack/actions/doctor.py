"""Diagnosis as an action: :class:`DoctorOptions` in, :func:`run`, :class:`DoctorOutcome` out.

What ``gpustack doctor`` does, without click: load the cluster's profile, read its state (a
recorded file, standard input, or kubectl, read-only) and diagnose it
(:func:`gpustack.doctor.report.diagnose`). The findings are the outcome; the CLI renders them
(:func:`gpustack.report.render_doctor`). An invalid profile is the outcome's ``refused``; a
state that cannot be read, or no source (or two), a refusal (:mod:`gpustack.actions.errors`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack.actions.errors import BadOptions, Refused
from gpustack.actions.profile import load_one

if TYPE_CHECKING:
    from gpustack.checker import CheckResult
    from gpustack.doctor.finding import Diagnosis
    from gpustack.kube.state import ClusterState


@dataclass(frozen=True)
class DoctorOptions:
    """Which cluster to diagnose (``gpustack doctor``'s options).

    - ``profile``: the cluster's profile.
    - ``state``: its recorded state (``-``: standard input), or ``kubectl`` to read it with
      kubectl (``context``: its context); exactly one of the two.
    """

    profile: Path
    state: Path | None = None
    kubectl: bool = False
    context: str | None = None


@dataclass(frozen=True)
class DoctorOutcome:
    """The diagnoses of the cluster (none: healthy), and the state they were read from; or,
    with ``refused``, the validation result of a profile that is not valid (nothing read)."""

    options: DoctorOptions
    refused: CheckResult | None = None
    cluster: ClusterState | None = None
    findings: tuple[Diagnosis, ...] = ()

    @property
    def ok(self) -> bool:
        return self.refused is None and not self.findings


def run(options: DoctorOptions) -> DoctorOutcome:
    """Diagnose the cluster of ``options.profile`` from its state."""
    from gpustack.doctor.report import diagnose

    if (options.state is None) == (not options.kubectl):
        raise BadOptions("give one of --state FILE or --kubectl")
    loaded = load_one(options.profile)
    if loaded.profile is None:
        return DoctorOutcome(options, refused=loaded.result)
    cluster = read_state(options)
    found = tuple(diagnose(cluster, loaded.profile))
    return DoctorOutcome(options, cluster=cluster, findings=found)


def read_state(options: DoctorOptions) -> ClusterState:
    """The cluster's state, claims included (kubectl reads without them on a cluster before
    1.34); refused in one line when it cannot be read."""
    import sys

    from gpustack.kube import kubectl, state

    try:
        if options.kubectl:
            extra = ["--context", options.context] if options.context else []
            text, source = kubectl.fetch(extra=extra), "kubectl"
        else:
            assert options.state is not None
            stdin = str(options.state) == "-"
            source = "<stdin>" if stdin else str(options.state)
            text = state.read(sys.stdin.buffer if stdin else options.state, source)
        return state.load(text, source)
    except (kubectl.KubectlError, state.StateError) as exc:
        raise Refused(str(exc)) from None
