"""``claim-device-untainted`` reports only what the linted files prove: every device the request
could get kept out by a taint it does not tolerate (device taints, KEP-5055; the API's words are
in :mod:`gpustack.kube.device_taints`)."""

from __future__ import annotations

import pytest

from gpustack.lint.context import generic
from tests.lint.test_lint_dra import rules_of

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-1-slice}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-1
  pool: {name: gpu-1, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      taints: [{key: gpu.nvidia.com/gpu-lost, effect: NoSchedule}]
    - name: gpu-1
      taints: [{key: gpu.nvidia.com/gpu-lost, effect: NoSchedule}]
---
"""
RULE = """\
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata: {{name: drain}}
spec:
  deviceSelector: {selector}
  taint: {{key: example.com/maintenance, effect: {effect}}}
---
"""
TEMPLATE = """\
apiVersion: resource.k8s.io/{version}
kind: ResourceClaimTemplate
metadata: {{name: single-gpu, namespace: ml}}
spec:
  spec:
    devices:
      requests:
        - name: gpu
{request}
---
apiVersion: v1
kind: Pod
metadata: {{name: infer, namespace: ml}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: single-gpu}}]
  containers:
    - name: server
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      resources: {{claims: [{{name: gpu}}]}}
"""
V1 = "          exactly:\n            deviceClassName: gpu.nvidia.com\n"
V1BETA1 = "          deviceClassName: gpu.nvidia.com\n"


def _tolerating(shape: str, toleration: str) -> str:
    indent = shape.splitlines()[-1].split("d")[0]
    return f"{shape}{indent}tolerations: [{toleration}]\n"


def _rule(selector: str = "{driver: gpu.nvidia.com}", effect: str = "NoSchedule") -> str:
    return RULE.format(selector=selector, effect=effect)


@pytest.mark.parametrize(
    ("objects", "request_", "found"),
    [
        (SLICE, V1, True),
        (SLICE, _tolerating(V1, "{key: gpu.nvidia.com/gpu-lost, operator: Exists}"), False),
        (SLICE, _tolerating(V1, "{operator: Exists}"), False),  # every taint
        (SLICE, _tolerating(V1, "{key: gpu.nvidia.com/gpu-lost, effect: NoExecute}"), True),
        (SLICE, V1BETA1, True),  # v1beta1: the request itself
        (SLICE, _tolerating(V1BETA1, "{operator: Exists}"), False),
        # no slice linted: a rule over the whole driver decides, one over a pool cannot
        (_rule(), V1, True),
        (_rule("{}"), V1, True),
        (_rule("{driver: gpu.nvidia.com, pool: gpu-1}"), V1, False),
        (_rule("{driver: other.example.com}"), V1, False),
        (_rule(effect="None"), V1, False),
        (_rule(), _tolerating(V1, "{key: example.com/maintenance, operator: Exists}"), False),
        ("", V1, False),  # nothing about devices linted
    ],
)
def test_only_what_the_files_prove_is_reported(objects: str, request_: str, found: bool) -> None:
    version = "v1beta1" if request_.startswith(V1BETA1) else "v1"
    text = objects + TEMPLATE.format(version=version, request=request_)
    rules = [r for r, _ in rules_of(text, generic())]
    assert "load" not in rules  # every case is YAML the linter reads
    assert ("claim-device-untainted" in rules) is found


def test_a_pod_of_another_namespace_does_not_use_the_template() -> None:
    """The template is in ml; a pod of another namespace gets claim-reference-known instead."""
    text = SLICE + TEMPLATE.format(version="v1", request=V1).replace(
        "name: infer, namespace: ml", "name: infer, namespace: research"
    )
    assert [r for r, _ in rules_of(text, generic())] == ["claim-reference-known"]
