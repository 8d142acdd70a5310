"""Driver DaemonSet: shape per §1.3 of the GPU stack reference, and its readiness script."""

from __future__ import annotations

import os
import posixpath
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.driver import DriverProps
from gpustack.constructs.driver_nodes import KERNEL_LABEL
from gpustack.constructs.scripts import DRIVER_STARTUP_PROBE
from gpustack.profile.model import Profile

from .conftest import (
    Synth,
    container,
    env,
    find,
    host_paths,
    kinds,
    mounts,
    pod_spec,
    profile,
    volumes,
)

DS = "nvidia-driver-daemonset"
CTR = "nvidia-driver-ctr"
PEERMEM = "nvidia-peermem-ctr"
MELLANOX = ("/run/mellanox/drivers", "/run/mellanox/drivers/usr/src")


def driver_ds(synth: Synth, **sections: Any) -> dict[str, Any]:
    return find(synth(profile(**sections)), "DaemonSet", DS)


def test_omitted_when_driver_is_preinstalled(synth: Synth) -> None:
    objects = synth(profile(driver={"enabled": False}))
    assert kinds(objects, "driver") == []
    assert not [o for o in objects if "nvidia-driver" in o.name]


def test_component_objects(synth: Synth) -> None:
    assert kinds(synth(profile()), "driver") == [
        ("ServiceAccount", "nvidia-driver"),
        ("ConfigMap", "nvidia-driver-scripts"),
        # NVIDIA's driver manager (tests/constructs/test_driver_manager.py)
        ("ClusterRole", "gpustack-nvidia-driver-manager"),
        ("ClusterRoleBinding", "gpustack-nvidia-driver-manager"),
        ("ConfigMap", "nvidia-driver-manager-scripts"),
        ("DaemonSet", DS),
    ]


def test_privileged_host_daemon_updated_only_on_delete(synth: Synth) -> None:
    ds = driver_ds(synth)
    spec = pod_spec(ds)
    assert ds["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert spec["hostPID"] is True
    assert container(ds, CTR)["securityContext"]["privileged"] is True
    assert spec["serviceAccountName"] == "nvidia-driver"
    assert spec["automountServiceAccountToken"] is False
    assert spec["terminationGracePeriodSeconds"] >= 120


def test_one_driver_pod_per_node(synth: Synth) -> None:
    ds = driver_ds(synth)
    terms = pod_spec(ds)["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert terms == [
        {
            "labelSelector": {"matchLabels": ds["spec"]["selector"]["matchLabels"]},
            "topologyKey": "kubernetes.io/hostname",
        }
    ]


def test_run_nvidia_is_shared_bidirectionally(synth: Synth) -> None:
    ds = driver_ds(synth)
    m = mounts(container(ds, CTR))
    assert m["/run/nvidia"]["mountPropagation"] == "Bidirectional"
    assert host_paths(ds)[m["/run/nvidia"]["name"]] == "/run/nvidia"
    assert m["/host-etc/os-release"]["readOnly"] is True


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        ({}, (60, 10, 60, 120)),
        (
            {
                "initialDelaySeconds": 5,
                "periodSeconds": 20,
                "timeoutSeconds": 30,
                "failureThreshold": 9,
            },
            (5, 20, 30, 9),
        ),
    ],
)
def test_startup_probe_budget(
    synth: Synth, probe: dict[str, int], expected: tuple[int, int, int, int]
) -> None:
    c = container(driver_ds(synth, driver={"startupProbe": probe}), CTR)
    p = c["startupProbe"]
    got = (p["initialDelaySeconds"], p["periodSeconds"], p["timeoutSeconds"], p["failureThreshold"])
    assert got == expected
    script = p["exec"]["command"][-1]
    assert script.endswith("/startup-probe.sh")
    assert mounts(c)[posixpath.dirname(script)]["name"] == "scripts"


def test_probe_script_comes_from_the_scripts_config_map(synth: Synth) -> None:
    objects = synth(profile())
    cm = find(objects, "ConfigMap", "nvidia-driver-scripts")
    assert "nvidia-smi" in cm["data"]["startup-probe.sh"]
    ds = find(objects, "DaemonSet", DS)
    scripts = next(v for v in pod_spec(ds)["volumes"] if "configMap" in v)
    assert scripts["configMap"]["name"] == "nvidia-driver-scripts"


def test_pre_stop_removes_readiness_files(synth: Synth) -> None:
    stop = " ".join(container(driver_ds(synth), CTR)["lifecycle"]["preStop"]["exec"]["command"])
    assert "/run/nvidia/validations/.driver-ctr-ready" in stop
    assert "/run/nvidia/validations/driver-ready" in stop


def test_env_image_and_user_overrides(synth: Synth) -> None:
    ds = driver_ds(
        synth,
        driver={
            "version": "570.133.20",
            "osTag": "rhel9.4",
            "kernelModuleType": "open",
            "env": [{"name": "X", "value": "1"}],
            "resources": {"requests": {"memory": "1Gi"}},
        },
    )
    c = container(ds, CTR)
    assert c["image"] == "nvcr.io/nvidia/driver:570.133.20-rhel9.4"
    e = env(c)
    assert e["NODE_NAME"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    # overriding it is refused (rule env-not-managed); the profile's setting is what lands
    assert e["KERNEL_MODULE_TYPE"] == "open"
    assert e["X"] == "1"
    assert c["resources"] == {"requests": {"memory": "1Gi"}}


def test_digest_and_precompiled_images(synth: Synth) -> None:
    digest = "sha256:" + "a" * 64
    c = container(driver_ds(synth, driver={"digest": digest}), CTR)
    assert c["image"] == f"nvcr.io/nvidia/driver@{digest}"


# NVIDIA publishes precompiled driver images as <branch>-<kernel>-<os tag>.
PRECOMPILED: list[tuple[dict[str, Any], str]] = [
    (
        {"kernelVersion": "6.8.0-60-generic", "version": "580.105.08"},
        "580-6.8.0-60-generic-ubuntu24.04",
    ),
    (
        {"kernelVersion": "5.15.0-140-generic", "osTag": "ubuntu22.04", "version": "570.133.20"},
        "570-5.15.0-140-generic-ubuntu22.04",
    ),
]


@pytest.mark.parametrize(("settings", "tag"), PRECOMPILED, ids=[t for _, t in PRECOMPILED])
def test_precompiled_tag_is_branch_kernel_os(
    synth: Synth, settings: dict[str, Any], tag: str
) -> None:
    c = container(driver_ds(synth, driver={"usePrecompiled": True, **settings}), CTR)
    assert c["image"] == f"nvcr.io/nvidia/driver:{tag}"


def test_mofed_wait_before_the_driver_builds_unless_host_mofed(synth: Synth) -> None:
    ds = driver_ds(synth, driver={"rdma": {"enabled": True}})
    init = container(ds, "mofed-validation", init=True)
    assert '[ -f "/run/mellanox/drivers/.driver-ready" ]' in init["command"][-1]
    assert mounts(init)["/run/mellanox/drivers"]["readOnly"] is True
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    host = driver_ds(synth, driver={"rdma": {"enabled": True, "useHostMofed": True}})
    for ds in (host, driver_ds(synth)):
        names = [c["name"] for c in pod_spec(ds).get("initContainers", [])]
        assert "mofed-validation" not in names


def _pci_devices(root: Path, vendors: list[str]) -> Path:
    """A fake host /sys with PCI devices of these vendors (links into /sys/devices, as Linux)."""
    for i, vendor in enumerate(vendors):
        device = root / "devices" / "pci0000:00" / f"0000:00:0{i}.0"
        device.mkdir(parents=True)
        (device / "vendor").write_text(vendor + "\n")
        link = root / "bus" / "pci" / "devices" / device.name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../../..") / "devices" / "pci0000:00" / device.name)
    return root


def _mofed_script(synth: Synth, sys_root: Path, ready: Path) -> str:
    ds = driver_ds(synth, driver={"rdma": {"enabled": True}})
    init = container(ds, "mofed-validation", init=True)
    assert mounts(init)["/host-sys"]["readOnly"] is True
    script: str = init["command"][-1]
    return (
        script.replace("/run/mellanox/drivers/.driver-ready", str(ready))
        .replace("/host-sys", str(sys_root))
        .replace("sleep 5", "sleep 0.1")
    )


def test_mofed_wait_skips_nodes_without_a_mellanox_device(tmp_path: Path, synth: Synth) -> None:
    """Issue 19 item 6: a GPU node without a Mellanox NIC runs no MOFED driver container; the
    wait must not block its driver forever (NVIDIA's validator skips it there too)."""
    sys_root = _pci_devices(tmp_path / "sys", ["0x10de", "0x8086"])
    script = _mofed_script(synth, sys_root, tmp_path / ".driver-ready")
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=5)
    assert done.returncode == 0
    assert "no Mellanox device" in done.stdout


def test_mofed_wait_really_waits(tmp_path: Path, synth: Synth) -> None:
    ready = tmp_path / ".driver-ready"
    sys_root = _pci_devices(tmp_path / "sys", ["0x10de", "0x15b3"])
    script = _mofed_script(synth, sys_root, ready)
    proc = subprocess.Popen(["sh", "-c", script])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
        ready.write_text("")
        assert proc.wait(timeout=5) == 0
    finally:
        proc.kill()


OS_CASES: list[tuple[str, tuple[str, str]]] = [
    ("ubuntu24.04", ("ubuntu", "24.04")),
    ("ubuntu22.04", ("ubuntu", "22.04")),
    ("rhel9.6", ("rhel", "9.6")),
    ("rhcos4.18", ("rhcos", "4.18")),
]


@pytest.mark.parametrize(("os_tag", "release"), OS_CASES, ids=[c[0] for c in OS_CASES])
def test_driver_stays_off_nodes_nfd_labels_with_another_os(
    synth: Synth, os_tag: str, release: tuple[str, str]
) -> None:
    affinity = pod_spec(driver_ds(synth, driver={"osTag": os_tag}))["affinity"]["nodeAffinity"]
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    label = "feature.node.kubernetes.io/system-os_release."
    # every term also carries the deploy-label requirements (tests/constructs/test_deploy_labels)
    terms = [
        {
            "matchExpressions": [
                e
                for e in term["matchExpressions"]
                if not e["key"].startswith("nvidia.com/gpu.deploy.")
            ]
        }
        for term in terms
    ]
    assert terms == [
        {
            "matchExpressions": [
                {"key": f"{label}ID", "operator": "In", "values": [release[0]]},
                {"key": f"{label}VERSION_ID", "operator": "In", "values": [release[1]]},
            ]
        },
        {"matchExpressions": [{"key": f"{label}ID", "operator": "DoesNotExist"}]},
    ]


def test_kernel_module_parameters_mounted_at_drivers(synth: Synth) -> None:
    ds = driver_ds(synth, driver={"kernelModuleConfigMap": "nvidia-params"})
    assert mounts(container(ds, CTR))["/drivers"]["readOnly"] is True
    names = [v["configMap"]["name"] for v in pod_spec(ds)["volumes"] if "configMap" in v]
    assert "nvidia-params" in names


# --- GPUDirect RDMA: env, Mellanox mounts and the nvidia-peermem sidecar ------------------------

#: (driver.rdma, driver env it adds, sidecar expected)
RDMA_CASES: list[tuple[str, dict[str, Any], dict[str, str], bool]] = [
    ("default", {}, {}, False),
    ("disabled", {"enabled": False}, {}, False),
    (
        "enabled",
        {"enabled": True},
        {"GPU_DIRECT_RDMA_ENABLED": "true", "USE_HOST_MOFED": "false"},
        True,
    ),
    (
        "host-mofed",
        {"enabled": True, "useHostMofed": True},
        {"GPU_DIRECT_RDMA_ENABLED": "true", "USE_HOST_MOFED": "true"},
        True,
    ),
]
RDMA_ENV = {"GPU_DIRECT_RDMA_ENABLED", "USE_HOST_MOFED"}


@pytest.mark.parametrize(
    ("rdma", "added", "sidecar"), [c[1:] for c in RDMA_CASES], ids=[c[0] for c in RDMA_CASES]
)
def test_rdma_env_mounts_and_sidecar(
    synth: Synth, rdma: dict[str, Any], added: dict[str, str], sidecar: bool
) -> None:
    ds = driver_ds(synth, driver={"rdma": rdma})
    c = container(ds, CTR)
    assert {k: v for k, v in env(c).items() if k in RDMA_ENV} == added
    names = [x["name"] for x in pod_spec(ds)["containers"]]
    assert names == ([CTR, PEERMEM] if sidecar else [CTR])
    m = mounts(c)
    paths = host_paths(ds)
    for path in MELLANOX:
        assert (path in m) == sidecar
        assert (path in paths.values()) == sidecar
        if sidecar:
            assert m[path]["mountPropagation"] == "HostToContainer"
            assert paths[m[path]["name"]] == path
            assert volumes(ds)[m[path]["name"]]["hostPath"]["type"] == "DirectoryOrCreate"


def test_rdma_off_is_todays_pod(synth: Synth) -> None:
    """Leaving rdma out or disabling it changes nothing in the synthesized objects."""
    plain = [o.manifest for o in synth(profile())]
    assert [o.manifest for o in synth(profile(driver={"rdma": {"enabled": False}}))] == plain
    assert [o.manifest for o in synth(profile(driver={"rdma": {}}))] == plain


def test_peermem_sidecar_shape(synth: Synth) -> None:
    ds = driver_ds(
        synth, driver={"rdma": {"enabled": True}, "resources": {"limits": {"memory": "4Gi"}}}
    )
    driver, peermem = container(ds, CTR), container(ds, PEERMEM)
    assert peermem["image"] == driver["image"]
    assert peermem["imagePullPolicy"] == driver["imagePullPolicy"]
    assert peermem["command"] + peermem["args"] == ["nvidia-driver", "reload_nvidia_peermem"]
    assert peermem["securityContext"] == {"privileged": True}
    assert "resources" not in peermem  # the driver's compile budget is not the sidecar's
    assert env(peermem) == {
        "GPU_DIRECT_RDMA_ENABLED": "true",
        "USE_HOST_MOFED": "false",
    }
    m = mounts(peermem)
    assert sorted(m) == ["/run/mellanox/drivers", "/run/nvidia"]
    assert m["/run/nvidia"] == mounts(driver)["/run/nvidia"]
    assert m["/run/mellanox/drivers"] == mounts(driver)["/run/mellanox/drivers"]


@pytest.mark.parametrize(
    ("probe", "startup"),
    [
        ({}, (60, 10, 60, 120)),
        (
            {"initialDelaySeconds": 5, "periodSeconds": 20, "timeoutSeconds": 30,
             "failureThreshold": 9},
            (5, 20, 30, 9),
        ),
    ],
)  # fmt: skip
def test_peermem_probes(
    synth: Synth, probe: dict[str, int], startup: tuple[int, int, int, int]
) -> None:
    """Startup: the driver's budget (peermem loads only after the driver); liveness: fixed."""
    ds = driver_ds(synth, driver={"rdma": {"enabled": True}, "startupProbe": probe})
    c = container(ds, PEERMEM)
    command = ["nvidia-driver", "probe_nvidia_peermem"]
    sp, lp = c["startupProbe"], c["livenessProbe"]
    assert sp["exec"]["command"] == lp["exec"]["command"] == command
    got = (
        sp["initialDelaySeconds"],
        sp["periodSeconds"],
        sp["timeoutSeconds"],
        sp["failureThreshold"],
    )
    assert got == startup
    assert (lp["periodSeconds"], lp["timeoutSeconds"], lp["failureThreshold"]) == (30, 10, 3)


def test_rdma_readiness_recorded_by_the_probe_script(synth: Synth) -> None:
    def script(rdma: dict[str, Any]) -> str:
        cm = find(synth(profile(driver={"rdma": rdma})), "ConfigMap", "nvidia-driver-scripts")
        text: str = cm["data"]["startup-probe.sh"]
        return text

    assert "GPU_DIRECT_RDMA_ENABLED=true" in script({"enabled": True})
    assert "GPU_DIRECT_RDMA_ENABLED" not in script({})
    ds = driver_ds(synth, driver={"rdma": {"enabled": True}})
    plain = driver_ds(synth)
    key = "gpustack.dev/scripts-checksum"
    annotations = ds["spec"]["template"]["metadata"]["annotations"]
    assert annotations[key] != plain["spec"]["template"]["metadata"]["annotations"][key]


# --- the startup probe script itself, run with sh against a fake node -------------------------


def _node(tmp_path: Path, *, module: bool, smi_ok: bool, ctr_dev: bool) -> dict[str, Path]:
    paths = {n: tmp_path / n for n in ("sys", "validations", "driver", "bin")}
    for p in paths.values():
        p.mkdir()
    if module:
        (paths["sys"] / "nvidia").mkdir()
        (paths["sys"] / "nvidia" / "refcnt").write_text("0\n")
    if ctr_dev:
        (paths["driver"] / "dev").mkdir()
        (paths["driver"] / "dev" / "nvidiactl").write_text("")
    smi = paths["bin"] / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nexit {0 if smi_ok else 9}\n")
    smi.chmod(0o755)
    return paths


def _run_probe(
    tmp_path: Path, paths: dict[str, Path], *, rdma: bool = False
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "probe.sh"
    script.write_text(
        DRIVER_STARTUP_PROBE.render(
            validations=paths["validations"],
            sys_module=paths["sys"],
            driver_root=paths["driver"],
            driver_root_ctr="/driver-root",
            host_root_ctr="/host",
            rdma=rdma,
        )
    )
    path = f"{paths['bin']}:{os.environ['PATH']}"
    return subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env={**os.environ, "PATH": path}
    )


@pytest.mark.parametrize(("module", "smi_ok"), [(False, True), (True, False)])
def test_probe_fails_until_module_and_nvidia_smi_work(
    tmp_path: Path, module: bool, smi_ok: bool
) -> None:
    paths = _node(tmp_path, module=module, smi_ok=smi_ok, ctr_dev=True)
    assert _run_probe(tmp_path, paths).returncode != 0
    assert list(paths["validations"].iterdir()) == []


@pytest.mark.parametrize(
    ("ctr_dev", "dev_root", "dev_ctr"), [(True, None, "/driver-root"), (False, "/", "/host")]
)
def test_probe_writes_driver_ready(
    tmp_path: Path, ctr_dev: bool, dev_root: str | None, dev_ctr: str
) -> None:
    paths = _node(tmp_path, module=True, smi_ok=True, ctr_dev=ctr_dev)
    result = _run_probe(tmp_path, paths)
    assert result.returncode == 0, result.stderr
    ready = paths["validations"] / "driver-ready"
    lines = dict(line.split("=", 1) for line in ready.read_text().splitlines())
    assert lines == {
        "IS_HOST_DRIVER": "false",
        "NVIDIA_DRIVER_ROOT": str(paths["driver"]),
        "DRIVER_ROOT_CTR_PATH": "/driver-root",
        "NVIDIA_DEV_ROOT": dev_root or str(paths["driver"]),
        "DEV_ROOT_CTR_PATH": dev_ctr,
    }
    assert (paths["validations"] / ".driver-ctr-ready").exists()
    assert sorted(p.name for p in paths["validations"].iterdir()) == [
        ".driver-ctr-ready",
        "driver-ready",
    ]


def test_probe_waits_for_driver_daemons(tmp_path: Path) -> None:
    paths = _node(tmp_path, module=True, smi_ok=True, ctr_dev=True)
    (paths["validations"] / ".driver-daemons-status").write_text("Starting")
    assert _run_probe(tmp_path, paths).returncode != 0
    assert not (paths["validations"] / "driver-ready").exists()


@pytest.mark.parametrize(
    ("rdma", "content"), [(False, ""), (True, "GPU_DIRECT_RDMA_ENABLED=true\n")]
)
def test_probe_lists_rdma_in_driver_ctr_ready(tmp_path: Path, rdma: bool, content: str) -> None:
    paths = _node(tmp_path, module=True, smi_ok=True, ctr_dev=True)
    result = _run_probe(tmp_path, paths, rdma=rdma)
    assert result.returncode == 0, result.stderr
    assert (paths["validations"] / ".driver-ctr-ready").read_text() == content
    # the toolkit sources driver-ready: RDMA is not its business
    assert "RDMA" not in (paths["validations"] / "driver-ready").read_text()


# --- package repositories and CA certificates for the module build ------------------------------

REPO_CERT_CASES: list[tuple[str, str, str]] = [
    ("ubuntu24.04", "/etc/apt/sources.list.d", "/usr/local/share/ca-certificates"),
    ("rhel9.6", "/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
    ("rhcos4.18", "/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
]


@pytest.mark.parametrize(("os_tag", "repo_dir", "cert_dir"), REPO_CERT_CASES)
def test_repo_and_cert_config_maps_mounted_where_the_os_reads_them(
    synth: Synth, os_tag: str, repo_dir: str, cert_dir: str
) -> None:
    driver = {"osTag": os_tag, "repoConfigMap": "mirror", "certConfigMap": "corp-ca"}
    ds = driver_ds(synth, driver=driver)
    m = mounts(container(ds, CTR))
    assert m[repo_dir]["readOnly"] is True and m[cert_dir]["readOnly"] is True
    config_maps = {
        v["name"]: v["configMap"]["name"] for v in pod_spec(ds)["volumes"] if "configMap" in v
    }
    assert config_maps[m[repo_dir]["name"]] == "mirror"
    assert config_maps[m[cert_dir]["name"]] == "corp-ca"


def test_no_repo_or_cert_config_by_default(synth: Synth) -> None:
    m = mounts(container(driver_ds(synth), CTR))
    assert not {"/etc/apt/sources.list.d", "/usr/local/share/ca-certificates"} & set(m)


def test_repo_config_for_an_unknown_os_is_refused() -> None:
    p = Profile.from_dict(profile(driver={"osTag": "sles15.6", "repoConfigMap": "mirror"}))
    with pytest.raises(ValueError, match="sles15.6"):
        DriverProps.from_profile(p)


def test_precompiled_driver_runs_only_on_its_kernel(synth: Synth) -> None:
    """Issue 19 item 5: the GPU Operator pins each precompiled driver DaemonSet to NFD's
    kernel-version.full (transformPrecompiledDriverDaemonset, v26.7.0); every term of the
    driver's required node affinity must, so that after a kernel update the node gets no pod
    rather than modules built for another kernel."""
    ds = driver_ds(synth, driver={"usePrecompiled": True, "kernelVersion": "6.8.0-60-generic"})
    terms = pod_spec(ds)["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # fmt: skip
    assert terms
    for term in terms:
        assert {"key": KERNEL_LABEL, "operator": "In", "values": ["6.8.0-60-generic"]} in term[
            "matchExpressions"
        ]
    built = driver_ds(synth, driver={})
    text = str(pod_spec(built)["affinity"])
    assert KERNEL_LABEL not in text


def test_driver_container_asks_for_no_gpu(synth: Synth) -> None:
    c = container(driver_ds(synth, driver={}), CTR)
    assert env(c)["NVIDIA_VISIBLE_DEVICES"] == "void"


DTK = {
    "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + "7" * 64,
    "rhcosVersion": "418.94.202501221327-0",
    "openshiftVersion": "4.18",
}


def _openshift_driver(synth: Synth, **driver: Any) -> dict[str, Any]:
    runtime = {"name": "crio", "distribution": "openshift"}
    data = profile(cluster={"runtime": runtime}, driver={"osTag": "rhcos4.18", **driver})
    return find(synth(data), "DaemonSet", DS)


def test_openshift_builds_the_driver_in_the_driver_toolkit_side_car(synth: Synth) -> None:
    """Issue 19 item 3: on RHCOS the driver builds in OpenShift's Driver Toolkit side-car, as the
    GPU Operator renders it (golden/driver-openshift-drivertoolkit.yaml, v26.7.0)."""
    ds = _openshift_driver(synth, driverToolkit=DTK)
    main, side = container(ds, CTR), container(ds, "openshift-driver-toolkit-ctr")
    assert main["command"] == ["ocp_dtk_entrypoint"] and main["args"] == ["nv-ctr-run-with-dtk"]
    assert env(main)["OPENSHIFT_VERSION"] == "4.18"
    assert side["image"] == DTK["image"]
    assert env(side)["RHCOS_VERSION"] == DTK["rhcosVersion"]
    assert env(side)["DRIVER_CONFIG_DIGEST"] == env(main)["DRIVER_CONFIG_DIGEST"]
    assert "dtk-build-driver" in side["args"][0] and "dir_prepared" in side["args"][0]
    shared = "/mnt/shared-nvidia-driver-toolkit"
    assert shared in mounts(main) and shared in mounts(side)
    assert {"/var/log", "/host-etc/os-release", "/lib/firmware"} <= set(mounts(side))
    assert side["securityContext"]["privileged"] is True
    terms = pod_spec(ds)["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # fmt: skip
    pin = {"key": "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION",
           "operator": "In", "values": [DTK["rhcosVersion"]]}  # fmt: skip
    assert all(pin in term["matchExpressions"] for term in terms)
    plain = driver_ds(synth, driver={})
    assert [c["name"] for c in pod_spec(plain)["containers"]] == [CTR]
    assert container(plain, CTR)["command"] == ["nvidia-driver"]


NEXT_BUILD = {
    "rhcosVersion": "418.94.202502101302-0",
    "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + "8" * 64,
}


def test_openshift_renders_one_driver_daemonset_per_rhcos_build(synth: Synth) -> None:
    """Issue 31 item 3: a driver pinned to one RHCOS build left the nodes of the next build
    without a driver after every cluster update. As the GPU Operator renders one driver DaemonSet
    per OSTREE_VERSION it finds (``ocpDriverToolkitDaemonSets``, v26.7.0), each build the profile
    names gets its own, pinned to it, with its own Driver Toolkit image; the first keeps its name
    so an existing cluster's driver pods are not replaced."""
    runtime = {"name": "crio", "distribution": "openshift"}
    dtk = {**DTK, "builds": [NEXT_BUILD]}
    data = profile(
        cluster={"runtime": runtime}, driver={"osTag": "rhcos4.18", "driverToolkit": dtk}
    )
    drivers = {
        o.manifest["metadata"]["name"]: dict(o.manifest)
        for o in synth(data)
        if o.kind == "DaemonSet" and o.manifest["metadata"]["name"].startswith(DS)
    }
    next_ds = f"{DS}-{NEXT_BUILD['rhcosVersion'].replace('.', '-')}"
    assert sorted(drivers) == [DS, next_ds]
    for name, build in ((DS, DTK), (next_ds, NEXT_BUILD)):
        ds = drivers[name]
        side = container(ds, "openshift-driver-toolkit-ctr")
        assert side["image"] == build["image"]
        assert env(side)["RHCOS_VERSION"] == build["rhcosVersion"]
        terms = pod_spec(ds)["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # fmt: skip
        pins = {
            (e["key"], tuple(e["values"]))
            for term in terms
            for e in term["matchExpressions"]
            if e["key"].endswith("OSTREE_VERSION")
        }
        assert pins == {(
            "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION",
            (build["rhcosVersion"],),
        )}  # fmt: skip
        assert ds["spec"]["template"]["metadata"]["labels"]["app"] == name
