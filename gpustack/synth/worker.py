"""A synthesis worker process: starts cdk8s (and its Node child) once, synthesizes many clusters.

Started by :mod:`gpustack.synth.parallel` as ``python -m gpustack.synth.worker``. Reads one
pickled list of ``(number, profile path, Profile)`` jobs from stdin, and writes one pickled
``(number, "ok", ClusterOutput)`` or ``(number, "error", message)`` per job to stdout, in order,
flushed as each is done (the parent counts them for its progress line). Anything else that goes
wrong is a bug: the traceback goes to stderr and the exit status is not 0.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any, BinaryIO

from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError


def synthesize_one(path: Path, profile: Profile) -> Any:
    """Objects → laid-out files of one profile; :class:`SynthError` names the profile."""
    from gpustack.synth.layout import layout_cluster

    return layout_cluster(profile.metadata.name, objects_of(path, profile))


def objects_of(path: Path, profile: Profile) -> Any:
    """The profile's Kubernetes objects, rendered by cdk8s (the only step that talks to jsii:
    the warm renderer runs it alone under its render lock); :class:`SynthError` names the
    profile."""
    try:  # the first import starts Node: jsii reports its failures as RuntimeError or OSError
        from gpustack.constructs import synthesize
    except (RuntimeError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SynthError(
            f"cdk8s' runtime (jsii, on Node.js) could not start: {first[:300]}; see that its "
            "temporary folder (TMPDIR) is writable and has room"
        ) from None

    try:
        return synthesize(profile)
    except ValueError as exc:
        # Props reject a combination validation let through: still the user's input, so one
        # line naming the profile, not a traceback.
        raise SynthError(f"{path}: {exc}") from exc


def serve(jobs_in: BinaryIO, results_out: BinaryIO) -> None:
    jobs: list[tuple[int, str, Profile]] = pickle.load(jobs_in)
    for number, path, profile in jobs:
        try:
            result: tuple[int, str, Any] = (number, "ok", synthesize_one(Path(path), profile))
        except SynthError as exc:
            result = (number, "error", str(exc))
        pickle.dump(result, results_out, protocol=pickle.HIGHEST_PROTOCOL)
        results_out.flush()


def main() -> None:
    from gpustack.synth.node import prepare_node

    prepare_node()
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
