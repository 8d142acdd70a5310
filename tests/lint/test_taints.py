"""``gpu-node-toleration`` reads the nodes' taints (``cluster.nodeTaints``), not the stack's
tolerations, and knows the ExtendedResourceToleration admission plugin.

The most common correct GPU Job (``limits: {nvidia.com/gpu: 1}``, no tolerations) must lint clean
against every example profile whose nodes advertise ``nvidia.com/gpu``: once, lint took the
stack's default tolerations for taints and refused it everywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.lint.check import lint
from gpustack.lint.context import LintContext, from_profile
from gpustack.profile.model import Profile

REPO = Path(__file__).parents[2]

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: one-gpu
spec:
  template:
    spec:
      restartPolicy: Never
{tolerations}      containers:
        - name: cuda
          image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
          command: [nvidia-smi]
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""


def job(tmp_path: Path, tolerations: str = "") -> str:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(tolerations=tolerations), encoding="utf-8")
    return str(path)


def advertises_whole_gpus(path: Path) -> bool:
    """Some node of the profile has a whole ``nvidia.com/gpu`` to give (a MIG layout under
    migStrategy mixed splits every GPU: a100-mig-mixed has none), or another plugin runs."""
    result = check_paths([path])
    ctx = from_profile(result.profiles[0].profile, str(path))
    if not ctx.pools or not any(p.capacity for p in ctx.pools):
        return "nvidia.com/gpu" in ctx.known
    return any(p.has("nvidia.com/gpu") for p in ctx.pools)


EXAMPLES = [p for p in sorted((REPO / "profiles").glob("*.yaml")) if advertises_whole_gpus(p)]


def test_most_examples_advertise_whole_gpus() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("profile", EXAMPLES, ids=lambda p: p.stem)
def test_the_plain_one_gpu_job_lints_clean(tmp_path: Path, profile: Path) -> None:
    result = check_paths([profile])
    ctx = from_profile(result.profiles[0].profile, str(profile))
    found = lint([job(tmp_path)], ctx)
    assert found.ok, [str(i) for i in found.issues]


GKE_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def context(cluster: dict[str, object]) -> LintContext:
    profile = Profile.from_dict({"metadata": {"name": "p"}, "cluster": cluster})
    return from_profile(profile, "p.yaml")


#: (cluster section, pod tolerations, findings of gpu-node-toleration)
CASES = {
    "untainted nodes ask for nothing": ({}, "", 0),
    "a taint the pod does not tolerate": ({"nodeTaints": [GKE_TAINT]}, "", 1),
    "Exists tolerates any value": (
        {"nodeTaints": [GKE_TAINT]},
        "      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n",
        0,
    ),
    "Equal compares the value": (
        {"nodeTaints": [GKE_TAINT]},
        "      tolerations: [{key: nvidia.com/gpu, value: absent}]\n",
        1,
    ),
    "the admission plugin tolerates a taint keyed by the requested resource": (
        {"nodeTaints": [GKE_TAINT], "extendedResourceToleration": True},
        "",
        0,
    ),
    "the admission plugin adds NoSchedule only, never NoExecute": (
        {
            "nodeTaints": [{"key": "nvidia.com/gpu", "effect": "NoExecute"}],
            "extendedResourceToleration": True,
        },
        "",
        1,
    ),
    "the admission plugin knows nothing of other keys": (
        {
            "nodeTaints": [GKE_TAINT, {"key": "dedicated", "value": "ml"}],
            "extendedResourceToleration": True,
            "tolerations": [{"operator": "Exists"}],
        },
        "",
        1,
    ),
    "a soft taint asks for nothing": (
        {"nodeTaints": [{"key": "spot", "effect": "PreferNoSchedule"}]},
        "",
        0,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_taints_and_the_admission_plugin(tmp_path: Path, case: str) -> None:
    cluster, tolerations, findings = CASES[case]
    result = lint([job(tmp_path, tolerations)], context(cluster))
    assert [i.rule for i in result.issues] == ["gpu-node-toleration"] * findings
