"""Version bumps touch only the files where the version lives; a label change recreates no pod.

A reviewer of a toolkit or driver bump should see the objects that run the new version change,
not every object of the component (the Namespace, ServiceAccounts, RuntimeClasses, ...). For
each component, the test bumps its version in every example profile, lays both stacks out as
the cluster folder, and checks that the files that changed are exactly the files the new
version appears in, all of them workloads (DaemonSets, Jobs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpustack.kube.manifests import Manifest
from gpustack.kube.pods import pod_sites
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.synth.layout import layout_cluster
from tests.constructs.conftest import Synth, merge

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted(p for p in (REPO / "profiles").glob("*.yaml"))


def _bump_image_tag(data: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    examples = data.get("workloads", {}).get("examples") or []
    if not examples:
        return None
    bumped = [dict(e) for e in examples]
    image = bumped[0].get("image", "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    name, _, tag = image.rpartition(":")
    new_tag = f"{tag}-rebuilt"
    bumped[0]["image"] = f"{name}:{new_tag}"
    return merge(data, {"workloads": {"examples": bumped}}), new_tag


#: component -> how to bump its version (None: the profile does not run that component).
BUMPS: dict[str, Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None]] = {
    "driver": lambda d: (
        (merge(d, {"driver": {"version": "580.999.01"}}), "580.999.01")
        if d.get("driver", {}).get("enabled", True)
        else None
    ),
    "container-toolkit": lambda d: (
        (merge(d, {"toolkit": {"version": "v9.9.9"}}), "v9.9.9")
        if d.get("toolkit", {}).get("enabled", True)
        else None
    ),
    "device-plugin": lambda d: (
        (merge(d, {"devicePlugin": {"version": "9.9.9"}}), "9.9.9")
        if d.get("devicePlugin", {}).get("enabled", True)
        else None
    ),
    "examples": _bump_image_tag,
}


def _files(synth: Synth, data: dict[str, Any]) -> dict[str, bytes]:
    out = layout_cluster(data["metadata"]["name"], synth(data))
    return {f.path: f.content for f in out.files}


@pytest.mark.parametrize("component", sorted(BUMPS))
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_a_version_bump_touches_only_the_objects_that_run_it(
    synth: Synth, path: Path, component: str
) -> None:
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    bumped = BUMPS[component](data)
    if bumped is None:
        pytest.skip(f"{path.name} does not run {component}")
    new_data, version = bumped
    before, after = _files(synth, data), _files(synth, new_data)
    changed = sorted(p for p in after if before.get(p) != after[p])
    assert sorted(before) == sorted(after), "a version bump adds or removes no file"
    # Exactly the files where the new version lives (an image tag, a label on the workload)
    # change; e.g. the device plugin waits for the toolkit with the toolkit's image.
    lives = sorted(p for p, content in after.items() if version in content.decode())
    assert changed == lives
    assert any(p.startswith(f"{component}/") for p in changed), f"{component} did not change"
    workloads = [p for p in changed if "/daemonset-" in p or "/job-" in p]
    assert changed == workloads, f"only workloads run a version, but {changed} changed"


def _relabel(data: dict[str, Any]) -> dict[str, Any]:
    """Every label value of the profile changed and one label added: a label-only change."""
    old = data["metadata"].get("labels", {})
    labels = {k: f"{v}-renamed" if v else "x" for k, v in old.items()}
    return merge(data, {"metadata": {"labels": {**labels, "team": "ml-platform-2"}}})


def _without_labels(manifest: dict[str, Any]) -> dict[str, Any]:
    return {**manifest, "metadata": {**manifest["metadata"], "labels": None}}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_a_label_only_change_recreates_no_pod(synth: Synth, path: Path) -> None:
    """``metadata.labels`` describe the objects: changing them changes each object's own
    labels and nothing else, so every pod template (what a DaemonSet, Deployment or Job
    compares to decide a rollout) stays byte-identical and no pod on any node is recreated."""
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    before = {(o.kind, o.name, o.manifest["metadata"].get("namespace")): o for o in synth(data)}
    after = {
        (o.kind, o.name, o.manifest["metadata"].get("namespace")): o for o in synth(_relabel(data))
    }
    assert sorted(before, key=str) == sorted(after, key=str)
    templates = 0
    for key, old in before.items():
        new = after[key].manifest
        assert new["metadata"]["labels"]["team"] == "ml-platform-2", key
        assert _without_labels(old.manifest) == _without_labels(new), key
        for site in pod_sites(Manifest(old.manifest, {}, str(path))):
            templates += 1
            for at in (site.meta_path, site.path):
                was, now = _at(old.manifest, at), _at(new, at)
                assert json.dumps(was, sort_keys=True) == json.dumps(now, sort_keys=True), key
    assert templates > 0


def _at(manifest: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        manifest = manifest[step]
    return manifest
