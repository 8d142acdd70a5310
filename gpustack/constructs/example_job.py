"""One example of ``workloads.examples``, resolved: what its Job runs (:class:`ExampleJob`) and,
through NVIDIA's DRA driver (``workloads.examples[].dra``), what it claims: the
ResourceClaimTemplate of its GPUs and, in a ComputeDomain, the domain whose IMEX channel it
claims. :mod:`gpustack.constructs.examples` makes the objects.

A claim names a DeviceClass and CEL selectors on the attributes the driver publishes, where a
device plugin's pod would name an extended resource and a count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpustack import dra_upstream
from gpustack.constructs import k8s
from gpustack.constructs.scripts import EXAMPLE_CHECK
from gpustack.constructs.training import command
from gpustack.profile.derive import claims_gpus
from gpustack.profile.model import Example

#: An example's ComputeDomain: its spec is immutable too, and its kind is served only once the
#: CRD in the same folder is (Argo CD applies that CRD's earlier sync wave first, but dry-runs
#: every object of the sync before: it must skip this one's while the kind is unknown).
COMPUTE_DOMAIN_ANNOTATIONS: Final = {
    "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true,Replace=true",
    "kustomize.toolkit.fluxcd.io/force": "enabled",
}


@dataclass(frozen=True)
class GpuClaim:
    """What an example claims from NVIDIA's DRA driver: a DeviceClass and CEL selectors on the
    attributes the driver publishes (:mod:`gpustack.dra_upstream`: ``productName`` of a GPU,
    ``profile`` of a MIG device)."""

    device_class: str
    selectors: tuple[str, ...]

    @classmethod
    def of(cls, product_name: str | None, mig_profile: str | None) -> GpuClaim:
        attrs = f"device.attributes['{dra_upstream.GPU_DRIVER}']"
        selectors = []
        if product_name:
            selectors.append(f"{attrs}.productName == '{product_name}'")
        if mig_profile:
            selectors.append(f"{attrs}.profile == '{mig_profile}'")
        device_class = (
            dra_upstream.MIG_DEVICE_CLASS if mig_profile else dra_upstream.GPU_DEVICE_CLASS
        )
        return cls(device_class, tuple(selectors))


#: The names of a pod's claims (``resourceClaims[].name``) and their requests.
GPU_CLAIM: Final = "gpus"
CHANNEL_CLAIM: Final = "channel"
#: The ComputeDomain kind, served by the DRA driver's CRD.
COMPUTE_DOMAIN_API: Final = (
    f"{dra_upstream.COMPUTE_DOMAIN_API_GROUP}/{dra_upstream.COMPUTE_DOMAIN_API_VERSION}"
)


def claim_template(claim: GpuClaim, gpus: int) -> dict[str, object]:
    """The body of a ResourceClaimTemplate for ``gpus`` devices of ``claim`` (one claim per
    pod made from it)."""
    request: dict[str, object] = {
        "deviceClassName": claim.device_class,
        "allocationMode": "ExactCount",
        "count": gpus,
    }
    if claim.selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in claim.selectors]
    return {"spec": {"spec": {"devices": {"requests": [{"name": GPU_CLAIM, "exactly": request}]}}}}


def compute_domain(channel: str) -> dict[str, object]:
    """The body of a ComputeDomain whose controller makes the channel's ResourceClaimTemplate
    ``channel`` (any number of nodes: ``numNodes: 0``)."""
    return {"spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": channel}}}}


def container_claims(claim: GpuClaim | None, in_domain: bool) -> list[k8s.ResourceClaim] | None:
    """The container's ``resources.claims``: the names of the pod's claims it uses."""
    names = [GPU_CLAIM] if claim else []
    if in_domain:
        names.append(CHANNEL_CLAIM)
    return [k8s.ResourceClaim(name=c) for c in names] or None


@dataclass(frozen=True)
class ExampleJob:
    """One resolved example: what to run and which extended resource to request.

    - ``name``: Job name (and ``app.kubernetes.io/name``).
    - ``image``: a PyTorch image with CUDA.
    - ``gpus``: how many units of ``resource`` to request.
    - ``resource``: the extended resource name the validation rules check
      (:func:`gpustack.profile.derive.workload_resource`): the example's ``resourceName``, else
      the plugin's, ``<name>.shared`` with ``renameByDefault``.
    - ``command``: container command: the example's, else ``python -c`` with the built-in check,
      or the training script's (:func:`gpustack.constructs.training.command`).
    - ``kind``: ``check``, ``train``, ``ddp`` or ``multinode-ddp``.
    - ``nodes``: pods of a ``multinode-ddp`` job (1 for the other kinds).
    - ``claim``: the GPUs by a ResourceClaimTemplate of NVIDIA's DRA driver instead of
      ``resource`` (:class:`GpuClaim`), ``None`` for none.
    - ``compute_domain``: the pods run in a ComputeDomain and claim its IMEX channel.
    """

    name: str
    image: str
    gpus: int
    resource: str
    command: tuple[str, ...]
    kind: str
    nodes: int
    claim: GpuClaim | None
    compute_domain: bool

    @classmethod
    def from_example(cls, example: Example, resource: str) -> ExampleJob:
        nodes = example.nodes if example.kind == "multinode-ddp" else 1
        default = (
            ("python", "-c", EXAMPLE_CHECK)
            if example.kind == "check"
            else tuple(command(example.kind, example.gpus, nodes))
        )
        dra = example.dra
        return cls(
            name=example.name,
            image=example.image,
            gpus=example.gpus,
            resource=resource,
            command=example.command or default,
            kind=example.kind,
            nodes=nodes,
            claim=(
                GpuClaim.of(dra.product_name, dra.mig_profile)
                if dra is not None and claims_gpus(example)
                else None
            ),
            compute_domain=dra is not None and dra.compute_domain,
        )

    @property
    def trains(self) -> bool:
        return self.kind != "check"

    @property
    def multinode(self) -> bool:
        return self.kind == "multinode-ddp"

    @property
    def version(self) -> str:
        """The image tag (``latest`` without one), for the version label."""
        ref = self.image.split("@", 1)[0]
        last = ref.rsplit("/", 1)[-1]
        return last.split(":", 1)[1] if ":" in last else "latest"
