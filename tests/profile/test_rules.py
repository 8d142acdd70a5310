"""Each semantic rule on its own: it fires on its invalid case and stays quiet on valid ones."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpustack.profile import catalog, cuda_catalog, derive, rules
from gpustack.profile.document import format_path
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile, node_config_profile
from gpustack.profile.rules import reference
from gpustack.scan import discover

CASES = Path(__file__).parent / "cases"
REPO_PROFILES = Path(__file__).parents[2] / "profiles"

#: rule ID -> (invalid case, JSON path of its finding)
TRIGGERS: dict[str, tuple[str, str]] = {
    "kubernetes-version-supported": ("k8s-out-of-range", "$.cluster.kubernetesVersion"),
    "tolerations-valid": ("tolerations-invalid", "$.cluster.tolerations[0].value"),
    "env-not-managed": ("env-overrides-managed", "$.toolkit.env[0].name"),
    "env-names-unique": ("env-name-twice", "$.toolkit.env[1].name"),
    "image-digests-required": ("image-digests-required", "$.devicePlugin.digest"),
    "runtime-matches-distribution": ("crio-on-k3s", "$.cluster.runtime.distribution"),
    "k3s-keeps-only-its-nvidia-handler": ("k3s-foreign-handler", "$.toolkit.runtimeClass"),
    "k3s-cdi-needs-containerd-2": (
        "k3s-cdi-containerd-1",
        "$.devicePlugin.deviceListStrategy",
    ),
    "host-driver-root-needs-host-driver": (
        "host-driver-root-with-driver-container",
        "$.driver.hostDriverRoot",
    ),
    "crio-restart-not-signal": ("crio-restart-signal", "$.cluster.runtime.restartMode"),
    "cdi-strategy-needs-runtime-cdi": ("cdi-strategy-without-cdi", "$.toolkit.cdi.enabled"),
    "node-selector-labels-deployed": (
        "node-selector-gfd-label-without-gfd",
        "$.cluster.nodeSelector['nvidia.com/gpu.product']",
    ),
    "node-selector-label-known": (
        "node-selector-label-typo",
        "$.cluster.nodeSelector['nvidia.com/gpu.presnt']",
    ),
    "node-selector-label-value": (
        "node-selector-value-typo",
        "$.cluster.nodeSelector['nvidia.com/gpu.present']",
    ),
    "tolerations-cover-node-taints": ("node-taint-not-tolerated", "$.cluster.nodeTaints[1]"),
    "node-selector-not-self-labelled": (
        "node-selector-gfd-label-cycle",
        "$.cluster.nodeSelector['nvidia.com/gpu.product']",
    ),
    "readiness-files-written": ("mig-manager-without-driver", "$.driver.enabled"),
    "dra-needs-resource-api": ("dra-old-kubernetes", "$.cluster.kubernetesVersion"),
    "dra-driver-branch": ("dra-compute-domains-old-driver", "$.driver.version"),
    "dra-needs-cdi": ("dra-without-cdi", "$.toolkit.cdi.enabled"),
    "dra-compute-domains-need-cliques": (
        "dra-compute-domains-without-gfd",
        "$.gpuFeatureDiscovery.enabled",
    ),
    "dra-device-plugin-same-gpus": ("dra-and-device-plugin-same-gpus", "$.dra.gpus"),
    "dra-pools-overlap": (
        "dra-pool-is-the-stack",
        "$.dra.nodeSelector['nvidia.com/gpu.present']",
    ),
    "dra-extended-resource-same-nodes": (
        "dra-extended-resource-every-node",
        "$.dra.extendedResourceName",
    ),
    "dra-extended-resource-gate": ("dra-extended-resource-on-135", "$.dra.extendedResourceName"),
    "dra-examples-supported": (
        "dra-example-without-compute-domains",
        "$.workloads.examples[0].dra.computeDomain",
    ),
    "dra-feature-gate-exclusive": (
        "dra-gate-dynamic-mig-with-health-check",
        "$.dra.featureGates.NVMLDeviceHealthCheck",
    ),
    "dra-feature-gate-requires": ("dra-host-managed-imex-without-gate", "$.dra.imexMode"),
    "dra-feature-gate-needs-kubernetes": (
        "dra-gate-health-check-on-135",
        "$.dra.featureGates.NVMLDeviceHealthCheck",
    ),
    "dra-feature-gate-in-version": (
        "dra-gate-not-in-calendar-version",
        "$.dra.featureGates.NVMLDeviceHealthCheck",
    ),
    "dra-feature-gate-rendered": (
        "dra-gate-passthrough-not-rendered",
        "$.dra.featureGates.PassthroughSupport",
    ),
    "driver-toolkit-builds-distinct": (
        "driver-toolkit-build-twice",
        "$.driver.driverToolkit.builds[0].rhcosVersion",
    ),
    "gke-platform-stated": (
        "gke-driver-without-platform",
        "$.cluster.nodeSelector['cloud.google.com/gke-accelerator']",
    ),
    "precompiled-needs-kernel": ("precompiled-without-kernel", "$.driver.usePrecompiled"),
    "driver-config-maps-known-os": ("repo-config-unknown-os", "$.driver.repoConfigMap"),
    "rdma-needs-driver-container": ("rdma-with-host-driver", "$.driver.rdma.enabled"),
    "host-mofed-needs-rdma": ("host-mofed-without-rdma", "$.driver.rdma.useHostMofed"),
    "rhcos-driver-needs-openshift": ("rhcos-outside-openshift", "$.driver.osTag"),
    "openshift-driver-needs-driver-toolkit": (
        "openshift-driver-without-dtk",
        "$.driver.driverToolkit.image",
    ),
    "k0s-containerd-matches-release": ("k0s-136-containerd-17", "$.cluster.runtime.version"),
    "gke-toolkit-in-driver-folder": ("gke-toolkit-usr-local", "$.toolkit.installDir"),
    "gke-runtime-config-from-file": ("gke-command-source", "$.cluster.runtime.configSource"),
    "default-images-outside-mirror": (
        "mirror-misses-default-images",
        "$.nodeFeatureDiscovery.image",
    ),
    "product-matches-architecture": ("product-architecture-mismatch", "$.gpus.architecture"),
    "driver-supports-gpu": ("b200-driver-too-old", "$.driver.version"),
    "driver-still-supports-gpu": ("k80-driver-too-new", "$.driver.version"),
    "kernel-modules-fit-gpu": ("blackwell-proprietary", "$.driver.kernelModuleType"),
    "open-modules-need-r515": ("open-modules-on-old-driver", "$.driver.kernelModuleType"),
    "simulated-needs-gpustack": ("simulated-with-nvidia-plugin", "$.devicePlugin.backend"),
    "nvidia-plugin-resource-name": ("nvidia-plugin-custom-resource", "$.devicePlugin.resourceName"),
    "nvidia-plugin-ignores-rename": (
        "nvidia-plugin-time-slicing-rename",
        "$.devicePlugin.sharing.timeSlicing.resources[0].rename",
    ),
    "resource-names-well-formed": ("bad-resource-name", "$.devicePlugin.resourceName"),
    "resource-name-near-miss": ("resource-name-near-miss", "$.devicePlugin.resourceName"),
    "sharing-needs-two-replicas": (
        "replicas-one",
        "$.devicePlugin.sharing.timeSlicing.resources[0].replicas",
    ),
    "time-slicing-resources-unique": (
        "time-slicing-duplicate",
        "$.devicePlugin.sharing.timeSlicing.resources[1].name",
    ),
    "time-slicing-resources-exist": (
        "time-slicing-unknown-resource",
        "$.devicePlugin.sharing.timeSlicing.resources[0].name",
    ),
    "mps-needs-nvidia-plugin": ("mps-with-gpustack-plugin", "$.devicePlugin.sharing.mps"),
    "mps-excludes-time-slicing": ("mps-with-time-slicing", "$.devicePlugin.sharing.mps"),
    "mps-not-with-mig-devices": ("mps-with-mixed-mig", "$.devicePlugin.sharing.mps"),
    "mps-shares-whole-gpus": (
        "mps-shares-mig-resource",
        "$.devicePlugin.sharing.mps.resources[0].name",
    ),
    "mig-needs-capable-gpu": ("mig-on-t4", "$.devicePlugin.migStrategy"),
    "mig-layout-fits": ("mig-layout-too-big", "$.gpus.mig"),
    "mig-strategy-matches-layout": ("mig-single-not-uniform", "$.gpus.mig"),
    "workload-names-unique": ("duplicate-example-name", "$.workloads.examples[1].name"),
    "workload-cuda-fits-driver": ("driver-too-old-for-cuda", "$.workloads.examples[0].image"),
    "workload-cuda-fits-gpu": ("cuda13-on-volta", "$.workloads.examples[0].image"),
    "workload-cuda-knows-gpu": ("cuda12-on-blackwell", "$.workloads.examples[0].image"),
    "workload-fits-sharing": ("shared-request-over-one", "$.workloads.examples[0].gpus"),
    "workload-fits-node": ("job-larger-than-node", "$.workloads.examples[0].gpus"),
    "gitops-source-set": ("gitops-no-repo", "$.gitops.argocd.enabled"),
    "workload-resource-advertised": (
        "workload-resource-not-advertised",
        "$.workloads.examples[0].resourceName",
    ),
    "node-configs-need-plugin": ("node-configs-plugin-disabled", "$.devicePlugin.nodeConfigs"),
    "node-config-names-unique": (
        "node-config-duplicate-name",
        "$.devicePlugin.nodeConfigs[1].name",
    ),
}

_NC0 = "$.devicePlugin.nodeConfigs[0]"
#: rule ID -> (invalid case, JSON paths of its findings) for a rule broken only by a node config.
NODE_CONFIG_TRIGGERS: dict[str, tuple[str, list[str]]] = {
    "sharing-needs-two-replicas": (
        "node-config-replicas-one",
        [f"{_NC0}.sharing.timeSlicing.resources[0].replicas"],
    ),
    "nvidia-plugin-ignores-rename": (
        "node-config-nvidia-rename",
        [f"{_NC0}.sharing.timeSlicing.resources[0].rename"],
    ),
    "mig-needs-capable-gpu": ("node-config-mig-on-t4", [f"{_NC0}.migStrategy"]),
    # inherited values that break only with the node config's own: reported at its name
    "time-slicing-resources-exist": ("node-config-inherits-mig-sharing", [f"{_NC0}.name"]),
    "mig-strategy-matches-layout": ("node-config-inherits-mig-sharing", [f"{_NC0}.name"]),
    "node-config-names-unique": ("node-config-reserved-name", [f"{_NC0}.name"]),
    "workload-fits-node": ("node-config-job-too-big", ["$.workloads.examples[0].gpus"]),
    "workload-fits-sharing": ("node-config-refuses-shared-job", ["$.workloads.examples[0].gpus"]),
    "mps-needs-nvidia-plugin": ("node-config-mps-with-gpustack", [f"{_NC0}.sharing.mps"]),
}

_MPS = "$.devicePlugin.sharing.mps"
#: IDs of rules shared by time-slicing and MPS -> (MPS invalid case, JSON paths of findings).
MPS_TRIGGERS: dict[str, tuple[str, list[str]]] = {
    "sharing-needs-two-replicas": ("mps-replicas-one", [f"{_MPS}.resources[0].replicas"]),
    "workload-fits-sharing": ("mps-refuses-multi-gpu-job", ["$.workloads.examples[0].gpus"]),
}


def load(path: Path) -> Profile:
    doc = ProfileLoader().load(path, path.name, profiles_root(path))
    return Profile.from_dict(doc.data)


def valid_profiles() -> list[Path]:
    return discover([CASES / "valid", REPO_PROFILES])


def rule(rule_id: str) -> rules.Rule:
    found = rules.get(rule_id)
    assert isinstance(found, rules.Rule), rule_id
    return found


def test_every_rule_has_a_trigger() -> None:
    assert {r.id for r in rules.RULES} == set(TRIGGERS)
    assert set(NODE_CONFIG_TRIGGERS) | set(MPS_TRIGGERS) <= set(TRIGGERS)


def test_rule_ids_are_unique_kebab_case_and_name_their_function() -> None:
    ids = [d.id for d in rules.ALL]
    assert len(ids) == len(set(ids))
    for described in rules.ALL:
        assert rules.rule.ID_PATTERN.fullmatch(described.id), described.id
        assert described.summary and described.fix and described.section, described.id
    for r in rules.RULES:
        # one name per rule: grep finds the function from the ID a user sees
        assert r.check.__name__ == r.id.replace("-", "_"), r.id
        assert r.check.__module__.startswith("gpustack.profile.rules."), r.id


def test_per_node_config_is_declared_only_for_rules_a_node_config_can_break() -> None:
    # a node config replaces sharing, migStrategy and gpus.mig/perNode: rules reading only
    # those (and what derives from them) run per node config; the others never do
    per_node = {r.id for r in rules.RULES if r.per_node_config}
    sections = {r.section for r in rules.RULES if r.per_node_config}
    assert sections <= {"devicePlugin", "devicePlugin.sharing", "gpus"}
    assert "product-matches-architecture" not in per_node
    assert {r.id for r in rules.RULES if r.id.startswith(("mps-", "mig-"))} <= per_node


@pytest.mark.parametrize("rule_id", sorted(TRIGGERS))
def test_rule_fires_on_its_case(rule_id: str) -> None:
    case, path = TRIGGERS[rule_id]
    findings = list(rule(rule_id)(load(CASES / "invalid" / f"{case}.yaml")))
    assert [format_path(f.path) for f in findings] == [path]
    assert findings[0].message and findings[0].hint
    assert {f.rule for f in findings} == {rule_id}


@pytest.mark.parametrize("rule_id", sorted(NODE_CONFIG_TRIGGERS))
def test_rule_fires_on_a_node_config(rule_id: str) -> None:
    case, paths = NODE_CONFIG_TRIGGERS[rule_id]
    profile = load(CASES / "invalid" / f"{case}.yaml")
    findings = list(rule(rule_id)(profile))
    assert [format_path(f.path) for f in findings] == paths
    assert all(f.message and f.hint and f.rule == rule_id for f in findings)
    # what the rule says depends on the node configs (most say nothing without them)
    plain = replace(profile, device_plugin=replace(profile.device_plugin, node_configs=()))
    assert list(rule(rule_id)(plain)) != findings


@pytest.mark.parametrize("rule_id", sorted(MPS_TRIGGERS))
def test_rule_fires_on_mps(rule_id: str) -> None:
    case, paths = MPS_TRIGGERS[rule_id]
    findings = list(rule(rule_id)(load(CASES / "invalid" / f"{case}.yaml")))
    assert [format_path(f.path) for f in findings] == paths
    assert all(f.message and f.hint for f in findings)


MPS_SHARED = {
    "implementation": "nvidia",
    "sharing": {
        "mps": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
    },
}


def test_an_mps_shared_resource_is_advertised_and_fits_by_its_replicas() -> None:
    def findings(gpus: int, fail: bool | None = None) -> list[str]:
        mps = dict(MPS_SHARED["sharing"]["mps"])  # type: ignore[index]
        if fail is not None:
            mps["failRequestsGreaterThanOne"] = fail
        data = {
            "devicePlugin": {**MPS_SHARED, "sharing": {"mps": mps}},
            "gpus": {"perNode": 2},
            "workloads": {
                "examples": [{"name": "j", "resourceName": "nvidia.com/gpu.shared", "gpus": gpus}]
            },
        }
        profile = Profile.from_dict({"metadata": {"name": "x"}, **data})
        return [f.message for f in rules.rule_findings(profile)]

    assert findings(1) == []
    # MPS refuses more than one replica by default, unlike time-slicing
    assert findings(2) == [
        "MPS with failRequestsGreaterThanOne refuses pods that request more than one"
        " nvidia.com/gpu.shared"
    ]
    assert findings(8, fail=False) == []
    assert findings(9, fail=False) == [
        "the job requests 9 nvidia.com/gpu.shared, but a node offers 8 MPS replicas"
        " (gpus.perNode: 2), so it never schedules"
    ]


def test_mps_of_a_node_config_replaces_the_top_level_sharing() -> None:
    top = {
        "devicePlugin": {
            "implementation": "nvidia",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
        }
    }
    profile = _with_node_configs(top, {"name": "mps", "sharing": MPS_SHARED["sharing"]})
    assert rules.rule_findings(profile) == []
    view = node_config_profile(profile, profile.device_plugin.node_configs[0])
    assert view.device_plugin.time_slicing is None
    assert view.device_plugin.mps is not None
    assert derive.advertised_resources(view) == ("nvidia.com/gpu.shared",)


def test_mps_rename_is_refused_like_time_slicing_rename() -> None:
    mps = {"resources": [{"name": "nvidia.com/gpu", "replicas": 2, "rename": "nvidia.com/x"}]}
    data = {"devicePlugin": {"implementation": "nvidia", "sharing": {"mps": mps}}}
    profile = Profile.from_dict({"metadata": {"name": "x"}, **data})
    assert [format_path(f.path) for f in rule("nvidia-plugin-ignores-rename")(profile)] == [
        "$.devicePlugin.sharing.mps.resources[0].rename"
    ]


def test_a_node_config_may_not_take_the_mps_daemons_name() -> None:
    profile = _with_node_configs({}, {"name": "mps-control-daemon"})
    (finding,) = rule("node-config-names-unique")(profile)
    assert "nvidia-device-plugin-mps-control-daemon" in finding.message


def _with_node_configs(data: Mapping[str, Any], *configs: Mapping[str, Any]) -> Profile:
    dp = dict(data.get("devicePlugin", {}))
    return Profile.from_dict(
        {"metadata": {"name": "x"}, **data, "devicePlugin": {**dp, "nodeConfigs": list(configs)}}
    )


def test_an_inherited_problem_is_reported_once_at_the_top_level() -> None:
    broken = {
        "devicePlugin": {
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 1}]}}
        }
    }
    profile = _with_node_configs(broken, {"name": "a", "gpus": {"perNode": 2}}, {"name": "b"})
    assert [format_path(f.path) for f in rules.rule_findings(profile)] == [
        "$.devicePlugin.sharing.timeSlicing.resources[0].replicas"
    ]
    # a node config that replaces the broken value is reported at its own value, and one that
    # replaces it with a good value is not reported at all
    fixed = {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
    profile = _with_node_configs(
        broken,
        {"name": "a", "sharing": broken["devicePlugin"]["sharing"]},
        {"name": "b", "sharing": fixed},
    )
    assert [format_path(f.path) for f in rules.rule_findings(profile)] == [
        "$.devicePlugin.sharing.timeSlicing.resources[0].replicas",
        "$.devicePlugin.nodeConfigs[0].sharing.timeSlicing.resources[0].replicas",
    ]


def test_a_resource_of_any_node_config_is_advertised() -> None:
    job = {"workloads": {"examples": [{"name": "j", "resourceName": "nvidia.com/gpu.shared"}]}}
    shared = {
        "name": "shared",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 2}],
            }
        },
    }
    assert rules.rule_findings(_with_node_configs(job, shared)) == []
    (finding,) = rules.rule_findings(_with_node_configs(job, {**shared, "sharing": {}}))
    assert format_path(finding.path) == "$.workloads.examples[0].resourceName"


def test_node_config_profile_overrides_only_what_it_names() -> None:
    top = {
        "devicePlugin": {
            "migStrategy": "mixed",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
        },
        "gpus": {"product": "A100-SXM4-80GB", "perNode": 8, "mig": {"1g.10gb": 7}},
    }
    profile = _with_node_configs(
        top, {"name": "a"}, {"name": "b", "sharing": {}, "gpus": {"mig": {}}, "migStrategy": "none"}
    )
    same, other = (node_config_profile(profile, nc) for nc in profile.device_plugin.node_configs)
    assert same == replace(profile, device_plugin=replace(profile.device_plugin, node_configs=()))
    assert other.device_plugin.time_slicing is None
    assert (other.device_plugin.mig_strategy, other.gpus.mig, other.gpus.per_node) == (
        "none",
        (),
        8,
    )


@pytest.mark.parametrize("rule_id", [r.id for r in rules.RULES])
def test_rule_is_quiet_on_valid_profiles(rule_id: str) -> None:
    for path in valid_profiles():
        assert list(rule(rule_id)(load(path))) == [], path


def test_rules_need_a_compatible_driver_only_for_known_gpus() -> None:
    profile = Profile.from_dict({"metadata": {"name": "x"}, "driver": {"version": "450.80.02"}})
    assert rules.rule_findings(profile) == []


@pytest.mark.parametrize(
    "image,cuda",
    [
        ("docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "12.4"),
        ("pytorch/pytorch:2.9.0-cuda13.0-cudnn9-devel", "13.0"),
        ("ghcr.io/acme/train:2.6.0-cu126", "12.6"),
        ("ghcr.io/acme/train:torch2.7-cu118-py3", "11.8"),
        ("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "12.4"),
        ("docker.io/nvidia/cuda:11.8.0-runtime-ubuntu22.04", "11.8"),
        ("nvcr.io/nvidia/pytorch:24.05-py3", "12.4"),
        ("nvcr.io/nvidia/pytorch:25.08-py3", "13.0"),
        ("nvcr.io/nvidia/pytorch:19.01-py3", None),
        ("registry.example.com/ml/trainer:latest", None),
        ("registry.example.com:5000/trainer", None),
        ("docker.io/library/busybox:1.37", None),
        ("registry.example.com/cuda@sha256:" + "0" * 64, None),
    ],
)
def test_cuda_from_image(image: str, cuda: str | None) -> None:
    assert cuda_catalog.cuda_from_image(image) == cuda


def test_driver_versions_compare_numerically() -> None:
    assert catalog.parse_driver("580.105.08") > catalog.parse_driver("580.65.06")
    assert catalog.parse_driver("570.26") < catalog.parse_driver("570.133.20")


def test_cuda_table_is_ordered_and_floors_are_family_minimums() -> None:
    versions = sorted(cuda_catalog.CUDA_GA_DRIVER, key=lambda v: tuple(map(int, v.split("."))))
    drivers = [catalog.parse_driver(cuda_catalog.CUDA_GA_DRIVER[v]) for v in versions]
    assert drivers == sorted(drivers)
    for cuda in versions:
        floor = cuda_catalog.cuda_family_floor(cuda)
        assert floor is not None
        if not cuda.startswith("11."):  # 11.0 GA predates the minor-compat floor 450.80.02
            assert catalog.parse_driver(floor) <= catalog.parse_driver(
                cuda_catalog.CUDA_GA_DRIVER[cuda]
            )
    assert set(cuda_catalog.NGC_CUDA.values()) <= set(cuda_catalog.CUDA_GA_DRIVER)


def test_mig_layouts_of_every_product_fit_when_full() -> None:
    for product in catalog.PRODUCTS.values():
        for name, mig in product.mig.items():
            assert mig.compute <= product.compute_slices, (product.name, name)
            assert mig.memory <= product.memory_slices, (product.name, name)


@pytest.mark.parametrize(
    "profile,advertised",
    [
        ({}, ("nvidia.com/gpu",)),
        (
            {
                "devicePlugin": {"migStrategy": "mixed"},
                "gpus": {"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 2, "3g.40gb": 1}},
            },
            ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"),
        ),
        (
            {
                "devicePlugin": {
                    "sharing": {
                        "timeSlicing": {
                            "renameByDefault": True,
                            "resources": [{"name": "nvidia.com/gpu", "replicas": 2}],
                        }
                    }
                }
            },
            ("nvidia.com/gpu.shared",),
        ),
        (
            {
                "devicePlugin": {
                    "sharing": {
                        "timeSlicing": {
                            "resources": [
                                {"name": "nvidia.com/gpu", "replicas": 2, "rename": "nvidia.com/x"}
                            ]
                        }
                    }
                }
            },
            ("nvidia.com/x",),
        ),
        ({"devicePlugin": MPS_SHARED}, ("nvidia.com/gpu.shared",)),
    ],
)
def test_advertised_resources(profile: dict[str, object], advertised: tuple[str, ...]) -> None:
    model = Profile.from_dict({"metadata": {"name": "x"}, **profile})
    assert derive.advertised_resources(model) == advertised
    example = Profile.from_dict(
        {"metadata": {"name": "x"}, **profile, "workloads": {"examples": [{"name": "e"}]}}
    ).workloads.examples[0]
    assert derive.workload_resource(model, example) == advertised[0]


REPO = Path(__file__).parents[2]


def test_rules_reference_is_current() -> None:
    text = (REPO / reference.REFERENCE_FILE).read_text(encoding="utf-8")
    assert text == reference.render_reference(), (
        "docs/rules.md is stale; run: python -m gpustack.profile.rules.reference"
    )
    for described in rules.ALL:
        assert f"| `{described.id}` |" in text
        assert "\n" not in described.summary + described.fix


@pytest.mark.parametrize(("root", "code"), [("repo", 0), ("empty", 1)])
def test_rules_reference_check_fails_when_stale(tmp_path: Path, root: str, code: int) -> None:
    """Run from another folder, ``--check`` reads the repository's page; under an empty
    ``--root`` the page is missing, so stale."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpustack.profile.rules.reference",
            "--check",
            *(["--root", str(tmp_path)] if root == "empty" else []),
        ],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == code, proc.stderr
    assert ("stale" in proc.stderr) == bool(code)


MIRROR = "registry.corp.example:5000"


@pytest.mark.parametrize(
    ("sections", "flagged"),
    [
        # every image it names is on the mirror: the defaults left public are reported
        ({"toolkit": {"image": f"{MIRROR}/nvidia/k8s/container-toolkit"}},
         {"$.driver.image", "$.devicePlugin.image", "$.gpuFeatureDiscovery.image",
          "$.nodeFeatureDiscovery.image", "$.driver.upgrade.image",
          "$.driver.upgrade.kubectlImage"}),
        # cluster.imageRegistry rehomes every default image
        ({"cluster": {"imageRegistry": MIRROR},
          "toolkit": {"image": f"{MIRROR}/nvidia/k8s/container-toolkit"}}, set()),
        # not a mirror profile: it names a public image too
        ({"toolkit": {"image": f"{MIRROR}/nvidia/k8s/container-toolkit"},
          "devicePlugin": {"image": "ghcr.io/example/device-plugin"}}, set()),
        # only an example job's image from a private registry: no component image named
        ({"workloads": {"examples": [{"name": "a", "image": f"{MIRROR}/x/y:12.4-cuda12.4"}]}},
         set()),
        # day-2 operands off: nothing public left but what it names
        ({"driver": {"image": f"{MIRROR}/nvidia/driver", "upgrade": {"driverManager": False}},
          "toolkit": {"image": f"{MIRROR}/nvidia/k8s/container-toolkit"},
          "devicePlugin": {"image": f"{MIRROR}/gpustack-dev/gpustack-device-plugin"},
          "gpuFeatureDiscovery": {"enabled": False},
          "nodeFeatureDiscovery": {"enabled": False}}, set()),
    ],
)  # fmt: skip
def test_default_images_outside_mirror(sections: dict[str, Any], flagged: set[str]) -> None:
    """Issue 19 item 9: an air-gapped profile that names its mirror per image (no
    cluster.imageRegistry) is told which default images still come from public registries."""
    p = Profile.from_dict({"metadata": {"name": "m"}, **sections})
    got = {format_path(f.path) for f in rule("default-images-outside-mirror")(p)}
    assert got == flagged


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [("595.91.07", "13.2"), ("595.45.04", "13.2"), ("590.44.01", "13.1"), ("580.105.08", "13.0"),
     ("570.133.20", "12.8"), ("450.51.05", "11.0"), ("440.33.01", None)],
)  # fmt: skip
def test_native_cuda_of_a_driver(driver: str, cuda: str | None) -> None:
    assert cuda_catalog.native_cuda(driver) == cuda


def test_the_default_driver_runs_every_cuda_family_and_drops_pre_turing() -> None:
    """The v26.7.0 default (R595) runs CUDA 12.x and 13.x, and no longer Maxwell to Volta."""
    default = Profile.from_dict({"metadata": {"name": "d"}}).driver
    assert cuda_catalog.native_cuda(default.version) == "13.2"
    for family, floor in cuda_catalog.CUDA_FAMILY_FLOOR.items():
        if family >= 12:
            assert catalog.parse_driver(default.version) >= catalog.parse_driver(floor)
    dropped = {
        a.name
        for a in catalog.ARCHITECTURES.values()
        if a.last_driver_branch is not None and int(default.branch) > a.last_driver_branch
    }
    assert dropped == {"kepler", "maxwell", "pascal", "volta"}  # fmt: skip
