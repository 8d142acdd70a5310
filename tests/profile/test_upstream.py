"""Each default image is the one its named GPU Operator release ships, and the profile model and
the conformance page read it from that one declaration."""

from __future__ import annotations

from dataclasses import replace

from gpustack.conformance.readme import render_versions
from gpustack.profile.model import Profile, upstream
from gpustack.profile.model.upstream import PINS, SHIPPED, unshipped


def test_every_default_is_shipped_by_its_release() -> None:
    assert unshipped() == []


def test_a_bumped_tag_with_the_old_release_is_refused() -> None:
    bumped = replace(upstream.MIG_MANAGER, tag="v0.16.0")
    assert unshipped((upstream.TOOLKIT, bumped)) == [
        "MIG manager: GPU Operator v26.7.0 ships"
        " nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0, not v0.16.0"
        " (name the release that ships the new tag, and record it in SHIPPED)"
    ]


def test_a_release_nobody_recorded_is_refused() -> None:
    moved = replace(upstream.DCGM_EXPORTER, upstream="v27.1.0")
    assert unshipped((moved,), SHIPPED) == [
        "DCGM exporter: GPU Operator v27.1.0 is not in SHIPPED (record what that release ships)"
    ]


def test_a_release_that_ships_the_bumped_tag_is_accepted() -> None:
    bumped = replace(upstream.MIG_MANAGER, tag="v0.16.0", upstream="v26.9.0")
    shipped = {**SHIPPED, "v26.9.0": {bumped.image: "v0.16.0"}}
    assert unshipped((bumped,), shipped) == []


def test_the_profile_defaults_are_the_pins() -> None:
    p = Profile.from_dict({"metadata": {"name": "defaults"}})
    assert (p.driver.image, p.driver.version) == upstream.DRIVER.ref
    assert p.toolkit.image_ref() == ":".join(upstream.TOOLKIT.ref)
    assert p.gpu_feature_discovery.image_ref() == ":".join(upstream.GPU_FEATURE_DISCOVERY.ref)
    assert p.driver.upgrade.image_ref() == ":".join(upstream.DRIVER_MANAGER.ref)
    assert p.driver.upgrade.kubectl_image == ":".join(upstream.KUBECTL.ref)
    assert p.mig_manager.image_ref() == ":".join(upstream.MIG_MANAGER.ref)
    assert p.node_feature_discovery.image_ref() == ":".join(upstream.NODE_FEATURE_DISCOVERY.ref)
    assert p.dcgm_exporter.image_ref() == ":".join(upstream.DCGM_EXPORTER.ref)
    assert p.dra.image_ref() == ":".join(upstream.DRA_DRIVER.ref)
    nvidia = Profile.from_dict(
        {"metadata": {"name": "n"}, "devicePlugin": {"implementation": "nvidia"}}
    )
    assert nvidia.device_plugin.image_ref() == ":".join(upstream.DEVICE_PLUGIN.ref)


def test_the_page_names_each_pin_with_its_release() -> None:
    page = render_versions()
    for pin in PINS:
        assert f"| {pin.row} | `{pin.reference()}` | GPU Operator {pin.upstream} |" in page
    assert "`nvcr.io/nvidia/driver:595.91.07-<osTag>` | GPU Operator v26.7.0" in page
