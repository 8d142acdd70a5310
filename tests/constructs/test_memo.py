"""The render cache (gpustack.constructs.memo): a component whose props were rendered before in
this process is reused, and reusing never changes a byte of output.

The cache is only sound if a construct is a function of its props; the first test holds every
example profile to that by rendering each with a cache warmed by all the others.
"""

from __future__ import annotations

from dataclasses import replace

from gpustack.constructs import synthesize
from gpustack.constructs.memo import RenderCache
from gpustack.profile import components
from gpustack.profile.model import Profile


def manifests(profile: Profile, cache: RenderCache | None) -> list[tuple[str, object]]:
    return [(o.component, o.manifest) for o in synthesize(profile, cache=cache)]


def test_a_cached_rendering_equals_a_fresh_one(examples: list[Profile]) -> None:
    warm = RenderCache()
    for profile in reversed(examples):
        synthesize(profile, cache=warm)
    assert warm.misses > 0
    hits = warm.hits
    for profile in examples:
        assert manifests(profile, warm) == manifests(profile, None), profile.metadata.name
    assert warm.hits > hits  # the comparison above really read the cache


def test_a_renamed_cluster_is_rendered_from_the_cache(examples: list[Profile]) -> None:
    cache = RenderCache()
    first = examples[0]
    one = synthesize(first, cache=cache)
    misses = cache.misses
    other = replace(first, metadata=replace(first.metadata, name="another-cluster"))
    two = synthesize(other, cache=cache)
    enabled = len(list(components.enabled(first)))
    assert cache.misses == misses
    assert cache.hits == enabled
    assert [o.manifest for o in one] == [o.manifest for o in two]
    # the very same read-only objects: the layout serializes each once
    assert all(a.manifest is b.manifest for a, b in zip(one, two, strict=True))


def test_a_changed_value_renders_only_the_components_it_reaches(examples: list[Profile]) -> None:
    base = next(p for p in examples if p.node_feature_discovery.enabled)
    cache = RenderCache()
    synthesize(base, cache=cache)
    nfd = base.node_feature_discovery
    changed = replace(base, node_feature_discovery=replace(nfd, version=nfd.version + "-rc1"))
    hits, misses = cache.hits, cache.misses
    objects = synthesize(changed, cache=cache)
    assert cache.misses - misses == 1  # node-feature-discovery only
    assert cache.hits - hits == len(list(components.enabled(base))) - 1
    images = [
        c["image"]
        for o in objects
        if o.component == "node-feature-discovery" and o.kind == "DaemonSet"
        for c in o.manifest["spec"]["template"]["spec"]["containers"]
    ]
    assert images and all(i.endswith(nfd.version + "-rc1") for i in images)


def test_props_that_cannot_be_pickled_are_never_cached() -> None:
    cache = RenderCache()
    key = cache.key("common", "m:C", lambda: None)
    assert key is None
    cache.put(key, [{"kind": "X"}])
    assert cache.get(key) is None
    assert cache.hits == 0


def test_the_cache_keeps_the_most_recently_used() -> None:
    cache = RenderCache(max_entries=2)
    keys = [cache.key("c", "m:C", n) for n in range(3)]
    for n, k in enumerate(keys[:2]):
        cache.put(k, [{"n": n}])
    assert cache.get(keys[0]) == [{"n": 0}]  # now the most recent
    cache.put(keys[2], [{"n": 2}])
    assert cache.get(keys[1]) is None
    assert cache.get(keys[0]) == [{"n": 0}]
    assert cache.get(keys[2]) == [{"n": 2}]
