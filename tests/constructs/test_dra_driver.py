"""NVIDIA's DRA driver (``dra``), held to NVIDIA's own rendering of it.

The reference is the GPU Operator v26.7.0's golden files
``internal/state/testdata/golden/gpucluster-dra-driver-full-spec.yaml`` and ``-gpus-only.yaml``
(from ``manifests/state-dra-driver/``, which follows the driver's chart
``deployments/helm/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml``, ``controller.yaml``,
``rbac-*.yaml``, ``deviceclass-*.yaml``, ``validatingadmissionpolicy.yaml``). Each fact below
names where it was read; the differences gpustack makes on purpose are in
:mod:`gpustack.constructs.dra_driver`'s docstring, and tested here too.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpustack import dra_upstream
from gpustack.constructs import device_plugin_props, dra_compute_domains, dra_driver
from gpustack.constructs.placement import deploy_label

from .conftest import Synth, container, env, find, kinds, merge, pod_spec, profile

POOL = {"nvidia.com/gpu.allocation": "dra"}
GPUS = profile(cluster={"kubernetesVersion": "1.34"}, dra={"enabled": True, "nodeSelector": POOL})
DOMAINS = profile(
    cluster={"kubernetesVersion": "1.34"},
    dra={"enabled": True, "gpus": False, "computeDomains": True},
)
BOTH = merge(GPUS, {"dra": {"computeDomains": True}})


def _plugin(objects: list[Any]) -> Any:
    return find(objects, "DaemonSet", dra_driver.KUBELET_PLUGIN)


def test_off_by_default(synth: Synth) -> None:
    objects = synth(profile(cluster={"kubernetesVersion": "1.34"}))
    assert not [o for o in objects if o.kind in ("DeviceClass", "ValidatingAdmissionPolicy")]


@pytest.mark.parametrize(
    ("doc", "containers", "classes"),
    [
        # chart: resources.gpus.enabled -> the "gpus" container, deviceclass-gpu/-mig.yaml
        (GPUS, ["gpus"], [dra_upstream.GPU_DEVICE_CLASS, dra_upstream.MIG_DEVICE_CLASS]),
        # resources.computeDomains.enabled -> "compute-domains", the two ComputeDomain classes
        (DOMAINS, ["compute-domains"], list(dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES)),
        (
            BOTH,
            ["compute-domains", "gpus"],
            [
                dra_upstream.GPU_DEVICE_CLASS,
                dra_upstream.MIG_DEVICE_CLASS,
                *dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES,
            ],
        ),
    ],
)
def test_parts_follow_the_switches(
    synth: Synth, doc: dict[str, Any], containers: list[str], classes: list[str]
) -> None:
    objects = synth(doc)
    assert [c["name"] for c in pod_spec(_plugin(objects))["containers"]] == containers
    assert [o.name for o in objects if o.kind == "DeviceClass"] == classes
    # the DeviceClass selectors are NVIDIA's, character for character
    by_name = {c.name: c.cel for c in dra_upstream.DEVICE_CLASSES}
    for o in objects:
        if o.kind == "DeviceClass":
            selector = {"cel": {"expression": by_name[o.name]}}
            assert o.manifest["spec"] == {"selectors": [selector]}
    drivers = [
        (k, n)
        for k, n in kinds(objects, "dra-driver")
        if k in ("Deployment", "CustomResourceDefinition")
    ]
    want = [("CustomResourceDefinition", f"computedomains.{dra_compute_domains.CRD_GROUP}"),
            ("CustomResourceDefinition", f"computedomaincliques.{dra_compute_domains.CRD_GROUP}"),
            ("Deployment", dra_driver.CONTROLLER)]  # fmt: skip
    assert sorted(drivers) == (sorted(want) if "compute-domains" in containers else [])


@pytest.mark.parametrize(
    ("name", "binary", "port", "liveness", "extra"),
    [
        # gpus -> gpu-kubelet-plugin, HEALTHCHECK_PORT 51516 (NVIDIA's default:
        # internal/state/dra_driver.go defaultGPUsHealthcheckPort, and the gpus-only golden, GPU
        # Operator v26.7.0; the full-spec golden's 52000 is its test's override), liveness every
        # 30 s
        ("gpus", "gpu-kubelet-plugin", 51516, 30, {}),
        # compute-domains: 51515 (defaultComputeDomainsHealthcheckPort), every 10 s,
        # GPU_CLIQUE_LABEL_ENABLED "true"
        ("compute-domains", "compute-domain-kubelet-plugin", 51515, 10,
         {"GPU_CLIQUE_LABEL_ENABLED": "true"}),
    ],
)  # fmt: skip
def test_plugin_containers_as_nvidia_renders_them(
    synth: Synth, name: str, binary: str, port: int, liveness: int, extra: dict[str, str]
) -> None:
    c = container(_plugin(synth(BOTH)), name)
    assert c["command"][0] == binary
    assert c["securityContext"] == {"privileged": True}
    want = {
        "NVIDIA_VISIBLE_DEVICES": "void",
        "CDI_ROOT": "/var/run/cdi",
        "NVIDIA_MIG_CONFIG_DEVICES": "all",
        "KUBELET_REGISTRAR_DIRECTORY_PATH": "/var/lib/kubelet/plugins_registry",
        "KUBELET_PLUGINS_DIRECTORY_PATH": "/var/lib/kubelet/plugins",
        "HEALTHCHECK_PORT": str(port),
        # chart: NVIDIA_DRIVER_ROOT is the host's driver root (the driver container's here)
        "NVIDIA_DRIVER_ROOT": "/run/nvidia/driver",
        **extra,
    }
    assert {k: v for k, v in env(c).items() if k in want} == want
    for probe, period, failures in (("startupProbe", 1, 600), ("livenessProbe", liveness, 3)):
        assert c[probe]["grpc"] == {"port": port, "service": "liveness"}
        assert (c[probe]["periodSeconds"], c[probe]["failureThreshold"]) == (period, failures)
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    # the DRA socket's folder must reach the host: Bidirectional, as in the chart
    assert mounts["/var/lib/kubelet/plugins"]["mountPropagation"] == "Bidirectional"
    assert mounts["/driver-root"]["mountPropagation"] == "HostToContainer"
    assert mounts["/driver-root"]["readOnly"] is True
    assert "/var/lib/kubelet/plugins_registry" in mounts and "/var/run/cdi" in mounts


@pytest.mark.parametrize(
    ("cluster", "root"),
    [
        ({}, "/var/lib/kubelet"),
        ({"runtime": {"distribution": "k0s"}}, "/var/lib/k0s/kubelet"),
        ({"runtime": {"distribution": "microk8s"}}, "/var/snap/microk8s/common/var/lib/kubelet"),
        ({"kubeletRootDir": "/data/kubelet/"}, "/data/kubelet"),
    ],
    ids=["default", "k0s", "microk8s", "kubeletRootDir"],
)
def test_plugin_sockets_are_where_the_clusters_kubelet_looks(
    synth: Synth, cluster: dict[str, Any], root: str
) -> None:
    """The registration socket goes to <kubelet root>/plugins_registry and the DRA socket below
    <kubelet root>/plugins, at the same path inside the container: a k0s or MicroK8s kubelet
    would never find a plugin in /var/lib/kubelet (the device plugin's folder moves the same way).
    """
    objects = synth(merge(BOTH, {"cluster": cluster}))
    plugin = _plugin(objects)
    volumes = {v["name"]: v for v in pod_spec(plugin)["volumes"]}
    for name in ("gpus", "compute-domains"):
        c = container(plugin, name)
        registry, plugins = f"{root}/plugins_registry", f"{root}/plugins"
        got = env(c)
        assert got["KUBELET_REGISTRAR_DIRECTORY_PATH"] == registry
        assert got["KUBELET_PLUGINS_DIRECTORY_PATH"] == plugins
        by_path = {m["mountPath"]: m for m in c["volumeMounts"]}
        for path in (registry, plugins):
            assert volumes[by_path[path]["name"]]["hostPath"]["path"] == path
    device_plugin_dirs = [
        v["hostPath"]["path"]
        for o in objects
        if o.component == "device-plugin" and o.kind == "DaemonSet"
        for v in pod_spec(o.manifest)["volumes"]
        if v.get("hostPath", {}).get("path", "").endswith("/device-plugins")
    ]
    assert device_plugin_dirs
    assert all(d == f"{root}/device-plugins" for d in device_plugin_dirs)


def test_driver_manager_finds_the_plugin(synth: Synth) -> None:
    """k8s-driver-manager v0.12.0 cmd/driver-manager/main.go evictKubeletPlugin: it pauses
    nvidia.com/gpu.deploy.dra-driver and waits for pods labelled
    app=nvidia-dra-driver-kubelet-plugin in its namespace to stop."""
    ds = _plugin(synth(GPUS))
    assert ds["spec"]["template"]["metadata"]["labels"]["app"] == "nvidia-dra-driver-kubelet-plugin"
    assert deploy_label("dra-driver") == "nvidia.com/gpu.deploy.dra-driver"
    terms = pod_spec(ds)["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    keys = {e["key"] for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"]}
    assert deploy_label("dra-driver") in keys


def test_dra_pool_and_device_plugin_never_share_a_node(synth: Synth) -> None:
    objects = synth(GPUS)
    assert pod_spec(_plugin(objects))["nodeSelector"] == {
        "nvidia.com/gpu.present": "true",
        **POOL,
    }
    plugin = pod_spec(find(objects, "DaemonSet", device_plugin_props.DAEMONSET))
    terms = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    for term in terms["nodeSelectorTerms"]:
        assert {"key": "nvidia.com/gpu.allocation", "operator": "NotIn", "values": ["dra"]} in (
            term["matchExpressions"]
        )


def test_rbac_is_nvidias_minus_what_gpustack_turns_off(synth: Synth) -> None:
    """rbac-controller.yaml / rbac-compute-domain-daemon.yaml as NVIDIA renders them at v26.7.0,
    without the MPS Role (MPSSupport gate off), the operator validator's Role, and leader
    election's leases (one replica, LEADER_ELECTION_ENABLED=false); the kubelet plugins get
    only the calls their code makes (see dra_driver.KUBELET_PLUGIN_RULES)."""
    objects = synth(BOTH)
    rules = {
        (o.kind, o.name): {
            (r["apiGroups"][0], res, v)
            for r in o.manifest["rules"]
            for res in r["resources"]
            for v in r["verbs"]
        }
        for o in objects
        if o.kind in ("ClusterRole", "Role") and o.component == "dra-driver"
    }
    plugin = rules[("ClusterRole", dra_driver.KUBELET_PLUGIN_CLUSTER_ROLE)]
    assert ("resource.k8s.io", "resourceslices", "create") in plugin
    assert ("resource.k8s.io", "resourceclaims", "get") in plugin
    assert ("", "nodes", "patch") not in plugin  # only the ComputeDomain plugin labels nodes
    domains = rules[("ClusterRole", dra_driver.KUBELET_PLUGIN_CD_CLUSTER_ROLE)]
    assert ("resource.nvidia.com", "computedomains", "watch") in domains
    assert ("", "nodes", "patch") in domains
    controller = rules[("ClusterRole", dra_driver.CONTROLLER_CLUSTER_ROLE)]
    assert ("resource.k8s.io", "resourceclaimtemplates", "create") in controller
    assert not {g for g in controller if g[1] == "leases"}
    assert not {g for r in rules.values() for g in r if g[1] == "deployments"}
    namespaced = rules[("Role", dra_driver.CONTROLLER_ROLE)]
    assert ("apps", "daemonsets", "create") in namespaced
    daemon = rules[("ClusterRole", dra_driver.DAEMON_CLUSTER_ROLE)]
    assert ("resource.nvidia.com", "computedomaincliques", "create") in daemon
    # without ComputeDomains the plugin reads no ComputeDomain
    gpus_only = synth(GPUS)
    role = find(gpus_only, "ClusterRole", dra_driver.KUBELET_PLUGIN_CLUSTER_ROLE)
    assert not [r for r in role["rules"] if "resource.nvidia.com" in r["apiGroups"]]
    assert not [o for o in gpus_only if o.name == dra_driver.KUBELET_PLUGIN_CD_CLUSTER_ROLE]


def test_slice_policy_names_the_plugins_account(synth: Synth) -> None:
    """validatingadmissionpolicy.yaml: only the plugin's own ServiceAccount is restricted, to
    its node's slices (the node name from the token's node-name extra)."""
    objects = synth(GPUS)
    policy = find(objects, "ValidatingAdmissionPolicy", dra_driver.SLICE_POLICY)["spec"]
    (condition,) = policy["matchConditions"]
    assert (
        "system:serviceaccount:gpustack-system:nvidia-dra-driver-kubeletplugin"
        in condition["expression"]
    )
    assert policy["matchConstraints"]["resourceRules"][0]["resources"] == ["resourceslices"]
    binding = find(objects, "ValidatingAdmissionPolicyBinding", dra_driver.SLICE_POLICY)
    assert binding["spec"] == {"policyName": dra_driver.SLICE_POLICY, "validationActions": ["Deny"]}


def test_extended_resource_name_only_when_asked(synth: Synth) -> None:
    off = find(synth(GPUS), "DeviceClass", dra_upstream.GPU_DEVICE_CLASS)["spec"]
    on_doc = merge(
        GPUS, {"cluster": {"kubernetesVersion": "1.36"}, "dra": {"extendedResourceName": True}}
    )
    on = find(synth(on_doc), "DeviceClass", dra_upstream.GPU_DEVICE_CLASS)["spec"]
    assert "extendedResourceName" not in off
    assert on["extendedResourceName"] == "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("doc", "file"),
    [
        ({}, "driver-ready"),  # gpustack's driver, no toolkit
        ({"toolkit": {"enabled": True}}, "toolkit-configured"),  # never toolkit-ready: no plugin
    ],
)
def test_plugin_waits_for_a_file_written_on_its_node(
    synth: Synth, doc: dict[str, Any], file: str
) -> None:
    base = merge(GPUS, {"toolkit": {"enabled": False}})
    (init,) = pod_spec(_plugin(synth(merge(base, doc))))["initContainers"]
    assert f"/run/nvidia/validations/{file}" in init["command"][-1]


def test_claim_examples(synth: Synth) -> None:
    doc = merge(
        BOTH,
        {
            "workloads": {
                "examples": [
                    {"name": "one", "dra": {"productName": "NVIDIA H100 80GB HBM3"}},
                    {"name": "multi", "kind": "multinode-ddp",
                     "dra": {"gpus": False, "computeDomain": True}},
                ]
            }
        },
    )  # fmt: skip
    objects = synth(doc)
    template = find(objects, "ResourceClaimTemplate", "one-gpus")
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == dra_upstream.GPU_DEVICE_CLASS
    assert request["exactly"]["selectors"] == [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName"
                               " == 'NVIDIA H100 80GB HBM3'"}}
    ]  # fmt: skip
    one = pod_spec(find(objects, "Job", "one"))
    assert one["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "one-gpus"}]
    assert one["containers"][0]["resources"] == {"claims": [{"name": "gpus"}]}
    assert "runtimeClassName" not in one  # the claim's CDI spec brings the GPU
    multi = pod_spec(find(objects, "Job", "multi"))
    assert multi["resourceClaims"] == [
        {"name": "channel", "resourceClaimTemplateName": "multi-channel"}
    ]
    assert multi["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
    domain = find(objects, "ComputeDomain", "multi")
    assert domain["spec"]["channel"]["resourceClaimTemplate"]["name"] == "multi-channel"
