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

from gpustack.constructs import k8s, kube
from gpustack.constructs.example_job import (
    CHANNEL_CLAIM,
    COMPUTE_DOMAIN_ANNOTATIONS,
    COMPUTE_DOMAIN_API,
    GPU_CLAIM,
    ExampleJob,
    claim_template,
    compute_domain,
    container_claims,
)
from gpustack.constructs.labels import Identity, label_value
from gpustack.constructs.placement import Placement
from gpustack.constructs.runtime import is_simulated, workload_runtime_class
from gpustack.constructs.training import (
    CHECKPOINT_DIR,
    RENDEZVOUS_PORT,
    SCRIPT_DIR,
    SCRIPT_NAME,
    render_script,
)
from gpustack.profile.derive import workload_resource
from gpustack.profile.model import Profile

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
        sa_ident = Identity.placed(
            SERVICE_ACCOUNT, "examples", props.jobs[0].version, props.placement
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
        ident = Identity.placed(label_value(job.name), "examples", job.version, props.placement)
        volumes, mounts = self._volumes(job, ident)
        container = k8s.Container(
            name=TRAIN_CONTAINER if job.trains else CONTAINER,
            image=job.image,
            image_pull_policy="IfNotPresent",
            command=list(job.command),
            env=self._env(job),
            ports=[k8s.ContainerPort(container_port=RENDEZVOUS_PORT, name="rendezvous")]
            if job.multinode
            else None,
            resources=k8s.ResourceRequirements(
                limits=None if job.claim else {job.resource: job.gpus},
                claims=container_claims(job.claim, job.compute_domain),
            ),
            # PyTorch images write caches (kernels, compiled graphs) under the root filesystem.
            security_context=kube.unprivileged(read_only_root=False),
            volume_mounts=mounts,
        )
        if job.multinode:
            self._rendezvous(job, ident)
        pod = self._pod(job, container, volumes, self._claims(job, ident))
        kube.job(
            self,
            f"job-{job.name}",
            metadata=kube.object_meta(
                job.name,
                namespace=props.placement.namespace,
                labels=ident.workload_labels(),
                annotations={**ident.annotations(), **IMMUTABLE_ANNOTATIONS},
            ),
            spec=k8s.JobSpec(
                backoff_limit=props.backoff_limit,
                completion_mode="Indexed" if job.multinode else None,
                completions=job.nodes if job.multinode else None,
                parallelism=job.nodes if job.multinode else None,
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=ident.pod_labels()), spec=pod
                ),
            ),
        )

    def _env(self, job: ExampleJob) -> list[k8s.EnvVar] | None:
        """Simulated GPUs, and for a multinode job where rank 0 is and which rank this is."""
        env = [("GPUSTACK_SIMULATED", "true")] if self.props.simulated else []
        refs = None
        if job.multinode:
            # rank 0 is the pod of index 0: <job>-0, named in DNS through the headless Service
            ns = self.props.placement.namespace
            env += [
                ("MASTER_ADDR", f"{job.name}-0.{job.name}.{ns}.svc"),
                ("MASTER_PORT", str(RENDEZVOUS_PORT)),
            ]
            refs = {"NODE_RANK": f"metadata.annotations['{COMPLETION_INDEX}']"}
        return kube.env_list(env, field_refs=refs) or None

    def _volumes(
        self, job: ExampleJob, ident: Identity
    ) -> tuple[list[k8s.Volume], list[k8s.VolumeMount]]:
        """``/dev/shm`` in memory; for training, the script ConfigMap and a checkpoint folder.

        NCCL falls back to shared memory between GPUs without peer access, and DataLoader
        workers pass batches through it; the runtime's 64 MiB /dev/shm is too small for both."""
        shm = k8s.EmptyDirVolumeSource(medium="Memory", size_limit=SHM_SIZE)
        volumes = [k8s.Volume(name=SHM_VOLUME, empty_dir=shm)]
        mounts = [kube.mount(SHM_VOLUME, "/dev/shm")]
        if not job.trains:
            return volumes, mounts
        script = f"{job.name}-script"
        kube.config_map(
            self,
            f"script-{job.name}",
            metadata=self._meta(script, ident),
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
        return volumes, mounts

    def _pod(
        self,
        job: ExampleJob,
        container: k8s.Container,
        volumes: list[k8s.Volume],
        claims: list[k8s.PodResourceClaim],
    ) -> k8s.PodSpec:
        props = self.props
        return k8s.PodSpec(
            # a single-pod training container restarted in place resumes from its checkpoint
            # (the emptyDir outlives the container); the pods of a multinode job must restart
            # together, so a new pod replaces a failed one
            restart_policy="OnFailure" if job.trains and not job.multinode else "Never",
            subdomain=job.name if job.multinode else None,
            service_account_name=SERVICE_ACCOUNT,
            automount_service_account_token=False,
            # the DRA driver's CDI spec brings the claimed GPUs: no GPU runtime
            runtime_class_name=None if job.claim else props.runtime_class,
            security_context=kube.pod_security_context(),
            resource_claims=claims or None,
            containers=[container],
            volumes=volumes,
            **kube.pod_placement(props.placement, priority=False),
        )

    def _claims(self, job: ExampleJob, ident: Identity) -> list[k8s.PodResourceClaim]:
        """The pod's claims, each from a template: the GPUs' (synthesized here, one claim per
        pod) and the ComputeDomain's channel (its template is made by the ComputeDomain
        controller, named in the ComputeDomain synthesized here)."""
        out: list[k8s.PodResourceClaim] = []
        if job.claim is not None:
            template = f"{job.name}-gpus"
            self._raw(
                f"claim-template-{job.name}",
                "resource.k8s.io/v1",
                "ResourceClaimTemplate",
                template,
                ident,
                claim_template(job.claim, job.gpus),
            )
            out.append(k8s.PodResourceClaim(name=GPU_CLAIM, resource_claim_template_name=template))
        if job.compute_domain:
            channel = f"{job.name}-channel"
            self._raw(
                f"compute-domain-{job.name}",
                COMPUTE_DOMAIN_API,
                "ComputeDomain",
                job.name,
                ident,
                compute_domain(channel),
                COMPUTE_DOMAIN_ANNOTATIONS,
            )
            out.append(
                k8s.PodResourceClaim(name=CHANNEL_CLAIM, resource_claim_template_name=channel)
            )
        return out

    def _meta(self, name: str, ident: Identity) -> k8s.ObjectMeta:
        return kube.object_meta(
            name,
            namespace=self.props.placement.namespace,
            labels=ident.labels(),
            annotations=ident.annotations(),
        )

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
        kube.service(
            self,
            f"service-{job.name}",
            metadata=self._meta(job.name, ident),
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
            metadata=self._meta(f"{job.name}-peers", ident),
            spec=k8s.NetworkPolicySpec(
                pod_selector=peers,
                policy_types=["Ingress"],
                ingress=[
                    k8s.NetworkPolicyIngressRule(from_=[k8s.NetworkPolicyPeer(pod_selector=peers)])
                ],
            ),
        )
