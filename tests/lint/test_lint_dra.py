"""``gpustack lint`` and Dynamic Resource Allocation: NVIDIA's documented claims lint clean, claims
are followed across files, each finding names the nearest fix, and the CEL reader judges only
what it can read.

NVIDIA's facts (DeviceClasses, attributes, kinds, capacities) are :mod:`gpustack.dra_upstream`;
the ComputeDomain controller's template: dra-driver-nvidia-gpu v0.4.1
cmd/compute-domain-controller/computedomain.go (``resourceClaimTemplateManager.Create(ctx,
cd.Namespace, cd.Spec.Channel.ResourceClaimTemplate.Name, cd)``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpustack import dra_upstream as upstream
from gpustack.checker import check_paths
from gpustack.kube import cel, claims, manifests
from gpustack.kube.pods import pod_sites
from gpustack.lint import misreads
from gpustack.lint.check import lint
from gpustack.lint.context import LintContext, from_profile, generic
from gpustack.lint.rules.claim_reference_known import EXTERNAL_ANNOTATION
from tests.lint.test_lint import context

HERE = Path(__file__).parent
REPO = HERE.parents[1]
NVIDIA = HERE / "dra" / "nvidia-examples.yaml"
DRA_PROFILES = ("h100-dra", "a100-dra-mig", "gb200-nvl72")


def profile_context(name: str) -> LintContext:
    return context(REPO / "profiles" / f"{name}.yaml")


def rules_of(text: str, ctx: LintContext) -> list[tuple[str | None, str | None]]:
    return [(i.rule, i.hint) for i in lint(["-"], ctx, stdin=text).issues]


@pytest.mark.parametrize("ctx", ["generic", "lint-cases"])
def test_nvidia_documented_claims_lint_clean(ctx: str) -> None:
    result = lint([str(NVIDIA)], generic() if ctx == "generic" else context())
    assert result.issues == (), [str(i) for i in result.issues]
    assert (result.objects, result.pods) == (7, 2)


@pytest.mark.parametrize("name", DRA_PROFILES)
def test_the_dra_examples_gpustack_synthesizes_define_and_use_claims(name: str) -> None:
    """The lead's example claims (dist/) are clean with their profile (test_lint.py lints every
    cluster folder); here: they are claims the rules really read."""
    folder = REPO / "dist" / "clusters" / name
    objs = [o for f in manifests.discover([str(folder)]) for o in manifests.read(f)]
    defined = claims.index(objs)
    used = [
        c for o in objs for site in pod_sites(o) for c in claims.pod_claims(site.spec, site.path)
    ]
    assert used, "no pod uses a claim"
    for c in used:
        assert c.kind is not None and c.target is not None
        assert defined.find(c.kind, c.target, "gpustack-system") is not None, c
    assert lint([str(folder)], profile_context(name)).ok


# --- across files --------------------------------------------------------------------------------

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: single-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: {namespace}}}
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      resourceClaims:
        - {{name: gpu, resourceClaimTemplateName: {template}}}
      containers:
        - name: train
          image: nvidia/cuda:12.4.1-base-ubuntu22.04
          resources:
            claims: [{{name: gpu}}]
"""


def test_a_template_of_another_file_is_found(tmp_path: Path) -> None:
    (tmp_path / "a-template.yaml").write_text(TEMPLATE)
    (tmp_path / "b-job.yaml").write_text(JOB.format(namespace="ml", template="single-gpu"))
    assert lint([str(tmp_path)], context()).ok
    (tmp_path / "b-job.yaml").write_text(JOB.format(namespace="ml", template="singel-gpu"))
    result = lint([str(tmp_path)], context())
    assert [(Path(i.file).name, i.line, i.rule) for i in result.issues] == [
        ("b-job.yaml", 10, "claim-reference-known")
    ]
    assert (result.issues[0].hint or "").startswith("did you mean single-gpu?")


@pytest.mark.parametrize(
    ("namespace", "template", "found"),
    [
        ("ml", "single-gpu", False),
        ("other", "single-gpu", True),  # the template is in ml, the pod in other
        ("ml", "made-elsewhere", True),
    ],
)
def test_templates_are_matched_by_namespace_and_name(
    namespace: str, template: str, found: bool
) -> None:
    text = TEMPLATE + "---\n" + JOB.format(namespace=namespace, template=template)
    assert bool(rules_of(text, context())) is found


def test_a_reference_is_judged_when_no_template_is_linted_at_all() -> None:
    """Once a kind was judged only where the files define one of it: a Job alone with a typo
    linted clean, and its pod waited for ever (issue #36)."""
    job = JOB.format(namespace="ml", template="made-elsewhere")
    assert [r for r, _ in rules_of(job, context())] == ["claim-reference-known"]


@pytest.mark.parametrize(
    ("annotation", "found"),
    [
        ("made-elsewhere", False),
        (" other , made-elsewhere ", False),  # a list, spaces around the names ignored
        ("made-elsewher", True),  # names are exact
        ("", True),
    ],
)
def test_the_annotation_declares_claims_made_apart(annotation: str, found: bool) -> None:
    note = f"    metadata:\n      annotations: {{{EXTERNAL_ANNOTATION}: '{annotation}'}}\n"
    job = JOB.format(namespace="ml", template="made-elsewhere").replace(
        "  template:\n", "  template:\n" + note
    )
    assert EXTERNAL_ANNOTATION in job
    assert bool(rules_of(job, context())) is found


@pytest.mark.parametrize(
    ("template_ns", "pod_ns", "found"),
    [
        (None, None, False),  # both in default
        ("default", None, False),
        (None, "default", False),
        ("ml", None, True),  # the pod lands in default, the template is in ml
        (None, "ml", True),
    ],
)
def test_a_manifest_without_a_namespace_is_in_default(
    template_ns: str | None, pod_ns: str | None, found: bool
) -> None:
    named = f"namespace: {template_ns}" if template_ns else ""
    template = TEMPLATE.replace("namespace: ml", named).replace(", }", "}")
    assert ("namespace" in template) is (template_ns is not None)
    job = JOB.format(namespace=pod_ns or "x", template="single-gpu")
    if pod_ns is None:
        job = job.replace(", namespace: x", "")
    assert bool(rules_of(template + "---\n" + job, context())) is found


def test_the_compute_domain_controller_makes_the_channel_template() -> None:
    domain = (
        "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\n"
        "metadata: {name: imex, namespace: ml}\n"
        "spec: {numNodes: 2, channel: {resourceClaimTemplate: {name: imex-channel}}}\n"
    )
    job = JOB.format(namespace="ml", template="imex-channel")
    assert rules_of(TEMPLATE + "---\n" + domain + "---\n" + job, context()) == []
    other_group = domain.replace("resource.nvidia.com", "example.com")
    assert [
        r for r, _ in rules_of(TEMPLATE + "---\n" + other_group + "---\n" + job, context())
    ] == ["claim-reference-known"]


# --- what the profile says -----------------------------------------------------------------------

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c}}
spec:
  devices:
    requests:
      - name: r
        exactly: {{deviceClassName: {cls}}}
"""


@pytest.mark.parametrize(
    ("profile", "cls", "hint"),
    [
        ("h100-dra", "compute-domain-default-channel.nvidia.com", "turn on dra.computeDomains"),
        ("gb200-nvl72", "gpu.nvidia.com", "turn on dra.gpus"),
        ("h100-dra", "vfio.gpu.nvidia.com", "PassthroughSupport"),
        ("h100-dra", "gpu.nvdia.com", "did you mean gpu.nvidia.com?"),
        ("h100-dra", "gpu-nvidia", "did you mean gpu.nvidia.com?"),
        ("gb200-nvl72", "compute-domain-channel.nvidia.com",
         "did you mean compute-domain-default-channel.nvidia.com?"),
        ("lab-1gpu", "mig.nvidia.cmo", "did you mean mig.nvidia.com?"),  # no DRA: NVIDIA's classes
    ],
)  # fmt: skip
def test_a_class_the_drivers_do_not_create_names_the_fix(profile: str, cls: str, hint: str) -> None:
    found = rules_of(CLAIM.format(cls=cls), profile_context(profile))
    assert [r for r, _ in found] == ["device-class-known"]
    assert hint in (found[0][1] or "")


@pytest.mark.parametrize(
    ("profile", "driver"),
    [("h100-dra", "the DRA driver in "), ("lab-1gpu", "NVIDIA's DRA driver creates")],
)
def test_the_message_names_whose_classes_count(profile: str, driver: str) -> None:
    result = lint(["-"], profile_context(profile), stdin=CLAIM.format(cls="gpu.nvdia.com"))
    assert [i.rule for i in result.issues] == ["device-class-known"]
    assert driver in result.issues[0].message


@pytest.mark.parametrize("profile", ["h100-dra", "gb200-nvl72", "lab-1gpu"])
@pytest.mark.parametrize("cls", ["rdma.example.com", "gpu.amd.com", "gpu.intel.com", "mig.example"])
def test_another_vendors_class_is_not_judged(profile: str, cls: str) -> None:
    assert rules_of(CLAIM.format(cls=cls), profile_context(profile)) == []


def test_dra_serving_nvidia_com_gpu_too_quiets_gpu_claim_and_limit() -> None:
    path = HERE / "cases" / "gpu-claim-and-limit" / "fail.yaml"
    assert not lint([str(path)], context()).ok
    extended = replace(context(), dra_extended_resource=True)
    assert lint([str(path)], extended).ok
    result = check_paths([REPO / "profiles" / "lab-1gpu.yaml"])
    no_dra = from_profile(result.profiles[0].profile, "lab-1gpu.yaml")
    assert not no_dra.dra_gpus and lint([str(path)], no_dra).ok


# --- the CEL reader ------------------------------------------------------------------------------

GPU = claims.DeviceKind(upstream.GPU_DRIVER, upstream.TYPE_GPU)
MIG = claims.DeviceKind(upstream.GPU_DRIVER, upstream.TYPE_MIG)
CHANNEL = claims.DeviceKind(upstream.COMPUTE_DOMAIN_DRIVER, "channel")


@pytest.mark.parametrize(
    ("kind", "expr", "says"),
    [
        (GPU, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'", None),
        (GPU, "device.attributes['gpu.nvidia.com'].productNmae == 'x'", "mean productName?"),
        (GPU, 'device.attributes["gpu.nvidia.com"]["uuids"] == "x"', "did you mean uuid?"),
        (GPU, "device.attributes['gpu.nvidia.com'].productName == 1", "(an int)"),
        (GPU, "1 == device.attributes['gpu.nvidia.com'].productName", "(an int)"),
        (GPU, "device.attributes['gpu.nvidia.com'].brand == true", "(a bool)"),
        (GPU, "device.attributes['gpu.nvidia.com'].driverVersion == '580.95.5'", "semver('1.2.3')"),
        (GPU, "device.attributes['gpu.nvidia.com'].driverVersion == semver('580.95.5')", None),
        (GPU, "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", "mig.nvidia.com"),
        (MIG, "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", None),
        (MIG, "device.attributes['gpu.nvidia.com'].parentUUID != ''", None),
        (MIG, "device.capacity['gpu.nvidia.com'].multiprocessors.compareTo(quantity('14')) > 0",
         None),
        (MIG, "device.capacity['gpu.nvidia.com'].memorySlice7.compareTo(quantity('1')) == 0", None),
        (GPU, "device.capacity['gpu.nvidia.com'].multiprocessors.compareTo(quantity('1')) > 0",
         "mig.nvidia.com"),
        (GPU, "device.capacity['gpu.nvidia.com'].memory == '80Gi'", "is a quantity"),
        (GPU, "device.attributes['resource.kubernetes.io'].pciBusID == '0000:18:00.0'", None),
        (GPU, "device.attributes['resource.kubernetes.io'].numaNode == 0", None),
        (GPU, "device.attributes['resource.kubernetes.io'].pciBusId == 'x'",
         "did you mean pciBusID?"),
        (GPU, "device.attributes['gpu.nvidia.co'].productName == 'x'", "under gpu.nvidia.com"),
        (CHANNEL, "device.attributes['compute-domain.nvidia.com'].id == 0", None),
        (CHANNEL, "device.attributes['compute-domain.nvidia.com'].id == '0'", "(a string)"),
        (CHANNEL, "device.attributes['gpu.nvidia.com'].productName == 'x'", "ask for that class"),
        (GPU, "device.attributes['dra.net'].ifName == 'eth1'", None),  # another vendor's domain
        (GPU, "device.attributes['gpu.nvidia.com'].productNmae == 'unclosed", None),  # unreadable
        (GPU, "'device.attributes[\"gpu.nvidia.com\"].nope' == 'x'", None),  # inside a string
        (GPU, "device.attributes['gpu.nvidia.com'].architecture.startsWith('Hop')", None),
    ],
)  # fmt: skip
def test_selectors_are_judged_only_where_read(
    kind: claims.DeviceKind, expr: str, says: str | None
) -> None:
    pub = claims.published(kind)
    assert pub is not None
    found = list(misreads.misreads(expr, kind, pub))
    if says is None:
        assert found == []
    else:
        assert len(found) == 1 and says in f"{found[0].message} ({found[0].hint})", found


def test_a_selector_longer_than_the_api_server_accepts_is_not_read() -> None:
    typo = "device.attributes['gpu.nvidia.com'].productNmae == 'x'"
    pub = claims.published(GPU)
    assert pub is not None
    assert list(misreads.misreads(typo, GPU, pub))
    padded = typo + " && true" * (cel.MAX_LENGTH // 8)
    assert len(padded) > cel.MAX_LENGTH and list(misreads.misreads(padded, GPU, pub)) == []


def test_class_kinds_come_from_nvidia_or_the_manifests() -> None:
    defined = claims.Defined(
        device_classes={
            "h100.example.com": (
                "device.driver == 'gpu.nvidia.com' && "
                "device.attributes['gpu.nvidia.com'].type == 'gpu'",
            ),
            "any-gpu.example.com": ("device.driver == 'gpu.nvidia.com'",),
        }
    )
    assert claims.class_kind("h100.example.com", defined) == GPU
    assert claims.class_kind("mig.nvidia.com", defined) == MIG
    assert claims.class_kind("compute-domain-default-channel.nvidia.com", defined) == CHANNEL
    wide = claims.class_kind("any-gpu.example.com", defined)
    assert wide == claims.DeviceKind(upstream.GPU_DRIVER)
    assert claims.published(wide) is not None
    assert claims.class_kind("rdma.example.com", defined) is None
    assert claims.published(claims.DeviceKind(upstream.GPU_DRIVER, upstream.TYPE_VFIO)) is None


def test_every_nvidia_class_selector_is_read() -> None:
    for c in upstream.DEVICE_CLASSES:
        kind = claims.kind_of([c.cel])
        assert kind is not None and kind.type is not None, c.name
        assert cel.refs(c.cel), c.name


def test_the_lint_cases_driver_creates_gpu_mig_and_compute_domain_classes() -> None:
    """What the cases rely on: tests/lint/profile.yaml turns on GPUs and ComputeDomains."""
    gpu_and_mig = (upstream.GPU_DEVICE_CLASS, upstream.MIG_DEVICE_CLASS)
    assert context().device_classes == gpu_and_mig + upstream.COMPUTE_DOMAIN_DEVICE_CLASSES
    assert context().dra_gpus and not context().dra_extended_resource
