"""NVIDIA's DRA driver on the real control plane, where no kubelet runs: what its kubelet plugin
and its ComputeDomain controller would leave in the API, made by the test in their shape.

- On each node the DRA kubelet plugin is placed on, the GPU plugin publishes one ResourceSlice
  (driver ``gpu.nvidia.com``, pool = node name) with a ``gpu-<minor>`` device per GPU, or, on a
  GPU split with MIG, one ``gpu-<minor>-mig-<profile>-<profile id>-<start>`` device per MIG
  device (:mod:`gpustack.plugin.dra.slices`, from NVIDIA's ``deviceinfo.go`` and ``mig.go``); the
  ComputeDomain plugin publishes ``channel-0`` and ``daemon-0`` (``compute-domain.nvidia.com``).
- For each ComputeDomain the controller creates the channel ResourceClaimTemplate its pods name
  (NVIDIA's ``templates/compute-domain-workload-claim-template.tmpl.yaml``: one ``channel``
  request of the ``compute-domain-default-channel.nvidia.com`` class, with an opaque
  ``ComputeDomainChannelConfig`` naming the domain).

The scheduler then allocates the example claims itself: nothing here decides where a pod goes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Final

from gpustack import dra_upstream
from gpustack.constructs import dra_compute_domains
from gpustack.plugin.devices import Gpu
from gpustack.plugin.dra import slices
from gpustack.profile import catalog
from tests.e2e.controlplane import ControlPlane

#: The NVML name of each catalog product (what ``productName`` says).
NVML_NAMES: Final = {product: smi for smi, product in catalog.SMI_PRODUCT_NAMES.items()}
#: NVML's GPU-instance profile IDs (``nvidia-smi mig -lgip``) and the memory slices each profile
#: spans, by compute slices of the profile name (``<n>g``).
MIG_PROFILE_ID: Final = {1: 19, 2: 14, 3: 9, 4: 5, 7: 0}
MIG_MEMORY_SLICES: Final = {1: 1, 2: 2, 3: 4, 4: 4, 7: 8}
#: Where a GPU instance of that many memory slices may start (A100/H100 placements).
MIG_STARTS: Final = {1: range(7), 2: (0, 2, 4), 4: (0, 4), 8: (0,)}


def placements(layout: Mapping[str, int]) -> list[tuple[str, int]]:
    """(profile, placement start) of a GPU's MIG devices: largest first, each at a start whose
    memory slices are still free (a small search: a 3g.40gb must take slices 4-7 for a 2g.20gb
    and two 1g.10gb to fit, as on a real A100)."""
    wanted = [
        profile
        for profile, count in sorted(layout.items(), key=lambda kv: -int(kv[0].split("g.", 1)[0]))
        for _ in range(count)
    ]

    def place(i: int, taken: frozenset[int]) -> list[tuple[str, int]] | None:
        if i == len(wanted):
            return []
        size = MIG_MEMORY_SLICES[int(wanted[i].split("g.", 1)[0])]
        for start in MIG_STARTS[size]:
            span = set(range(start, start + size))
            if not taken & span:
                rest = place(i + 1, taken | span)
                if rest is not None:
                    return [(wanted[i], start), *rest]
        return None

    found = place(0, frozenset())
    if found is None:
        raise ValueError(f"MIG layout {dict(layout)} does not fit one GPU")
    return found


def mig_device(gpu: Gpu, node: slices.NodeDriver, profile: str, start: int) -> dict[str, Any]:
    """One MIG device as NVIDIA's GPU plugin publishes it: the parent's attributes (but ``type``
    and ``uuid``), ``parentUUID`` and ``profile``; named by profile, profile ID and start."""
    parent = slices.gpu_device(gpu, node)
    profile_id = MIG_PROFILE_ID[int(profile.split("g.", 1)[0])]
    name = dra_upstream.MIG_DEVICE_NAME.format(
        minor=gpu.minor,
        profile=profile.replace(".", "").lower(),
        profile_id=profile_id,
        placement_start=start,
    )
    attributes = dict(parent["attributes"])
    attributes.update(
        {
            "type": {"string": dra_upstream.TYPE_MIG},
            "uuid": {"string": f"MIG-{gpu.uuid[4:]}-{start}"},
            "parentUUID": {"string": gpu.uuid},
            "profile": {"string": profile},
        }
    )
    return {"name": name, "attributes": attributes}


def _gpus(node: str, product: str, count: int, memory_gb: int, cc: str) -> list[Gpu]:
    return [
        Gpu(
            index=i,
            uuid=f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{node}.{i}.e2e')}",
            minor=i,
            product=product,
            memory_mib=memory_gb * 1024,
            compute_capability=cc,
            numa_node=None,
            nvlink_peers=frozenset(),
            mig_enabled=False,
            mig_devices=(),
        )
        for i in range(count)
    ]


def _create(cp: ControlPlane, obj: Mapping[str, Any]) -> None:
    cp.kubectl("create", "-f", "-", stdin=json.dumps(obj))


def publish(cp: ControlPlane, profile: Any, node: str) -> None:
    """The ResourceSlices the DRA kubelet plugin on ``node`` publishes for ``profile``'s GPUs."""
    uid = cp.kubectl("get", "node", node, "-o", "jsonpath={.metadata.uid}")
    dra, gpus = profile.dra, profile.gpus
    product = catalog.PRODUCTS[gpus.product]
    arch = catalog.ARCHITECTURES[product.architecture]
    driver = slices.NodeDriver(driver_version=profile.driver.version, cuda_driver_version="13.0")
    if dra.gpus:
        found = _gpus(node, NVML_NAMES[product.name], gpus.per_node, product.memory_gb,
                      arch.compute_capability)  # fmt: skip
        body = slices.resource_slice(dra_upstream.GPU_DRIVER, node, uid, found, driver)
        if gpus.mig:
            body["spec"]["devices"] = [
                mig_device(g, driver, p, start)
                for g in found
                for p, start in placements(dict(gpus.mig))
            ]
        _create(cp, body)
    if dra.compute_domains:
        body = slices.resource_slice(dra_upstream.COMPUTE_DOMAIN_DRIVER, node, uid, [], driver)
        body["spec"]["devices"] = slices.compute_domain_devices()
        _create(cp, body)


#: The channel claim's class, and the API version of its opaque config.
CHANNEL_CLASS: Final = dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES[1]
CHANNEL_CONFIG_API: Final = f"{dra_compute_domains.CRD_GROUP}/{dra_compute_domains.CRD_VERSION}"


def play_controller(cp: ControlPlane, domains: list[Mapping[str, Any]]) -> None:
    """The channel ResourceClaimTemplate NVIDIA's controller creates for each ComputeDomain."""
    for cd in domains:
        meta = cd["metadata"]
        uid = cp.kubectl(
            "get", "computedomain", meta["name"], "-n", meta["namespace"],
            "-o", "jsonpath={.metadata.uid}",
        )  # fmt: skip
        _create(
            cp,
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {
                    "name": cd["spec"]["channel"]["resourceClaimTemplate"]["name"],
                    "namespace": meta["namespace"],
                },
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "channel",
                                    "exactly": {"deviceClassName": CHANNEL_CLASS},
                                }
                            ],
                            "config": [
                                {
                                    "requests": ["channel"],
                                    "opaque": {
                                        "driver": dra_upstream.COMPUTE_DOMAIN_DRIVER,
                                        "parameters": {
                                            "apiVersion": CHANNEL_CONFIG_API,
                                            "kind": "ComputeDomainChannelConfig",
                                            "domainID": uid,
                                            "allocationMode": "Single",
                                        },
                                    },
                                }
                            ],
                        }
                    }
                },
            },
        )


def claim_pod(cp: ControlPlane, namespace: str, name: str, selector: str) -> None:
    """A ResourceClaim ``name`` for one GPU of NVIDIA's class whose CEL ``selector`` holds, and a
    pod of the same name that uses it."""
    request = {
        "deviceClassName": dra_upstream.GPU_DEVICE_CLASS,
        "selectors": [{"cel": {"expression": selector}}],
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}},
    }
    container = {
        "name": "c",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"claims": [{"name": "gpu"}]},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
            "containers": [container],
        },
    }
    for obj in (claim, pod):
        _create(cp, obj)


def unsatisfiable_claim(cp: ControlPlane, namespace: str) -> str:
    """A pod claiming a GPU no node has (a B200 by productName); returns its name."""
    name = "e2e-no-such-gpu"
    attrs = f"device.attributes['{dra_upstream.GPU_DRIVER}']"
    claim_pod(cp, namespace, name, f"{attrs}.productName == 'NVIDIA B200'")
    return name
