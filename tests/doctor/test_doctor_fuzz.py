"""``gpustack doctor`` on mutated cluster states: a diagnosis, never a traceback (issue #21).

A recorded state is whatever kubectl, a script or a person wrote: a release with other field
types, a hand-trimmed file, a proxy's error page saved as JSON. Each case is one of the fixtures
(every failure the doctor knows, for both test profiles) with one or two values replaced by one
from a pool of plausible and implausible values, or removed, aimed mostly at the fields the
diagnosis reads. The diagnosis and both renderings must not raise, and the command line must
answer every case with its documented exit status. Seeded, so a failure names a reproducible
case; the count keeps it to seconds in CI (``GPUSTACK_FUZZ_CASES`` runs more).
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.doctor.report import diagnose
from gpustack.kube import state
from gpustack.profile.model import Profile
from gpustack.report import render_doctor
from tests.mutation import paths, set_field

HERE = Path(__file__).parent
FIXTURES = sorted(
    [*(HERE / "fixtures").glob("*.json"), *(HERE / "fixtures" / "dra").glob("*.json")]
)
PROFILES = (HERE / "profile.yaml", HERE / "profile-mig.yaml")
SEED = 20261204
CASES = int(os.environ.get("GPUSTACK_FUZZ_CASES", "0")) or 1500

VALUES: list[Any] = [
    None, 0, 1, -1, 8, 1.5, 1e300, True, False, "", "x", "1e0", "8", "Pending", "Running",
    "True", "False", "Ready", "NoSchedule", "Exists", "Equal", "In", "CrashLoopBackOff",
    "FailedScheduling", "Unhealthy", "Node", "Pod", "DaemonSet", "Event", "nvidia.com/gpu",
    "gpustack", "driver", "device-plugin", "container-toolkit", "gpu-1",
    [], {}, ["a"], [1], [None], [[1]], [{"a": 1}], {"a": 1}, {"a": [1]}, {"a": {"b": 1}},
    {"nvidia.com/gpu": [1]}, {"nvidia.com/gpu": {"a": 1}}, {"nvidia.com/gpu": "8"},
    {"waiting": "x"}, {"waiting": {"reason": [1]}}, {"terminated": 3}, {"running": {}},
    [{"key": [1], "operator": {}, "values": 3, "effect": "NoSchedule"}],
    [{"matchExpressions": 3}], [{"matchExpressions": [{"key": {}, "values": [[1]]}]}],
    [{"type": "Ready", "status": [1]}], [{"name": 1, "ready": "no", "state": 2}],
    # Dynamic Resource Allocation: claims, slices, classes and what a pod says of them
    "ResourceClaim", "ResourceSlice", "DeviceClass", "gpu.nvidia.com", "gpu-0", "single-gpu",
    "FailedResourceClaimCreation", "device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.attributes['gpu.nvidia.com'].productName == 1 && device.driver == 'x'",
    "device.attributes['gpu.nvidia.com'].x == '", "cannot allocate all claims",
    [{"name": "gpu", "resourceClaimName": [1]}], [{"name": "gpu", "resourceClaimTemplateName": 2}],
    [{"name": "gpu", "exactly": {"deviceClassName": 1, "selectors": "x", "count": "2"}}],
    [{"name": 1, "firstAvailable": [None, {"deviceClassName": "gpu.nvidia.com"}]}],
    [{"name": "gpu-0", "attributes": {"type": {"string": 1}}, "capacity": 3}],
    [{"name": "gpu-0", "attributes": {"type": []}}], [{"attributes": None}], {"string": "gpu"},
    {"devices": {"results": [{"driver": [1], "pool": {}, "device": None}]}}, {"name": 3},
    [{"cel": {"expression": 3}}], [{"cel": "x"}], {"driver": "gpu.nvidia.com", "devices": 1},
]  # fmt: skip

#: Fields the diagnosis reads, aimed at (set, whatever was there) in a listed object.
FIELDS = [
    "kind", "metadata", "metadata.name", "metadata.namespace", "metadata.labels",
    "metadata.labels.app.kubernetes.io/component", "spec", "spec.taints", "spec.nodeName",
    "spec.containers", "spec.initContainers", "spec.tolerations", "spec.nodeSelector",
    "spec.affinity", "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
    "spec.template.spec.tolerations", "status", "status.capacity", "status.allocatable",
    "status.conditions", "status.phase", "status.containerStatuses",
    "status.initContainerStatuses", "status.desiredNumberScheduled", "status.numberReady",
    "involvedObject", "involvedObject.kind", "involvedObject.name", "reason", "message",
    "lastTimestamp", "eventTime",
    # DRA: the pod's claims, a claim's requests and allocation, a slice's devices, a class
    "spec.resourceClaims", "status.resourceClaimStatuses", "spec.devices",
    "spec.devices.requests", "status.allocation", "status.allocation.devices.results",
    "spec.driver", "spec.pool", "spec.pool.name", "spec.selectors", "spec.nodeName",
]  # fmt: skip


@cache
def profiles() -> tuple[Profile, ...]:
    out = []
    for path in PROFILES:
        result = check_paths([path])
        assert result.ok
        out.append(result.profiles[0].profile)
    return tuple(out)


@cache
def seeds() -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in FIXTURES]


def mutate(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    items = doc.get("items")
    for _ in range(1 if rng.random() < 0.6 else 2):
        value = copy.deepcopy(rng.choice(VALUES))
        if rng.random() < 0.75 and isinstance(items, list) and items:
            item = rng.choice(items)
            if isinstance(item, dict):
                set_field(item, rng.choice(FIELDS), value)
            continue
        found = list(paths(doc))
        *parents, last = rng.choice(found)
        parent: Any = doc
        for key in parents:
            parent = parent[key]
        if rng.random() < 0.2 and isinstance(parent, dict):
            del parent[last]
        else:
            parent[last] = value
    return doc


def cases() -> Iterator[tuple[int, dict[str, Any]]]:
    rng = random.Random(SEED)
    for i in range(CASES):
        yield i, mutate(rng.choice(seeds()), rng)


def diagnose_everything(doc: Any) -> None:
    """Load ``doc`` as ``doctor --state`` does; diagnose and render it with each profile."""
    try:
        cluster = state.load(json.dumps(doc), "state.json")
    except state.StateError:
        return  # one line, exit 1: what the command does with it
    for profile in profiles():
        found = diagnose(cluster, profile)
        for fmt in ("text", "json"):
            render_doctor(found, cluster, fmt)


def test_mutated_states_never_raise() -> None:
    for i, doc in cases():
        try:
            diagnose_everything(doc)
        except Exception as exc:  # noqa: BLE001 - reported with the case that raised it
            raise AssertionError(
                f"case {i} (seed {SEED}) raised {type(exc).__name__}: {exc}\n"
                + json.dumps(doc)[:3000]
            ) from exc


def test_the_command_answers_mutated_states_with_its_exit_status(tmp_path: Path) -> None:
    """Through the command line (every 25th case): 0 healthy, 1 findings or a refused state,
    output without a traceback."""
    runner = CliRunner()
    for i, doc in cases():
        if i % 25:
            continue
        path = tmp_path / "state.json"
        path.write_text(json.dumps(doc))
        done = runner.invoke(main, ["doctor", "--profile", str(PROFILES[0]), "--state", str(path)])
        assert done.exit_code in (0, 1), (i, done.output, done.exception)
        assert done.exception is None or isinstance(done.exception, SystemExit), (i, done.output)
        assert "Traceback" not in done.output


#: Kinds of Dynamic Resource Allocation and the pods that use them: every value of theirs is
#: replaced in turn (not by chance), since their shapes nest deeper than the random paths reach.
#: The three states hold every DRA shape: slices, classes, templates, claims allocated and not,
#: a pod with and without claim statuses, and the controller's events.
DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass")
DRA_STATES = ("claim-no-match", "claim-all-taken", "claim-template-missing")
ODD = [None, "x", [], {}, [None]]


def test_every_value_of_the_dra_objects_may_be_wrong() -> None:
    checked = 0
    profile = profiles()[0]  # the claim diagnosis does not read the profile
    for fixture in DRA_STATES:
        doc = json.loads((HERE / "fixtures" / "dra" / f"{fixture}.json").read_text())
        items = doc["items"]
        for i, item in enumerate(items):
            spec = item.get("spec")
            if item.get("kind") not in DRA_KINDS and "resourceClaims" not in (spec or {}):
                continue
            for where in list(paths(item)):
                for value in ODD:
                    broken = copy.deepcopy(item)
                    parent: Any = broken
                    *parents, last = where
                    for key in parents:
                        parent = parent[key]
                    parent[last] = value
                    cluster = state.load(
                        json.dumps({**doc, "items": [*items[:i], broken, *items[i + 1 :]]})
                    )
                    try:
                        render_doctor(diagnose(cluster, profile), cluster, "text")
                    except Exception as exc:  # noqa: BLE001 - reported with the case
                        raise AssertionError(f"{fixture} item {i} {where} = {value!r}") from exc
                    checked += 1
    assert checked > 1000
