"""Example PyTorch Jobs: resources, runtime class, GitOps annotations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.scripts import ALL_REDUCE_WORKER, EXAMPLE_CHECK

from .conftest import Synth, container, env, find, kinds, mounts, pod_spec, profile

ONE = {"examples": [{"name": "smoke"}]}


def job(synth: Synth, name: str = "smoke", **sections: Any) -> dict[str, Any]:
    sections.setdefault("workloads", ONE)
    return find(synth(profile(**sections)), "Job", name)


def limits(j: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = container(j, "gpu-check")["resources"]["limits"]
    return value


def test_no_examples_no_objects(synth: Synth) -> None:
    assert kinds(synth(profile()), "examples") == []


def test_one_job_per_example_and_one_service_account(synth: Synth) -> None:
    w = {"examples": [{"name": "a"}, {"name": "b", "gpus": 2}]}
    assert kinds(synth(profile(workloads=w)), "examples") == [
        ("ServiceAccount", "gpustack-example"),
        ("Job", "a"),
        ("Job", "b"),
    ]


def test_default_check_is_a_pytorch_cuda_matmul(synth: Synth) -> None:
    c = container(job(synth), "gpu-check")
    assert c["command"] == ["python", "-c", EXAMPLE_CHECK]
    assert c["image"].startswith("docker.io/pytorch/pytorch:")
    for needle in ("torch.cuda.is_available()", "get_device_name", "@", "cuda:"):
        assert needle in EXAMPLE_CHECK
    compile(EXAMPLE_CHECK, "check", "exec")


def test_custom_command(synth: Synth) -> None:
    w = {"examples": [{"name": "smoke", "command": ["nvidia-smi"]}]}
    assert container(job(synth, workloads=w), "gpu-check")["command"] == ["nvidia-smi"]


@pytest.mark.parametrize(
    ("sections", "example", "expected"),
    [
        ({}, {"gpus": 2}, {"nvidia.com/gpu": 2}),
        ({}, {"resourceName": "nvidia.com/mig-1g.10gb"}, {"nvidia.com/mig-1g.10gb": 1}),
        ({"devicePlugin": {"resourceName": "example.com/gpu"}}, {}, {"example.com/gpu": 1}),
        (
            {
                "devicePlugin": {
                    "sharing": {
                        "timeSlicing": {
                            "renameByDefault": True,
                            "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                        }
                    }
                }
            },
            {},
            {"nvidia.com/gpu.shared": 1},
        ),
        (
            {
                "devicePlugin": {
                    "sharing": {
                        "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
                    }
                }
            },
            {},
            {"nvidia.com/gpu": 1},
        ),
        (
            {
                "devicePlugin": {
                    "sharing": {
                        "timeSlicing": {
                            "renameByDefault": True,
                            "resources": [
                                {
                                    "name": "nvidia.com/gpu",
                                    "replicas": 4,
                                    "rename": "nvidia.com/gpu-small",
                                }
                            ],
                        }
                    }
                }
            },
            {},
            {"nvidia.com/gpu-small": 1},
        ),
    ],
    ids=[
        "count",
        "explicit",
        "plugin-name",
        "shared-renamed",
        "shared-not-renamed",
        "shared-custom-name",
    ],
)
def test_requested_resource(
    synth: Synth, sections: dict[str, Any], example: dict[str, Any], expected: dict[str, int]
) -> None:
    w = {"examples": [{"name": "smoke", **example}]}
    assert limits(job(synth, workloads=w, **sections)) == expected


@pytest.mark.parametrize(
    ("sections", "runtime_class"),
    [
        ({}, "nvidia"),
        ({"toolkit": {"cdi": {"enabled": False}}}, "nvidia"),
        ({"devicePlugin": {"deviceListStrategy": ["cdi-cri"]}}, None),
        ({"devicePlugin": {"deviceListStrategy": ["cdi-annotations", "envvar"]}}, "nvidia"),
        ({"devicePlugin": {"backend": "simulated"}, "driver": {"enabled": False}}, None),
        ({"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}}, None),
    ],
    ids=["cdi-envvar", "no-cdi", "cdi-only", "mixed", "simulated", "crio-hook"],
)
def test_runtime_class(synth: Synth, sections: dict[str, Any], runtime_class: str | None) -> None:
    assert pod_spec(job(synth, **sections)).get("runtimeClassName") == runtime_class


def test_simulated_check_is_told(synth: Synth) -> None:
    simulated: dict[str, Any] = {
        "devicePlugin": {"backend": "simulated"},
        "driver": {"enabled": False},
    }
    assert env(container(job(synth, **simulated), "gpu-check")) == {"GPUSTACK_SIMULATED": "true"}
    assert "env" not in container(job(synth), "gpu-check")


def test_gitops_friendly_job(synth: Synth) -> None:
    j = job(synth)
    annotations = j["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/sync-options"] == "Replace=true"
    assert annotations["kustomize.toolkit.fluxcd.io/force"] == "enabled"
    assert "ttlSecondsAfterFinished" not in j["spec"]
    assert 0 <= j["spec"]["backoffLimit"] <= 3
    spec = pod_spec(j)
    assert spec["restartPolicy"] == "Never"
    assert spec["serviceAccountName"] == "gpustack-example"
    assert spec["automountServiceAccountToken"] is False


def test_placement_without_node_critical_priority(synth: Synth) -> None:
    cluster = {
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoExecute"}],
        "imagePullSecrets": ["regcred"],
        "namespace": "ml",
    }
    j = job(synth, cluster=cluster)
    spec = pod_spec(j)
    assert j["metadata"]["namespace"] == "ml"
    assert spec["nodeSelector"] == {"pool": "gpu"}
    assert spec["tolerations"] == [
        {"effect": "NoExecute", "key": "gpu", "operator": "Equal", "value": "yes"}
    ]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert "priorityClassName" not in spec


def test_version_label_is_the_image_tag(synth: Synth) -> None:
    w = {"examples": [{"name": "smoke", "image": "nvcr.io/nvidia/pytorch:24.05-py3"}]}
    assert job(synth, workloads=w)["metadata"]["labels"]["app.kubernetes.io/version"] == "24.05-py3"


# --- the check itself, where CUDA is genuinely absent ------------------------------------------

FAKE_TORCH = """\
__version__ = "0.0-test"


class version:
    cuda = None


class cuda:
    @staticmethod
    def is_available():
        return False
"""


#: (environment of the check, exit code): only a simulated stack with allocated devices passes,
#: whether the plugin handed them out as NVIDIA_VISIBLE_DEVICES or as simulated CDI devices.
NO_CUDA_CASES: list[tuple[str, dict[str, str], int]] = [
    ("simulated-envvar", {"GPUSTACK_SIMULATED": "true", "NVIDIA_VISIBLE_DEVICES": "GPU-1234"}, 0),
    (
        "simulated-cdi",
        {
            "GPUSTACK_SIMULATED": "true",
            "NVIDIA_VISIBLE_DEVICES": "void",
            "GPUSTACK_SIMULATED_DEVICE_0": "GPU-1234",
        },
        0,
    ),
    ("simulated-all", {"GPUSTACK_SIMULATED": "true", "NVIDIA_VISIBLE_DEVICES": "all"}, 1),
    ("simulated-void", {"GPUSTACK_SIMULATED": "true", "NVIDIA_VISIBLE_DEVICES": "void"}, 1),
    ("simulated-nothing", {"GPUSTACK_SIMULATED": "true"}, 1),
    ("real-backend", {"NVIDIA_VISIBLE_DEVICES": "GPU-1234"}, 1),
]


def _run_check(
    environ: dict[str, str], pythonpath: Path | None
) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NVIDIA_VISIBLE_DEVICES", "PYTHONPATH")
        and not k.startswith("GPUSTACK_SIMULATED")
    }
    if pythonpath is not None:
        base["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, "-c", EXAMPLE_CHECK],
        env={**base, **environ},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("environ", "code"), [c[1:] for c in NO_CUDA_CASES], ids=[c[0] for c in NO_CUDA_CASES]
)
def test_check_without_cuda(tmp_path: Path, environ: dict[str, str], code: int) -> None:
    """A stand-in torch without CUDA, so the decision logic runs everywhere."""
    (tmp_path / "torch.py").write_text(FAKE_TORCH)
    result = _run_check(environ, tmp_path)
    assert result.returncode == code, result.stdout + result.stderr
    assert "available False" in result.stdout


@pytest.fixture(scope="module")
def real_torch() -> None:
    """PyTorch (a CPU build) in the test interpreter; CI installs it (.ci/run)."""
    found = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    if found.returncode != 0:
        message = "torch is not installed (CI installs torch==2.13.0, a CPU build, in .ci/run)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.mark.parametrize(
    ("environ", "code"), [c[1:] for c in NO_CUDA_CASES], ids=[c[0] for c in NO_CUDA_CASES]
)
def test_check_with_real_torch_on_cpu(real_torch: None, environ: dict[str, str], code: int) -> None:
    """The example check against real PyTorch on a machine without CUDA: the APIs it calls
    exist, it reports what it found, and it decides as with the stand-in."""
    result = _run_check(environ, None)
    assert result.returncode == code, result.stdout + result.stderr
    first = result.stdout.splitlines()[0].split()
    assert first[0] == "torch" and first[1][0].isdigit(), result.stdout
    assert first[-2:] == ["available", "False"], result.stdout
    if code == 1 and "GPUSTACK_SIMULATED" not in environ:
        assert "CUDA is not available" in result.stderr


@pytest.mark.parametrize("ranks", [3])
def test_all_reduce_worker_under_torchrun_on_cpu(
    real_torch: None, tmp_path: Path, ranks: int
) -> None:
    """The multi-GPU step of the check, as the check runs it (torchrun, loopback), on the CPU:
    the worker falls back to gloo without CUDA, so every rank's share is verified for real."""
    assert f"WORKER = '''\\\n{ALL_REDUCE_WORKER}'''" in EXAMPLE_CHECK  # what the Job runs
    worker = tmp_path / "worker.py"
    worker.write_text(ALL_REDUCE_WORKER)
    env = {**os.environ, "NCCL_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "lo"}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         f"--nproc_per_node={ranks}", str(worker)],
        env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"all_reduce gloo {ranks} ok" in result.stdout


@pytest.mark.parametrize(("gpus", "shm"), [(1, False), (2, True), (8, True)])
def test_multi_gpu_jobs_get_a_memory_backed_dev_shm(synth: Synth, gpus: int, shm: bool) -> None:
    j = job(
        synth,
        workloads={"examples": [{"name": "smoke", "gpus": gpus}]},
        gpus={"perNode": 8},
    )
    volumes = {v["name"]: v for v in pod_spec(j).get("volumes", [])}
    assert ("dshm" in volumes) is shm
    if shm:
        assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"}
        assert mounts(container(j, "gpu-check"))["/dev/shm"]["name"] == "dshm"
