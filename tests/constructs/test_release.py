"""A process that renders many clusters holds no more jsii objects than one that rendered one
(gpustack.constructs.release): neither in Python's registry nor in the Node kernel's table."""

from __future__ import annotations

from dataclasses import replace

import jsii
import pytest

from gpustack.constructs import synthesize
from gpustack.constructs.release import live_objects, release_pending, released
from gpustack.profile.model import Profile


def counts() -> tuple[int, int]:
    """Objects held once every finished rendering is released."""
    release_pending()
    return live_objects(), jsii.kernel.stats().object_count


def test_this_jsii_lets_gpustack_release_objects() -> None:
    assert live_objects() >= 0, "jsii's reference registry moved: update constructs/release.py"


def test_rendering_many_clusters_holds_no_more_objects(examples: list[Profile]) -> None:
    for profile in examples:  # modules imported, lazy statics created
        synthesize(profile, cache=None)
    before = counts()
    for i, profile in enumerate(examples * 2):
        labelled = replace(profile, metadata=replace(profile.metadata, labels=(("n", str(i)),)))
        synthesize(labelled, cache=None)
    assert counts() == before


def test_a_rendering_is_released_when_the_next_one_starts(examples: list[Profile]) -> None:
    """Deferred, not leaked: a one-shot process never pays for the release, and a process that
    renders on holds one rendering's objects, never two."""
    idle = counts()
    for profile in examples:
        synthesize(profile, cache=None)
        held = live_objects()
        assert held > idle[0], "the rendering's objects are kept until the next one"
        synthesize(profile, cache=None)
        assert live_objects() == held, "the previous rendering's objects were released"
    assert counts() == idle


def test_objects_are_released_when_a_rendering_fails() -> None:
    import cdk8s

    before = counts()
    with pytest.raises(RuntimeError), released():
        cdk8s.App()
        raise RuntimeError("a construct failed")
    assert counts() == before


def test_without_release_objects_pile_up(examples: list[Profile]) -> None:
    """The check above can fail: the same rendering outside ``released`` leaves objects."""
    import cdk8s

    before = counts()
    app = cdk8s.App()
    cdk8s.Chart(app, "c")
    after = counts()
    assert after[0] > before[0] and after[1] > before[1]


def test_a_release_can_be_taken_in_batches(
    examples: list[Profile], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm renderer's way (renderer.server.release_idle): renderings left pending pile up
    until told, then go a batch at a time, and all of them go."""
    from gpustack.constructs import release

    idle = counts()
    monkeypatch.setattr(release, "_at_start", False)
    for profile in examples[:3]:
        synthesize(profile, cache=None)
    waiting = release.pending()
    assert waiting > 100 and live_objects() > idle[0]
    assert release_pending(100) == 100
    assert release.pending() == waiting - 100
    while release_pending(100):
        pass
    assert release.pending() == 0
    assert counts() == idle
