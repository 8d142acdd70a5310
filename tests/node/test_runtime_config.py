"""What each distribution's runtime loads after gpustack's toolkit ran and the distribution
regenerated its config: every RuntimeClass gpustack synthesizes names a handler that exists
there and runs our runtime, imports resolve on the host, distribution markers are kept.

Flow per distribution: build its stock host root; boot (its regeneration step); run the fake
installer (:mod:`tests.node.installer`) with the synthesized toolkit container's env and mounts
mapped onto the root; regenerate again (the restart the installer triggers, or a reboot); load.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.constructs.conftest import Synth, container, env, find, merge, pod_spec, profile
from tests.tooling import require_tool

from .hostroot import DISTRIBUTIONS, Distribution, Loaded, PreflightRejected
from .installer import CRI_PLUGIN, install, toml_dump
from .pod import PodView, ReadOnlyError
from .real_installer import PROBE, SCRIPTS, Pod, driver_ready

DS = "nvidia-container-toolkit-daemonset"
CTR = "nvidia-container-toolkit-ctr"
BY_NAME = {d.name: d for d in DISTRIBUTIONS}
# (distribution, extra profile sections) for every case the harness covers.
CASES: list[tuple[str, dict[str, Any]]] = [(d.name, {}) for d in DISTRIBUTIONS] + [
    ("crio", {"toolkit": {"cdi": {"enabled": False}}}),
    ("crio-rhcos", {"toolkit": {"cdi": {"enabled": False}}}),
    ("containerd-1.7", {"toolkit": {"cdi": {"enabled": False}}}),
    ("microk8s", {"devicePlugin": {"deviceListStrategy": ["cdi-cri"]}}),
]


def _id(case: tuple[str, dict[str, Any]]) -> str:
    name, sections = case
    return (
        name
        + ("-cdi-off" if sections.get("toolkit") else "")
        + ("-cdi-cri" if sections.get("devicePlugin") else "")
    )


def run_node(
    synth: Synth,
    dist: Distribution,
    root: Path,
    sections: dict[str, Any],
    env_override: dict[str, str] | None = None,
) -> tuple[Loaded, list[str], dict[str, str]]:
    """Boot the fake node, run the toolkit as synthesized, regenerate; returns what the runtime
    loads, the RuntimeClass handlers gpustack declared and the installer's env."""
    base = merge(profile(cluster={"runtime": dist.runtime, **dist.cluster}), dist.sections)
    objects = synth(merge(base, sections))
    ds = find(objects, "DaemonSet", DS)
    ctr = container(ds, CTR)
    installer_env = {k: v for k, v in env(ctr).items() if isinstance(v, str)}
    installer_env.update(env_override or {})
    handlers = [o.manifest["handler"] for o in objects if o.kind == "RuntimeClass"]
    dist.build(root)
    dist.regenerate(root)  # the node as it booted
    pod = PodView.of(
        ctr, pod_spec(ds), root, root.parent / "container", dist.read_only, dist.writable
    )
    install(installer_env, pod, dist.dump(root))
    dist.regenerate(root)  # the restart the installer signals, or the next reboot
    return dist.load(root), handlers, installer_env


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_every_runtime_class_names_a_handler_the_runtime_loads(
    synth: Synth, tmp_path: Path, case: tuple[str, dict[str, Any]]
) -> None:
    dist = BY_NAME[case[0]]
    root = tmp_path / "host"
    loaded, declared, installer_env = run_node(synth, dist, root, case[1])
    loaded_handlers = loaded.handlers()
    install_dir = installer_env["ROOT"]
    for handler in declared:
        assert handler in loaded_handlers, f"{dist.name}: no {handler!r} in {loaded_handlers}"
        binary = loaded_handlers[handler]
        assert binary.startswith(f"{install_dir}/toolkit/nvidia-container-runtime"), binary
        assert (root / binary.lstrip("/")).is_file(), f"{binary} is not on the host"
    for handler, kind in loaded.runtime_types().items():
        assert "${" not in kind, f"{dist.name}: {handler} has an unrendered runtime_type {kind}"
    assert not loaded.unresolved, f"{dist.name}: imports that do not resolve: {loaded.unresolved}"
    if dist.marker:
        path, text = dist.marker
        assert text in (root / path.lstrip("/")).read_text(), f"{dist.name}: {text!r} lost"
    if loaded.kind == "crio" and not declared:
        assert any("nvidia" in h for h in loaded.hooks), f"{dist.name}: no hook it reads"
    if case[0] == "microk8s" and case[1]:
        assert loaded.cdi_enabled(), "CDI device names need enable_cdi in what containerd loads"


def test_the_cases_cover_every_distribution() -> None:
    assert {c[0] for c in CASES} == set(BY_NAME)
    assert {d.runtime.get("distribution", "generic") for d in DISTRIBUTIONS} == {
        "generic",
        "k3s",
        "rke2",
        "microk8s",
        "k0s",
        "openshift",
    }


@pytest.mark.parametrize(
    "name", ["containerd-1.7", "containerd-2.x", "microk8s", "k0s", "k0s-1.36"]
)
def test_cdi_is_on_in_what_containerd_loads(synth: Synth, tmp_path: Path, name: str) -> None:
    loaded, _, _ = run_node(synth, BY_NAME[name], tmp_path / "host", {})
    assert loaded.cdi_enabled()


# What gpustack gave the toolkit before issue #10, per distribution: the fake installer then
# leaves nodes the harness must reject (else it could not tell the fix from the bug).
# microk8s: an empty drop-in and the template as source; k0s: k0s's own containerd.toml as the
# top-level file the installer rewrites.
OLD: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    ("microk8s", {}, {"RUNTIME_DROP_IN_CONFIG": "", "RUNTIME_CONFIG_SOURCE": "file"}),
    ("k0s", {"cluster": {"runtime": {"configPath": "/etc/k0s/containerd.toml"}}}, {}),
]


@pytest.mark.parametrize(("name", "sections", "old"), OLD, ids=[c[0] for c in OLD])
def test_the_harness_rejects_the_old_settings(
    synth: Synth, tmp_path: Path, name: str, sections: dict[str, Any], old: dict[str, str]
) -> None:
    dist = BY_NAME[name]
    root = tmp_path / "host"
    loaded, _, _ = run_node(synth, dist, root, sections, old)
    broken = "nvidia" not in loaded.handlers() or bool(loaded.unresolved)
    if dist.marker:
        path, text = dist.marker
        broken = broken or text not in (root / path.lstrip("/")).read_text()
    assert broken


def test_rhcos_hooks_cannot_go_to_usr(tmp_path: Path) -> None:
    """The old hook folder on RHCOS: a write under /usr fails there."""
    dist = BY_NAME["crio-rhcos"]
    root = tmp_path / "host"
    dist.build(root)
    pod = PodView.of(
        {"volumeMounts": [{"name": "h", "mountPath": "/usr/share/containers/oci/hooks.d"}]},
        {"volumes": [{"name": "h", "hostPath": {"path": "/usr/share/containers/oci/hooks.d"}}]},
        root,
        tmp_path / "ctr",
        dist.read_only,
    )
    with pytest.raises(ReadOnlyError):
        pod.write("/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json", "{}")


def test_k0s_136_rejects_what_gpustack_wrote_before(synth: Synth, tmp_path: Path) -> None:
    """Issue 19 item 2: before, the installer read gpustack's empty scratch file on k0s, so it
    wrote a version-2 drop-in; k0s 1.36's pre-flight check refuses it and the worker does not
    start after its next restart. Now it reads k0s's own version-3 containerd.toml."""
    dist = BY_NAME["k0s-1.36"]
    with pytest.raises(PreflightRejected, match="version 2|grpc.v1.cri"):
        run_node(synth, dist, tmp_path / "old", {}, {"RUNTIME_CONFIG_SOURCE": "file"})
    loaded, _, installer_env = run_node(synth, dist, tmp_path / "new", {})
    assert installer_env["RUNTIME_CONFIG_SOURCE"] == "file=/host/etc/k0s/containerd.toml"
    assert "nvidia" in loaded.handlers()
    drop_in = (tmp_path / "new" / "etc/k0s/containerd.d/nvidia.toml").read_text()
    assert "io.containerd.grpc.v1.cri" not in drop_in and "version = 3" in drop_in


def test_k0s_before_136_keeps_version_2(synth: Synth, tmp_path: Path) -> None:
    loaded, _, installer_env = run_node(synth, BY_NAME["k0s"], tmp_path / "host", {})
    assert installer_env["RUNTIME_CONFIG_SOURCE"] == "file"
    assert int(loaded.tree.get("version", 2)) == 2


@pytest.mark.parametrize("name", ["containerd-1.7", "containerd-2.x"])
def test_the_stock_runc_settings_survive_the_drop_in(
    synth: Synth, tmp_path: Path, name: str
) -> None:
    """Item 8: containerd 1.7 replaces a plugin's whole table from an import. The installer's
    drop-in starts from the source's whole CRI table, so runc keeps SystemdCgroup."""
    loaded, _, _ = run_node(synth, BY_NAME[name], tmp_path / "host", {})
    version = int(loaded.tree.get("version", 2))
    cri = loaded.tree["plugins"][CRI_PLUGIN[version]]
    assert cri["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is True


def _handlers_only_node(tmp_path: Path, name: str) -> Loaded:
    """A stock node of ``name`` importing a drop-in that holds only an ``nvidia`` handler."""
    dist = BY_NAME[name]
    root = tmp_path / name
    dist.build(root)
    config = root / "etc/containerd/config.toml"
    text = config.read_text()
    version = int(tomllib.loads(text)["version"])
    config.write_text(f'imports = ["/etc/containerd/conf.d/*.toml"]\n{text}')
    runtimes = {"nvidia": {"runtime_type": "io.containerd.runc.v2"}}
    drop_in = {
        "version": version,
        "plugins": {CRI_PLUGIN[version]: {"containerd": {"runtimes": runtimes}}},
    }
    (root / "etc/containerd/conf.d").mkdir(parents=True)
    (root / "etc/containerd/conf.d/99-nvidia.toml").write_text(toml_dump(drop_in))
    return dist.load(root)


def test_containerd_17_replaces_plugin_tables_from_imports(tmp_path: Path) -> None:
    """The harness's containerd 1.7 merges as 1.7 does: a drop-in holding only the handlers
    (what an installer relying on a deep merge would write) loses the stock CRI settings;
    containerd 2.x keeps them."""
    old = _handlers_only_node(tmp_path, "containerd-1.7")
    assert set(old.handlers()) == {"nvidia"}
    assert "sandbox_image" not in old.tree["plugins"][CRI_PLUGIN[2]]
    new = _handlers_only_node(tmp_path, "containerd-2.x")
    assert set(new.handlers()) == {"runc", "nvidia"}


def test_gke_toolkit_cannot_install_under_usr_local(synth: Synth, tmp_path: Path) -> None:
    """Issue 19 item 4: on COS /usr is read-only; the toolkit at its default install dir
    (what gpustack rendered for GKE before) cannot install, in GKE's driver folder it can."""
    dist = BY_NAME["gke-cos"]
    with pytest.raises(ReadOnlyError):
        run_node(synth, dist, tmp_path / "old", {"toolkit": {"installDir": "/usr/local/nvidia"}})
    loaded, _, installer_env = run_node(synth, dist, tmp_path / "new", {})
    assert installer_env["ROOT"] == "/home/kubernetes/bin/nvidia"
    assert installer_env["RUNTIME_CONFIG_SOURCE"] == "file"
    assert "nvidia" in loaded.handlers()


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_the_startup_probe_passes_on_what_the_fake_installer_leaves(
    synth: Synth, tmp_path: Path, case: tuple[str, dict[str, Any]]
) -> None:
    """The synthesized ``ready-probe.sh``, run for real with ``sh`` in the toolkit container's
    mount namespace (bubblewrap), after the fake installer: the fast tier's version of
    ``test_nvidia_installer.py``, which holds the fake to NVIDIA's installer."""
    require_tool("bwrap")
    dist, root = BY_NAME[case[0]], tmp_path / "host"
    run_node(synth, dist, root, case[1])
    base = merge(profile(cluster={"runtime": dist.runtime, **dist.cluster}), dist.sections)
    objects = synth(merge(base, case[1]))
    driver_ready(root, objects, tmp_path)
    ds = find(objects, "DaemonSet", DS)
    image = tmp_path / "image"
    for folder in ("work", "artifacts"):
        (image / folder).mkdir(parents=True)
    (image / "proc-devices").write_text("Character devices:\n")
    scripts = {SCRIPTS: find(objects, "ConfigMap", SCRIPTS)["data"]}
    pod = Pod(container(ds, CTR), pod_spec(ds), root, image, scripts, tmp_path / "ctr")
    result = pod.run(["sh", PROBE])
    assert result.returncode == 0, result.stdout + result.stderr
