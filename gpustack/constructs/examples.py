"""Example GPU Jobs that prove the stack end to end (``workloads.examples``).

A ``check`` Job runs a small PyTorch check: CUDA is available, the GPUs' names, and a matmul on
every visible GPU that must match the CPU result. The training kinds (``train``, ``ddp``,
``multinode-ddp``) run a few steps of a tiny model from a script in a ConfigMap (rendered by
:mod:`gpustack.constructs.training`), checkpointing to an ``emptyDir``; ``multinode-ddp`` is an
Indexed Job whose pods find rank 0 through a headless Service (the pod's ``subdomain``) and may
reach each other through a NetworkPolicy of their own (the stack's policy denies ingress).
Every PyTorch pod gets a memory-backed ``/dev/shm`` (what ``gpustack lint``'s ``dev-shm``
rule asks of any PyTorch workload). Jobs are immutable once created, so each carries the
annotations that make Argo CD (``Replace=true``) and Flux (``force: enabled``) delete and
recreate it when its spec changes, instead of failing the sync forever. ``ttlSecondsAfterFinished``
stays unset: a controller deleting the finished Job would make GitOps recreate it in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack import dra_upstream
from gpustack.constructs import k8s, kube
from gpustack.constructs.labels import Identity, label_value
from gpustack.constructs.placement import Placement
from gpustack.constructs.runtime import is_simulated, workload_runtime_class
from gpustack.constructs.scripts import EXAMPLE_CHECK
from gpustack.constructs.training import (
    CHECKPOINT_DIR,
    RENDEZVOUS_PORT,
    SCRIPT_DIR,
    SCRIPT_NAME,
    command,
    render_script,
)
from gpustack.profile.derive import claims_gpus, workload_resource
from gpustack.profile.model import Example, Profile

SERVICE_ACCOUNT: Final = "gpustack-example"
CONTAINER: Final = "gpu-check"
TRAIN_CONTAINER: Final = "train"
#: A memory-backed /dev/shm for every job: DataLoader workers and NCCL between GPUs need more
#: than the runtime's 64 MiB.
SHM_VOLUME: Final = "dshm"
SHM_SIZE: Final = "1Gi"
#: Delete and recreate changed Jobs instead of patching their immutable pod template.
#: The pod annotation the Job controller sets to the pod's index (completionMode Indexed).
COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"
IMMUTABLE_ANNOTATIONS: Final = {
    "argocd.argoproj.io/sync-options": "Replace=true",
    "kustomize.toolkit.fluxcd.io/force": "enabled",
}
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


@dataclass(frozen=True)
class ExamplesProps:
    """Properties for :class:`Examples`.

    - ``jobs``: the examples (none: nothing is synthesized).
    - ``placement``: namespace, node selector, tolerations and pull secrets; the priority class is
      not used (a smoke test must not preempt real work).
    - ``runtime_class``: RuntimeClass for the pods: the GPU one; ``None`` when every device
      reaches containers through CDI, or with simulated GPUs (nodes have no NVIDIA runtime).
    - ``simulated``: the plugin's GPUs are simulated: the check then passes when the plugin
      allocated devices, since CUDA cannot run.
    - ``backoff_limit``: retries of a failed check. Default 1 (a broken stack fails fast); the
      construct's choice, not the profile's.
    """

    jobs: tuple[ExampleJob, ...]
    placement: Placement
    runtime_class: str | None
    simulated: bool
    backoff_limit: int = 1

    @classmethod
    def from_profile(cls, profile: Profile) -> ExamplesProps:
        simulated = is_simulated(profile)
        runtime_class = workload_runtime_class(profile, profile.device_plugin.device_list_strategy)
        return cls(
            jobs=tuple(
                ExampleJob.from_example(e, workload_resource(profile, e))
                for e in profile.workloads.examples
            ),
            placement=Placement.from_profile(profile),
            runtime_class=None if simulated else runtime_class,
            simulated=simulated,
        )


class Examples(Construct):
    """One Job per example, and their ServiceAccount.

    RBAC: none, and no API token: the check never calls the Kubernetes API.
    """

    def __init__(self, scope: Construct, id: str, props: ExamplesProps) -> None:
        super().__init__(scope, id)
        self.props = props
        if not props.jobs:
            return
        ns = props.placement.namespace
        # Shared by every Job: labelled with the first example's image tag.
        sa_ident = Identity(
            SERVICE_ACCOUNT, "examples", props.jobs[0].version, props.placement.labels
        )
        kube.service_account(
            self,
            "service-account",
            metadata=kube.object_meta(
                SERVICE_ACCOUNT,
                namespace=ns,
                labels=sa_ident.labels(),
                annotations=sa_ident.annotations(),
            ),
            automount_service_account_token=False,
        )
        for job in props.jobs:
            self._job(job)

    def _job(self, job: ExampleJob) -> None:
        props = self.props
        ns = props.placement.namespace
        ident = Identity(label_value(job.name), "examples", job.version, props.placement.labels)
        env = [("GPUSTACK_SIMULATED", "true")] if props.simulated else []
        refs = None
        if job.multinode:
            # rank 0 is the pod of index 0: <job>-0, named in DNS through the headless Service
            env += [
                ("MASTER_ADDR", f"{job.name}-0.{job.name}.{ns}.svc"),
                ("MASTER_PORT", str(RENDEZVOUS_PORT)),
            ]
            refs = {"NODE_RANK": f"metadata.annotations['{COMPLETION_INDEX}']"}
        # NCCL falls back to shared memory between GPUs without peer access, and DataLoader
        # workers pass batches through it; the runtime's 64 MiB /dev/shm is too small for both.
        volumes = [
            k8s.Volume(
                name=SHM_VOLUME,
                empty_dir=k8s.EmptyDirVolumeSource(medium="Memory", size_limit=SHM_SIZE),
            )
        ]
        mounts = [kube.mount(SHM_VOLUME, "/dev/shm")]
        if job.trains:
            script = f"{job.name}-script"
            kube.config_map(
                self,
                f"script-{job.name}",
                metadata=kube.object_meta(
                    script, namespace=ns, labels=ident.labels(), annotations=ident.annotations()
                ),
                data={SCRIPT_NAME: render_script(job.kind)},
            )
            volumes += [
                kube.config_map_volume("script", script),
                k8s.Volume(name="checkpoints", empty_dir=k8s.EmptyDirVolumeSource()),
            ]
            mounts += [
                kube.mount("script", SCRIPT_DIR, read_only=True),
                kube.mount("checkpoints", CHECKPOINT_DIR),
            ]
        container = k8s.Container(
            name=TRAIN_CONTAINER if job.trains else CONTAINER,
            image=job.image,
            image_pull_policy="IfNotPresent",
            command=list(job.command),
            env=kube.env_list(env, field_refs=refs) or None,
            ports=[k8s.ContainerPort(container_port=RENDEZVOUS_PORT, name="rendezvous")]
            if job.multinode
            else None,
            resources=self._resources(job),
            # PyTorch images write caches (kernels, compiled graphs) under the root filesystem.
            security_context=kube.unprivileged(read_only_root=False),
            volume_mounts=mounts,
        )
        if job.multinode:
            self._rendezvous(job, ident)
        pod_claims = self._claims(job, ident)
        kube.job(
            self,
            f"job-{job.name}",
            metadata=kube.object_meta(
                job.name,
                namespace=ns,
                labels=ident.workload_labels(),
                annotations={**ident.annotations(), **IMMUTABLE_ANNOTATIONS},
            ),
            spec=k8s.JobSpec(
                backoff_limit=props.backoff_limit,
                completion_mode="Indexed" if job.multinode else None,
                completions=job.nodes if job.multinode else None,
                parallelism=job.nodes if job.multinode else None,
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=ident.workload_labels()),
                    spec=k8s.PodSpec(
                        # a single-pod training container restarted in place resumes from its
                        # checkpoint (the emptyDir outlives the container); the pods of a
                        # multinode job must restart together, so a new pod replaces a failed one
                        restart_policy="OnFailure" if job.trains and not job.multinode else "Never",
                        subdomain=job.name if job.multinode else None,
                        service_account_name=SERVICE_ACCOUNT,
                        automount_service_account_token=False,
                        # the DRA driver's CDI spec brings the claimed GPUs: no GPU runtime
                        runtime_class_name=None if job.claim else props.runtime_class,
                        security_context=kube.pod_security_context(),
                        resource_claims=pod_claims or None,
                        containers=[container],
                        volumes=volumes,
                        **kube.pod_placement(props.placement, priority=False),
                    ),
                ),
            ),
        )

    def _resources(self, job: ExampleJob) -> k8s.ResourceRequirements:
        """The container's GPUs: its claims (``resources.claims`` names the pod's claims),
        else a limit on the device plugin's resource."""
        claims = [GPU_CLAIM] if job.claim else []
        if job.compute_domain:
            claims.append(CHANNEL_CLAIM)
        return k8s.ResourceRequirements(
            limits=None if job.claim else {job.resource: job.gpus},
            claims=[k8s.ResourceClaim(name=c) for c in claims] or None,
        )

    def _claims(self, job: ExampleJob, ident: Identity) -> list[k8s.PodResourceClaim]:
        """The pod's claims, each from a template: the GPUs' (synthesized here, one claim per
        pod) and the ComputeDomain's channel (its template is made by the ComputeDomain
        controller, named in the ComputeDomain synthesized here)."""
        out: list[k8s.PodResourceClaim] = []
        if job.claim is not None:
            template = f"{job.name}-gpus"
            request: dict[str, object] = {
                "deviceClassName": job.claim.device_class,
                "allocationMode": "ExactCount",
                "count": job.gpus,
            }
            if job.claim.selectors:
                request["selectors"] = [{"cel": {"expression": e}} for e in job.claim.selectors]
            self._raw(
                f"claim-template-{job.name}",
                "resource.k8s.io/v1",
                "ResourceClaimTemplate",
                template,
                ident,
                {
                    "spec": {
                        "spec": {"devices": {"requests": [{"name": GPU_CLAIM, "exactly": request}]}}
                    }
                },
            )
            out.append(k8s.PodResourceClaim(name=GPU_CLAIM, resource_claim_template_name=template))
        if job.compute_domain:
            channel = f"{job.name}-channel"
            self._raw(
                f"compute-domain-{job.name}",
                f"{dra_upstream.COMPUTE_DOMAIN_API_GROUP}/{dra_upstream.COMPUTE_DOMAIN_API_VERSION}",
                "ComputeDomain",
                job.name,
                ident,
                {"spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": channel}}}},
                COMPUTE_DOMAIN_ANNOTATIONS,
            )
            out.append(
                k8s.PodResourceClaim(name=CHANNEL_CLAIM, resource_claim_template_name=channel)
            )
        return out

    def _raw(
        self,
        id: str,
        api_version: str,
        kind: str,
        name: str,
        ident: Identity,
        body: dict[str, object],
        annotations: dict[str, str] | None = None,
    ) -> None:
        kube.api_object(
            self,
            id,
            api_version=api_version,
            kind=kind,
            name=name,
            namespace=self.props.placement.namespace,
            labels=ident.labels(),
            annotations={**ident.annotations(), **(annotations or {})},
            body=body,
        )

    def _rendezvous(self, job: ExampleJob, ident: Identity) -> None:
        """The headless Service that names each pod of a multinode job in DNS, and the
        NetworkPolicy that lets the job's pods reach each other (rendezvous, then NCCL or gloo
        on ports of their choosing)."""
        ns = self.props.placement.namespace
        meta = kube.object_meta(
            job.name, namespace=ns, labels=ident.labels(), annotations=ident.annotations()
        )
        kube.service(
            self,
            f"service-{job.name}",
            metadata=meta,
            spec=k8s.ServiceSpec(
                cluster_ip="None",
                # rank 0 must resolve before it is Ready: the others wait for it to rendezvous
                publish_not_ready_addresses=True,
                selector=ident.selector(),
                ports=[
                    k8s.ServicePort(
                        name="rendezvous",
                        port=RENDEZVOUS_PORT,
                        target_port=RENDEZVOUS_PORT,
                    )
                ],
            ),
        )
        peers = k8s.LabelSelector(match_labels=ident.selector())
        kube.network_policy(
            self,
            f"network-policy-{job.name}",
            metadata=kube.object_meta(
                f"{job.name}-peers",
                namespace=ns,
                labels=ident.labels(),
                annotations=ident.annotations(),
            ),
            spec=k8s.NetworkPolicySpec(
                pod_selector=peers,
                policy_types=["Ingress"],
                ingress=[
                    k8s.NetworkPolicyIngressRule(from_=[k8s.NetworkPolicyPeer(pod_selector=peers)])
                ],
            ),
        )
