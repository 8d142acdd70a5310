"""Example GPU Jobs that prove the stack end to end (``workloads.examples``).

Each Job runs a small PyTorch check: CUDA is available, the GPUs' names, and a matmul on every
visible GPU that must match the CPU result. Jobs are immutable once created, so each carries the
annotations that make Argo CD (``Replace=true``) and Flux (``force: enabled``) delete and
recreate it when its spec changes, instead of failing the sync forever. ``ttlSecondsAfterFinished``
stays unset: a controller deleting the finished Job would make GitOps recreate it in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from cdk8s_plus_33 import k8s
from constructs import Construct

from gpustack.constructs import kube
from gpustack.constructs.labels import Identity, label_value
from gpustack.constructs.placement import Placement
from gpustack.constructs.runtime import is_simulated, workload_runtime_class
from gpustack.constructs.scripts import EXAMPLE_CHECK
from gpustack.profile.derive import workload_resource
from gpustack.profile.model import Example, Profile

SERVICE_ACCOUNT: Final = "gpustack-example"
CONTAINER: Final = "gpu-check"
#: A memory-backed /dev/shm for jobs with more than one GPU (NCCL between GPUs).
SHM_VOLUME: Final = "dshm"
SHM_SIZE: Final = "1Gi"
#: Delete and recreate changed Jobs instead of patching their immutable pod template.
IMMUTABLE_ANNOTATIONS: Final = {
    "argocd.argoproj.io/sync-options": "Replace=true",
    "kustomize.toolkit.fluxcd.io/force": "enabled",
}


@dataclass(frozen=True)
class ExampleJob:
    """One resolved example: what to run and which extended resource to request.

    - ``name``: Job name (and ``app.kubernetes.io/name``).
    - ``image``: a PyTorch image with CUDA.
    - ``gpus``: how many units of ``resource`` to request.
    - ``resource``: the extended resource name the validation rules check
      (:func:`gpustack.profile.derive.workload_resource`): the example's ``resourceName``, else
      the plugin's, ``<name>.shared`` with ``renameByDefault``.
    - ``command``: container command: the example's, else ``python -c`` with the built-in check.
    """

    name: str
    image: str
    gpus: int
    resource: str
    command: tuple[str, ...]

    @classmethod
    def from_example(cls, example: Example, resource: str) -> ExampleJob:
        return cls(
            name=example.name,
            image=example.image,
            gpus=example.gpus,
            resource=resource,
            command=example.command or ("python", "-c", EXAMPLE_CHECK),
        )

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
        k8s.KubeServiceAccount(
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
        ident = Identity(label_value(job.name), "examples", job.version, props.placement.labels)
        env = [("GPUSTACK_SIMULATED", "true")] if props.simulated else []
        container = k8s.Container(
            name=CONTAINER,
            image=job.image,
            image_pull_policy="IfNotPresent",
            command=list(job.command),
            env=kube.env_list(env) or None,
            resources=k8s.ResourceRequirements(
                limits={job.resource: k8s.Quantity.from_number(job.gpus)}
            ),
            # PyTorch images write caches (kernels, compiled graphs) under the root filesystem.
            security_context=kube.unprivileged(read_only_root=False),
            volume_mounts=[kube.mount(SHM_VOLUME, "/dev/shm")] if job.gpus > 1 else None,
        )
        # NCCL falls back to shared memory between GPUs without peer access; the runtime's
        # 64 MiB /dev/shm is too small for that.
        shm = k8s.Volume(
            name=SHM_VOLUME,
            empty_dir=k8s.EmptyDirVolumeSource(
                medium="Memory", size_limit=k8s.Quantity.from_string(SHM_SIZE)
            ),
        )
        k8s.KubeJob(
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
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=ident.workload_labels()),
                    spec=k8s.PodSpec(
                        restart_policy="Never",
                        service_account_name=SERVICE_ACCOUNT,
                        automount_service_account_token=False,
                        runtime_class_name=props.runtime_class,
                        security_context=kube.pod_security_context(),
                        containers=[container],
                        volumes=[shm] if job.gpus > 1 else None,
                        **kube.pod_placement(props.placement, priority=False),
                    ),
                ),
            ),
        )
