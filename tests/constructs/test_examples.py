"""Example PyTorch Jobs: resources, runtime class, GitOps annotations; the training examples'
objects, and their scripts run for real on the CPU (gloo)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.scripts import ALL_REDUCE_WORKER, EXAMPLE_CHECK
from gpustack.constructs.training import SCRIPT_DIR, SCRIPT_NAME, render_script

from .conftest import Synth, container, env, find, kinds, mounts, pod_spec, profile, volumes

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
    """PyTorch (a CPU build) in the test interpreter; `make test` installs it (Makefile)."""
    found = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    if found.returncode != 0:
        message = "torch is not installed (`make test` installs torch==2.13.0, a CPU build)"
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


@pytest.mark.parametrize("kind", ["check", "train", "ddp", "multinode-ddp"])
@pytest.mark.parametrize("gpus", [1, 2, 8])
def test_every_job_gets_a_memory_backed_dev_shm(synth: Synth, gpus: int, kind: str) -> None:
    """DataLoader workers need it with one GPU too, NCCL between GPUs (gpustack lint: dev-shm)."""
    j = job(
        synth,
        workloads={"examples": [{"name": "smoke", "gpus": gpus, "kind": kind}]},
        gpus={"perNode": 8},
    )
    volumes = {v["name"]: v for v in pod_spec(j).get("volumes", [])}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"}
    name = "gpu-check" if kind == "check" else "train"
    assert mounts(container(j, name))["/dev/shm"]["name"] == "dshm"


# --- the training examples ---------------------------------------------------------------------


def training(synth: Synth, kind: str, **example: Any) -> list[dict[str, Any]]:
    w = {"examples": [{"name": "trainer", "kind": kind, **example}]}
    objects = synth(profile(workloads=w, gpus={"perNode": 8}))
    return [o.manifest for o in objects if o.component == "examples"]


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, [o["kind"] for o in objects]
    return found[0]


@pytest.mark.parametrize(
    ("kind", "gpus", "command"),
    [
        ("train", 1, ["python", "/opt/gpustack-example/train.py"]),
        (
            "ddp",
            4,
            ["torchrun", "--standalone", "--nproc-per-node=4", "/opt/gpustack-example/train.py"],
        ),
    ],
)
def test_training_job_runs_its_script_from_a_config_map(
    synth: Synth, kind: str, gpus: int, command: list[str]
) -> None:
    objects = training(synth, kind, gpus=gpus)
    assert [o["kind"] for o in objects] == ["ServiceAccount", "ConfigMap", "Job"]
    cm, j = _one(objects, "ConfigMap"), _one(objects, "Job")
    assert cm["metadata"]["name"] == "trainer-script"
    assert cm["data"] == {"train.py": render_script(kind)}
    c = container(j, "train")
    assert c["command"] == command
    assert c["resources"]["limits"] == {"nvidia.com/gpu": gpus}
    assert mounts(c)["/opt/gpustack-example"] == {
        "mountPath": "/opt/gpustack-example",
        "name": "script",
        "readOnly": True,
    }
    assert volumes(j)["script"]["configMap"] == {"name": "trainer-script"}
    assert volumes(j)["checkpoints"] == {"name": "checkpoints", "emptyDir": {}}
    assert mounts(c)["/checkpoints"]["name"] == "checkpoints"
    # restarted in place, the container finds its checkpoint in the emptyDir
    assert pod_spec(j)["restartPolicy"] == "OnFailure"
    assert "completionMode" not in j["spec"]


def test_multinode_job_is_indexed_with_a_headless_service(synth: Synth) -> None:
    objects = training(synth, "multinode-ddp", gpus=8, nodes=3)
    kinds_ = [o["kind"] for o in objects]
    assert kinds_ == ["ServiceAccount", "ConfigMap", "Service", "NetworkPolicy", "Job"]
    j, svc, policy = _one(objects, "Job"), _one(objects, "Service"), _one(objects, "NetworkPolicy")
    assert j["spec"]["completionMode"] == "Indexed"
    assert j["spec"]["completions"] == j["spec"]["parallelism"] == 3
    spec = pod_spec(j)
    assert spec["subdomain"] == svc["metadata"]["name"] == "trainer"
    assert spec["restartPolicy"] == "Never"
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"].items() <= j["spec"]["template"]["metadata"]["labels"].items()
    c = container(j, "train")
    assert env(c) == {
        "NODE_RANK": {
            "fieldRef": {
                "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
            }
        },
        "MASTER_ADDR": "trainer-0.trainer.gpustack-system.svc",
        "MASTER_PORT": "29500",
    }
    assert c["command"] == [
        "torchrun",
        "--nnodes=3",
        "--nproc-per-node=8",
        "--node-rank=$(NODE_RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
        "/opt/gpustack-example/train.py",
    ]
    peers = policy["spec"]["podSelector"]
    assert peers["matchLabels"] == svc["spec"]["selector"]
    assert policy["spec"]["ingress"] == [{"from": [{"podSelector": peers}]}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_run_here(command: list[str], script: Path, values: dict[str, str]) -> list[str]:
    """The Job's command as this machine runs it: the script where the test wrote it,
    ``$(VAR)`` expanded as the kubelet does, torchrun and python from this interpreter."""
    out = []
    for word in command:
        for name, value in values.items():
            word = word.replace(f"$({name})", value)
        out.append(word.replace(f"{SCRIPT_DIR}/{SCRIPT_NAME}", str(script)))
    head = {"torchrun": [sys.executable, "-m", "torch.distributed.run"], "python": [sys.executable]}
    return head[out[0]] + out[1:]


def _cpu_env(checkpoints: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GPUSTACK_ALLOW_CPU": "true",
        "CHECKPOINT_DIR": str(checkpoints),
        "GLOO_SOCKET_IFNAME": "lo",
        "OMP_NUM_THREADS": "1",
    }


def test_train_runs_on_the_cpu_and_resumes(real_torch: None, synth: Synth, tmp_path: Path) -> None:
    objects = training(synth, "train")
    script = tmp_path / "train.py"
    script.write_text(_one(objects, "ConfigMap")["data"]["train.py"])
    run = _as_run_here(container(_one(objects, "Job"), "train")["command"], script, {})
    cpu = _cpu_env(tmp_path / "ckpt")
    first = subprocess.run(run, env=cpu, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "trained 30 steps on 1 CPU process(es)" in first.stdout
    assert (tmp_path / "ckpt" / "model.pt").is_file()
    again = subprocess.run(run, env=cpu, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resumed from" in again.stdout and "at step 30" in again.stdout
    # on a cluster, a CPU run would hide a broken stack
    del cpu["GPUSTACK_ALLOW_CPU"]
    refused = subprocess.run(run, env=cpu, capture_output=True, text=True, timeout=180)
    assert refused.returncode == 1
    assert "CUDA is not available" in refused.stderr


def test_ddp_runs_two_processes_on_the_cpu(real_torch: None, synth: Synth, tmp_path: Path) -> None:
    objects = training(synth, "ddp", gpus=2)
    script = tmp_path / "train.py"
    script.write_text(_one(objects, "ConfigMap")["data"]["train.py"])
    run = _as_run_here(container(_one(objects, "Job"), "train")["command"], script, {})
    env_ = _cpu_env(tmp_path / "ckpt")
    done = subprocess.run(run, env=env_, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trained 30 steps on 2 CPU process(es)" in done.stdout
    assert "ranks agree gloo 2" in done.stdout


def test_multinode_ddp_runs_as_two_nodes_on_loopback(
    real_torch: None, synth: Synth, tmp_path: Path
) -> None:
    """Two torchrun "nodes" (one process group each, as two pods would be), rank 0 reached as
    the Job's MASTER_ADDR would be, here on loopback."""
    objects = training(synth, "multinode-ddp", nodes=2, gpus=1)
    script = tmp_path / "train.py"
    script.write_text(_one(objects, "ConfigMap")["data"]["train.py"])
    command = container(_one(objects, "Job"), "train")["command"]
    port = str(_free_port())
    procs = []
    for rank in ("0", "1"):
        values = {"NODE_RANK": rank, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
        run = _as_run_here(command, script, values)
        env_ = _cpu_env(tmp_path / f"ckpt-{rank}")
        procs.append(
            subprocess.Popen(run, env=env_, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        )
    outputs = [p.communicate(timeout=300)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert "ranks agree gloo 2" in outputs[0]
    assert "trained 30 steps on 2 CPU process(es)" in outputs[0]
    assert (tmp_path / "ckpt-0" / "model.pt").is_file()
    assert not (tmp_path / "ckpt-1").exists()  # only rank 0 writes the checkpoint
