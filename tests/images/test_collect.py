"""Every place an object names an image: containers of every list, every workload kind's pod
templates, and the environment variables that name a controller's pod image."""

from __future__ import annotations

import pytest

from gpustack.images.collect import uses
from gpustack.kube.manifests import parse

POD = """
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  initContainers: [{name: init, image: a/init:1}]
  containers: [{name: main, image: a/main:1}]
  ephemeralContainers: [{name: dbg, image: a/debug:1}]
"""
CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: a/cron:1}]}}}}}
"""
CONTROLLER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: controller}
spec:
  template:
    spec:
      containers:
        - name: c
          image: a/ctl:1
          env:
            - {name: IMAGE_NAME, value: a/daemon:1}
            - {name: OTHER, value: a/not-an-image:1}
"""
RAY = """
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: head, image: a/ray:1}]}}
  workerGroupSpecs:
    - groupName: gpu
      template: {spec: {containers: [{name: w, image: a/ray-gpu:1}]}}
"""
# no pods, and malformed values: nothing to pull, nothing raised
NONE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {image: a/in-data:1}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: odd}
spec:
  template:
    spec:
      containers: [{name: no-image}, {name: n, image: 7}, notacontainer]
      initContainers: {name: wrong-type, image: a/x:1}
"""


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            POD,
            [
                ("a/init:1", "Pod/debug", "spec.initContainers[0].image"),
                ("a/main:1", "Pod/debug", "spec.containers[0].image"),
                ("a/debug:1", "Pod/debug", "spec.ephemeralContainers[0].image"),
            ],
        ),
        (
            CRONJOB,
            [
                (
                    "a/cron:1",
                    "CronJob/nightly",
                    "spec.jobTemplate.spec.template.spec.containers[0].image",
                )
            ],
        ),
        (
            CONTROLLER,
            [
                ("a/ctl:1", "Deployment/controller", "spec.template.spec.containers[0].image"),
                (
                    "a/daemon:1",
                    "Deployment/controller",
                    "spec.template.spec.containers[0].env[0].value",
                ),
            ],
        ),
        (
            RAY,
            [
                (
                    "a/ray:1",
                    "RayCluster/ray (head)",
                    "spec.headGroupSpec.template.spec.containers[0].image",
                ),
                (
                    "a/ray-gpu:1",
                    "RayCluster/ray (gpu workers)",
                    "spec.workerGroupSpecs[0].template.spec.containers[0].image",
                ),
            ],
        ),
        (NONE, []),
    ],
    ids=["pod", "cronjob", "controller-env", "ray", "none"],
)
def test_uses(text: str, want: list[tuple[str, str, str]]) -> None:
    found = [(u.reference, u.where, u.field) for u in uses(parse(text, "t.yaml"))]
    assert found == want
