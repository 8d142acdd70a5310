"""Per-cluster labels stamped after rendering (gpustack.constructs.stamp): a cluster that
differs from another only in its ``metadata.labels`` is not rendered again, and its objects are
exactly those of a rendering with its labels (what ``cache=None`` does).

Data-driven over every example profile, each with its own labels, with none, with a per-cluster
label, and with labels that clash with keys the constructs set themselves (rendered for real).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpustack.constructs import synthesize
from gpustack.constructs.memo import RenderCache
from gpustack.constructs.stamp import STAND_IN, STAND_IN_KEY, find_places, stamp
from gpustack.profile import components
from gpustack.profile.model import Profile

LABELS = {
    "own": None,
    "none": (),
    "cluster": (("fleet.example.com/cluster", "c0042"),),
    "several": (("a", "1"), ("zz.example.com/pool", "gpu-a"), ("app", "x")),
    # recommended label: the construct decides who wins, so the component is rendered for real
    "clash-recommended": (("app.kubernetes.io/part-of", "other"),),
    # the Namespace's Pod Security labels win over the profile's
    "clash-pod-security": (("pod-security.kubernetes.io/enforce", "baseline"),),
    # the ServiceMonitor's own labels lose to the profile's
    "clash-monitor": (("release", "other"),),
}


def relabel(profile: Profile, labels: tuple[tuple[str, str], ...] | None) -> Profile:
    if labels is None:
        return profile
    return replace(profile, metadata=replace(profile.metadata, labels=labels))


def objects(profile: Profile, cache: RenderCache | None) -> list[tuple[str, object]]:
    return [(o.component, o.manifest) for o in synthesize(profile, cache=cache)]


@pytest.mark.parametrize("labels", list(LABELS), ids=list(LABELS))
def test_stamped_labels_equal_a_real_rendering(examples: list[Profile], labels: str) -> None:
    cache = RenderCache()
    for profile in examples:
        relabelled = relabel(profile, LABELS[labels])
        assert objects(relabelled, cache) == objects(relabelled, None), profile.metadata.name


def test_a_cluster_that_differs_only_in_labels_is_not_rendered_again(
    examples: list[Profile],
) -> None:
    cache = RenderCache()
    first = examples[0]
    synthesize(relabel(first, (("fleet.example.com/cluster", "c0001"),)), cache=cache)
    misses, hits = cache.misses, cache.hits
    other = relabel(first, (("fleet.example.com/cluster", "c0002"),))
    objs = synthesize(other, cache=cache)
    assert cache.misses == misses
    assert cache.hits - hits == len(list(components.enabled(first)))
    stamped = [o for o in objs if "fleet.example.com/cluster" in o.manifest["metadata"]["labels"]]
    assert len(stamped) == len(objs)
    assert {o.manifest["metadata"]["labels"]["fleet.example.com/cluster"] for o in objs} == {
        "c0002"
    }


def test_a_stand_in_outside_a_label_map_is_not_stampable() -> None:
    key, value = STAND_IN[0]
    label_map = {"kind": "X", "metadata": {"labels": {"b": "1", key: value}}}
    assert find_places([label_map]) == {0: {"metadata": {"labels": None}}}
    stamped = stamp([label_map], {0: {"metadata": {"labels": None}}}, (("a", "2"),))
    assert stamped == [{"kind": "X", "metadata": {"labels": {"a": "2", "b": "1"}}}]
    assert list(stamped[0]["metadata"]["labels"]) == ["a", "b"]  # sorted, as cdk8s writes
    in_text = {"kind": "X", "data": {"x": f"labels: {STAND_IN_KEY}"}, **label_map}
    assert find_places([in_text]) is None
    alone = {"kind": "X", "metadata": {"labels": {key: value}}}
    assert find_places([alone]) is None


def test_a_clashing_label_is_not_stamped() -> None:
    key, value = STAND_IN[0]
    label_map = {"metadata": {"labels": {"b": "1", key: value}}}
    assert stamp([label_map], {0: {"metadata": {"labels": None}}}, (("b", "2"),)) is None
