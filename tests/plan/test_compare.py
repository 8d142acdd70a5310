"""What a change of the rendered objects does on the nodes, read from real cluster folders with
one mutation each: the change kinds of issue #35, each checked by what the plan says."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from gpustack.kube.labels import VERSION_LABEL
from gpustack.plan.compare import compare_objects
from gpustack.plan.model import (
    EVICTS,
    GPU_DIP,
    PLACEMENT,
    RUNTIME_RESTART,
    WAITS_FOR_DELETE,
    ClusterPlan,
    Ref,
)
from tests.plan.objects import NS, Objects, both, cm, containers, ds

DRIVER = ds("nvidia-driver-daemonset")
TOOLKIT = ds("nvidia-container-toolkit-daemonset")
PLUGIN = ds("nvidia-device-plugin-daemonset")
PLUGIN_CONFIG = cm("nvidia-device-plugin-config")
NFD_CRD = Ref("CustomResourceDefinition", "", "nodefeatures.nfd.k8s-sigs.io")


def driver_bump(objs: Objects) -> None:
    obj = objs[DRIVER]
    for c in containers(obj):
        c["image"] = re.sub(r"595\.91\.07", "600.10.01", c["image"])
    for meta in (obj["metadata"], obj["spec"]["template"]["metadata"]):
        meta["labels"][VERSION_LABEL] = "600.10.01"


def driver_labels_only(objs: Objects) -> None:
    objs[DRIVER]["spec"]["template"]["metadata"]["labels"]["team"] = "ml"


def label_everything(objs: Objects) -> None:
    for obj in objs.values():
        obj["metadata"].setdefault("labels", {})["env"] = "production"


def toolkit_image(objs: Objects) -> None:
    for c in containers(objs[TOOLKIT]):
        c["image"] = c["image"].replace("v1.20.0", "v1.20.1")


def plugin_config(objs: Objects, checksum: bool) -> None:
    data = objs[PLUGIN_CONFIG]["data"]
    data["config.yaml"] = data["config.yaml"].replace("replicas: 4", "replicas: 8")
    if checksum:
        notes = objs[PLUGIN]["spec"]["template"]["metadata"]["annotations"]
        notes["gpustack.dev/config-checksum"] = "0" * 64


def remove(ref: Ref) -> Any:
    return lambda objs: objs.pop(ref)


def move_namespace(objs: Objects) -> None:
    obj = objs.pop(PLUGIN_CONFIG)
    obj["metadata"]["namespace"] = "gpu"
    objs[Ref("ConfigMap", "gpu", PLUGIN_CONFIG.name)] = obj


def drop_crd_version(objs: Objects) -> None:
    versions = objs[NFD_CRD]["spec"]["versions"]
    objs[NFD_CRD]["spec"]["versions"] = [v for v in versions if v["name"] != "v1alpha1"]


def drop_crd_field(objs: Objects) -> None:
    schema = objs[NFD_CRD]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"].pop("labels")


def mig_layout(objs: Objects) -> None:
    data = objs[cm("nvidia-mig-manager-config")]["data"]
    data["config.yaml"] = data["config.yaml"].replace("1g.10gb: 2", "1g.10gb: 1", 1)


def dra_plugin(objs: Objects) -> None:
    obj = objs[ds("nvidia-dra-driver-kubelet-plugin")]
    obj["spec"]["template"]["spec"]["priorityClassName"] = "other"


def pool_plugin(objs: Objects) -> None:
    obj = objs[ds("nvidia-device-plugin-whole-gpu")]
    containers(obj)[-1]["env"] = [{"name": "X", "value": "1"}]


def strategy_only(objs: Objects) -> None:
    objs[TOOLKIT]["spec"]["updateStrategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 2},
    }


def rename_plugin(objs: Objects) -> None:
    obj = objs.pop(PLUGIN)
    obj["metadata"]["name"] = "gpu-plugin"
    objs[ds("gpu-plugin")] = obj


def second_toolkit(objs: Objects) -> None:
    obj = copy.deepcopy(objs[TOOLKIT])
    obj["metadata"]["name"] = "toolkit-b"
    objs[ds("toolkit-b")] = obj


def rollout(plan: ClusterPlan, ref: Ref) -> Any:
    (found,) = [r for r in plan.rollouts if r.ref == ref]
    return found


def check_driver(plan: ClusterPlan) -> None:
    r = rollout(plan, DRIVER)
    assert (r.component, r.strategy) == ("driver", "OnDelete")
    assert r.version == ("595.91.07", "600.10.01")
    assert r.effects == (WAITS_FOR_DELETE, EVICTS)
    assert "image" in r.changed
    (step,) = plan.manual
    assert (step.kind, step.ref) == ("delete-pods", DRIVER)
    selector = "app.kubernetes.io/component=driver,app.kubernetes.io/name=nvidia-driver"
    assert step.commands[-1] == (
        f"kubectl -n {NS} delete pod -l {selector} --field-selector spec.nodeName=<node>"
    )
    assert [x.ref for x in plan.rollouts] == [DRIVER]


def check_driver_labels(plan: ClusterPlan) -> None:
    r = rollout(plan, DRIVER)
    assert r.changed == ("labels",)
    assert EVICTS not in r.effects  # the same driver: its new pod reinstalls nothing
    assert [s.kind for s in plan.manual] == ["delete-pods"]


def check_metadata(plan: ClusterPlan) -> None:
    assert plan.rollouts == () and plan.manual == () and plan.configs == ()
    assert DRIVER in plan.metadata_only and PLUGIN_CONFIG in plan.metadata_only
    assert not plan.disruptive


def check_toolkit(plan: ClusterPlan) -> None:
    r = rollout(plan, TOOLKIT)
    assert (r.strategy, r.max_unavailable, r.max_surge) == ("RollingUpdate", "1", "0")
    assert r.effects == (RUNTIME_RESTART,)
    assert plan.manual == ()


def check_config_stale(plan: ClusterPlan) -> None:
    (change,) = plan.configs
    assert (change.ref, change.keys) == (PLUGIN_CONFIG, ("config.yaml",))
    assert change.mounted_by == ((PLUGIN, False),)
    assert plan.rollouts == ()


def check_config_rolls(plan: ClusterPlan) -> None:
    (change,) = plan.configs
    assert change.mounted_by == ((PLUGIN, True),)
    r = rollout(plan, PLUGIN)
    assert (r.effects, r.changed) == ((GPU_DIP,), ("annotations",))


def check_prune(plan: ClusterPlan) -> None:
    (step,) = plan.manual
    assert (step.kind, step.ref) == ("prune", PLUGIN_CONFIG)
    assert step.commands == (f"kubectl -n {NS} delete configmap {PLUGIN_CONFIG.name}",)
    assert plan.removed == (PLUGIN_CONFIG,)


def check_move(plan: ClusterPlan) -> None:
    (step,) = plan.manual
    assert (step.kind, step.ref) == ("namespace-move", PLUGIN_CONFIG)
    assert "ConfigMap gpu/nvidia-device-plugin-config" in step.why


def check_crd_version(plan: ClusterPlan) -> None:
    (step,) = plan.manual
    assert (step.kind, step.ref) == ("crd-version-dropped", NFD_CRD)
    assert "v1alpha1" in step.why and "storedVersions" in step.commands[0]


def check_crd_field(plan: ClusterPlan) -> None:
    (step,) = plan.manual
    assert step.kind == "crd-fields-dropped"
    assert "spec.labels" in step.why


def check_mig(plan: ClusterPlan) -> None:
    assert plan.mig_configs == ("default",)
    assert plan.configs[0].ref == cm("nvidia-mig-manager-config")


def check_dra(plan: ClusterPlan) -> None:
    r = rollout(plan, ds("nvidia-dra-driver-kubelet-plugin"))
    assert (r.component, r.max_unavailable, r.effects) == ("dra-driver", "100%", (GPU_DIP,))
    assert r.changed == ("priorityClassName",)


def check_pool(plan: ClusterPlan) -> None:
    r = rollout(plan, ds("nvidia-device-plugin-whole-gpu"))
    assert "nvidia.com/device-plugin.config in (whole-gpu)" in r.nodes
    assert [x.ref for x in plan.rollouts] == [r.ref]


def check_in_place(plan: ClusterPlan) -> None:
    assert plan.rollouts == () and plan.in_place == (TOOLKIT,)


def check_rename(plan: ClusterPlan) -> None:
    (step,) = plan.manual
    assert (step.kind, step.ref) == ("rename", PLUGIN)
    assert "both run until then" in step.why
    assert plan.added == (ds("gpu-plugin"),)
    assert rollout(plan, ds("gpu-plugin")).strategy == "Create"  # next to the old one


def check_new_toolkit(plan: ClusterPlan) -> None:
    r = rollout(plan, ds("toolkit-b"))
    assert (r.strategy, r.changed, r.effects) == ("Create", ("new",), (RUNTIME_RESTART,))
    assert plan.added == (ds("toolkit-b"),) and plan.manual == ()


JOB = Ref("Job", NS, "pytorch-mig-1g")


def narrow_driver_nodes(objs: Objects) -> None:
    spec = objs[DRIVER]["spec"]["template"]["spec"]
    spec["nodeSelector"] = {**spec.get("nodeSelector", {}), "pool": "training"}


def check_placement(plan: ClusterPlan) -> None:
    r = rollout(plan, DRIVER)
    assert r.strategy == "OnDelete" and r.changed == ("nodeSelector",)
    assert PLACEMENT in r.effects and EVICTS not in r.effects


def job_image(objs: Objects) -> None:
    for c in containers(objs[JOB]):
        c["image"] += "-rebuilt"


def check_job_replaced(plan: ClusterPlan) -> None:
    assert plan.replaced == (JOB,) and plan.in_place == () and plan.rollouts == ()
    assert plan.disruptive


CASES: dict[str, tuple[str, Any, Any]] = {
    "example Job image": ("a100-mig-mixed", job_image, check_job_replaced),
    "driver placement narrowed": ("a100-mig-mixed", narrow_driver_nodes, check_placement),
    "driver bump": ("a100-mig-mixed", driver_bump, check_driver),
    "driver template label": ("a100-mig-mixed", driver_labels_only, check_driver_labels),
    "labels outside pod templates": ("a100-mig-mixed", label_everything, check_metadata),
    "toolkit image": ("a100-mig-mixed", toolkit_image, check_toolkit),
    "plugin config, no checksum": (
        "l4-inference-timeslicing",
        lambda o: plugin_config(o, False),
        check_config_stale,
    ),
    "plugin config and checksum": (
        "l4-inference-timeslicing",
        lambda o: plugin_config(o, True),
        check_config_rolls,
    ),
    "object removed": ("l4-inference-timeslicing", remove(PLUGIN_CONFIG), check_prune),
    "namespace move": ("l4-inference-timeslicing", move_namespace, check_move),
    "CRD version dropped": ("a100-mig-mixed", drop_crd_version, check_crd_version),
    "CRD field dropped": ("a100-mig-mixed", drop_crd_field, check_crd_field),
    "MIG layout": ("a100-mig-mixed", mig_layout, check_mig),
    "DRA plugin": ("h100-dra", dra_plugin, check_dra),
    "node pool plugin": ("l4-inference-timeslicing", pool_plugin, check_pool),
    "strategy only": ("a100-mig-mixed", strategy_only, check_in_place),
    "DaemonSet renamed": ("a100-mig-mixed", rename_plugin, check_rename),
    "a new toolkit": ("a100-mig-mixed", second_toolkit, check_new_toolkit),
}


@pytest.mark.parametrize(("cluster", "mutate", "check"), CASES.values(), ids=CASES.keys())
def test_the_plan_says_what_the_change_does(cluster: str, mutate: Any, check: Any) -> None:
    base, head = both(cluster, mutate)
    plan = compare_objects(cluster, base, head)
    assert plan.status == "changed"
    check(plan)


def test_no_change_is_no_plan() -> None:
    base, head = both("a100-mig-mixed", lambda _: None)
    plan = compare_objects("a100-mig-mixed", base, head)
    assert (plan.status, plan.disruptive) == ("unchanged", False)
