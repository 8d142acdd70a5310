"""Every operand of every example profile, held to NVIDIA's rendering (GPU Operator v26.7.0).

The rows live in :mod:`gpustack.conformance.tables`; this test runs each applicable row over each
synthesized DaemonSet (and the DRA driver's ComputeDomain controller Deployment) of each example
profile. It also shows that the checks bite: removing a fact (the MIG manager's runtime class,
the driver's Bidirectional /run/nvidia, the DRA plugin's startup probe) from the output makes its
row fail.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpustack.conformance import readme, tables
from gpustack.conformance.checks import Rendered
from gpustack.constructs import synthesize
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))
COMPONENT = "app.kubernetes.io/component"


@cache
def _stack(path: Path) -> tuple[Profile, tuple[dict[str, Any], ...]]:
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    profile = Profile.from_dict(data)
    return profile, tuple(o.manifest for o in synthesize(profile))


def _carries(operand: str, rendered: Rendered) -> bool:
    """Whether the workload is the operand's: by kind and name where the table says so (the DRA
    driver's), else by its main container (the component's other DaemonSets, the MPS control
    daemon, are not the operand)."""
    workload = rendered.workload
    if operand in tables.WORKLOADS:
        return (workload["kind"], workload["metadata"]["name"]) == tables.WORKLOADS[operand]
    main = tables.OPERANDS[tables.CARRIER.get(operand, operand)][0]
    return workload["kind"] == "DaemonSet" and rendered.container(main) is not None


def _operands(path: Path) -> Iterator[tuple[str, Rendered]]:
    """(operand, rendered) for every workload of the profile's stack carrying an operand."""
    profile, objects = _stack(path)
    for o in objects:
        if o["kind"] not in ("DaemonSet", "Deployment"):
            continue
        component = o["metadata"]["labels"].get(COMPONENT)
        for operand in tables.OPERANDS:
            rendered = Rendered(profile, o, objects)
            if tables.CARRIER.get(operand, operand) == component and _carries(operand, rendered):
                yield operand, rendered


def _rows() -> list[tables.Fact | tables.Divergence]:
    return [*tables.FACTS, *tables.DIVERGENCES]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_operand_holds_to_its_table(path: Path) -> None:
    failures = []
    for operand, rendered in _operands(path):
        name = rendered.workload["metadata"]["name"]
        for row in _rows():
            if row.operand != operand or not row.when(rendered.profile):
                continue
            problem = row.check(rendered)
            if problem:
                failures.append(f"{name} ({operand}, {row.aspect}): {problem} [{row.source}]")
    assert failures == []


def test_every_operand_has_a_table_and_is_exercised_by_an_example() -> None:
    seen = {operand for path in PROFILES for operand, _ in _operands(path)}
    assert seen == set(tables.OPERANDS)
    assert {f.operand for f in tables.FACTS} == set(tables.OPERANDS)


def test_every_row_applies_to_some_example() -> None:
    """A row no example reaches would never be checked: each must hold somewhere."""
    unused = []
    for row in _rows():
        if not any(
            op == row.operand and row.when(r.profile)
            for path in PROFILES
            for op, r in _operands(path)
        ):
            unused.append(f"{row.operand}: {row.aspect}")
    assert unused == []


def _remove(rendered: Rendered, edit: Any) -> Rendered:
    workload = copy.deepcopy(dict(rendered.workload))
    edit(workload["spec"]["template"]["spec"])
    return Rendered(rendered.profile, workload, rendered.objects)


def _drop_env(container: str, name: str) -> Any:
    def edit(pod: dict[str, Any]) -> None:
        for c in pod["containers"]:
            if c["name"] == container:
                c["env"] = [e for e in c["env"] if e["name"] != name]

    return edit


def _add_env(container: str, name: str, value: str) -> Any:
    def edit(pod: dict[str, Any]) -> None:
        for c in pod["containers"]:
            if c["name"] == container:
                c["env"].append({"name": name, "value": value})

    return edit


def _drop_capabilities(pod: dict[str, Any]) -> None:
    pod["containers"][0]["securityContext"]["capabilities"].pop("add")


def _kubectl_from(image: str) -> Any:
    def edit(pod: dict[str, Any]) -> None:
        for c in pod["initContainers"]:
            if c["name"] == "deploy-labels":
                c["image"] = image

    return edit


def _drop_propagation(pod: dict[str, Any]) -> None:
    for c in pod["containers"]:
        for m in c.get("volumeMounts", []):
            m.pop("mountPropagation", None)


@pytest.mark.parametrize(
    ("profile", "operand", "edit"),
    [
        ("a100-mig-mixed", "mig-manager", lambda pod: pod.pop("runtimeClassName")),
        ("lab-1gpu", "driver", _drop_propagation),
        ("lab-1gpu", "gpu-feature-discovery",
         lambda pod: pod["containers"][0]["env"].pop()),  # USE_NODE_FEATURE_API, set last
        ("lab-1gpu", "container-toolkit", lambda pod: pod.pop("hostPID")),
        ("h100-dra", "dra-driver", _drop_propagation),
        ("gb200-nvl72", "dra-driver",
         lambda pod: pod["containers"][0].pop("startupProbe")),  # compute-domains
        ("gb200-nvl72", "compute-domain-controller",
         lambda pod: pod["containers"][0]["env"].pop()),  # LEADER_ELECTION_ENABLED, set last
        # issue #30: the MIG manager's host GPU clients file (GPU Operator v26.7.0
        # assets/state-mig-manager/0600_daemonset.yaml)
        ("a100-mig-mixed", "mig-manager", _drop_env("nvidia-mig-manager", "GPU_CLIENTS_FILE")),
        # issue #30: SYS_ADMIN with a MIG strategy (k8s-device-plugin v0.20.0 _helpers.tpl)
        ("a100-mig-mixed", "device-plugin", _drop_capabilities),
        # issue #30: NVIDIA's default gpus health port is 51516, not the full-spec test's 52000
        ("h100-dra", "dra-driver", _drop_env("gpus", "HEALTHCHECK_PORT")),
        # issue #30: by default NVIDIA renders no feature gates
        ("h100-dra", "dra-driver", _add_env("gpus", "FEATURE_GATES", "MPSSupport=true")),
        # issue #30: the deploy-labels step's kubectl image is the profile's, a documented choice
        ("lab-1gpu", "driver-manager", _kubectl_from("registry.example/kubectl:1")),
    ],
)  # fmt: skip
def test_removing_a_fact_fails_its_row(profile: str, operand: str, edit: Any) -> None:
    rendered = next(
        r for op, r in _operands(REPO / "profiles" / f"{profile}.yaml") if op == operand
    )
    rows = [row for row in _rows() if row.operand == operand and row.when(rendered.profile)]
    assert all(row.check(rendered) is None for row in rows)
    broken = _remove(rendered, edit)
    assert any(row.check(broken) for row in rows)


def test_page_section_is_rendered_from_the_divergences() -> None:
    text = readme.PAGE.read_text(encoding="utf-8")
    assert readme.updated(text) == text, "run python -m gpustack.conformance.readme"
    for d in tables.DIVERGENCES:
        assert d.reason in text


def test_page_check_reports_a_stale_section(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    stale = tmp_path / "conformance.md"
    stale.write_text(
        f"# x\n{readme.BEGIN}\nold\n{readme.END}\n{readme.VERSIONS_BEGIN}\n{readme.VERSIONS_END}\n"
    )
    monkeypatch.setattr(readme, "PAGE", stale)
    assert readme.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert stale.read_text().count("old") == 1  # --check writes nothing
    assert readme.main([]) == 0
    assert readme.main(["--check"]) == 0


def test_page_states_the_default_versions() -> None:
    """The conformance page's versions table is the model's defaults (issue 19: the v26.7.0
    matrix)."""
    text = readme.PAGE.read_text(encoding="utf-8")
    defaults = Profile.from_dict({"metadata": {"name": "d"}})
    for ref in (
        defaults.toolkit.image_ref(),
        defaults.mig_manager.image_ref(),
        defaults.node_feature_discovery.image_ref(),
        defaults.dcgm_exporter.image_ref(),
        defaults.dra.image_ref(),
        defaults.driver.upgrade.image_ref(),
        f"{defaults.driver.image}:{defaults.driver.version}",
    ):
        assert f"`{ref}" in text, ref
