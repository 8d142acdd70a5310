"""The rollout note in ``synth``'s summary: after a driver or MIG layout change, what the nodes
take only when told, and how (issue #24, item 4); nothing after other changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from gpustack.profile.derive import MIG_CONFIG_LABEL
from tests.test_synth_cli import PROFILE, synth

REPO = Path(__file__).resolve().parents[2]
MIG = REPO / "profiles" / "a100-mig-mixed.yaml"
DRIVER_DS = "driver/daemonset-nvidia-driver-daemonset.yaml"

#: case -> (the profile's text before, after, the kinds of note the write prints)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "driver bump": (
        PROFILE.format(name="alpha"),
        PROFILE.format(name="alpha").replace('"580.105.08"', '"570.195.03"'),
        ["driver"],
    ),
    "an example job renamed": (
        PROFILE.format(name="alpha"),
        PROFILE.format(name="alpha").replace("pytorch-smoke", "pytorch-check"),
        [],
    ),
    # the driver pod's template changes (the deploy labels it seeds), not its driver
    "the toolkit switched off": (
        PROFILE.format(name="alpha"),
        PROFILE.format(name="alpha") + "toolkit:\n  enabled: false\n",
        [],
    ),
    "the open kernel modules": (
        PROFILE.format(name="alpha"),
        PROFILE.format(name="alpha").replace(
            '"580.105.08"', '"580.105.08"\n  kernelModuleType: open'
        ),
        ["driver"],
    ),
    "MIG layout changed": (
        MIG.read_text(),
        MIG.read_text().replace("    1g.10gb: 2\n", "    1g.10gb: 1\n", 1),
        ["mig"],
    ),
    "MIG layout and driver": (
        MIG.read_text(),
        MIG.read_text()
        .replace("    1g.10gb: 2\n", "    1g.10gb: 1\n", 1)
        .replace('"595.91.07"', '"580.105.08"'),
        ["driver", "mig"],
    ),
}


@pytest.mark.parametrize(("before", "after", "kinds"), CASES.values(), ids=CASES.keys())
def test_the_summary_says_how_nodes_take_the_change(
    tmp_path: Path, before: str, after: str, kinds: list[str]
) -> None:
    profiles, out = tmp_path / "profiles", tmp_path / "dist"
    profiles.mkdir()
    (profiles / "c.yaml").write_text(before)
    first = synth(profiles, "--out", out)
    assert first.exit_code == 0, first.output
    assert not [line for line in first.stdout.splitlines() if line.startswith("rollout:")]
    (name,) = [p.name for p in (out / "clusters").iterdir()]
    old_ds = yaml.safe_load((out / "clusters" / name / DRIVER_DS).read_text())
    (profiles / "c.yaml").write_text(after)
    result = synth(profiles, "--out", out)
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stdout.splitlines() if line.startswith("rollout:")]
    assert [("driver" if "driver" in n.split(".")[0] else "mig") for n in notes] == kinds
    new_ds = yaml.safe_load((out / "clusters" / name / DRIVER_DS).read_text())
    for note in notes:
        assert f"in 1 cluster ({name})" in note
        if "driver changed" in note:
            versions = [
                d["metadata"]["labels"]["app.kubernetes.io/version"] for d in (old_ds, new_ds)
            ]
            if versions[0] != versions[1]:
                assert f"the driver changed ({versions[0]} → {versions[1]}) in" in note
            else:  # the same version, another driver (the open modules)
                assert "the driver changed in" in note
            assert new_ds["spec"]["updateStrategy"]["type"] == "OnDelete"
            selector = ",".join(
                f"{k}={v}" for k, v in sorted(new_ds["spec"]["selector"]["matchLabels"].items())
            )
            assert f"kubectl -n {new_ds['metadata']['namespace']} delete pod -l {selector} " in note
            assert "when its driver pod is deleted" in note
        else:
            # the configs whose layout changed: default (gpus.mig)
            assert f"labelled {MIG_CONFIG_LABEL}=default " in note
    doc = json.loads(synth(profiles, "--out", out, "--format", "json").stdout)
    assert doc["rollout"] == []  # nothing changed since


def test_a_new_cluster_has_no_rollout_note(tmp_path: Path) -> None:
    shutil.copy(MIG, tmp_path / "c.yaml")
    result = synth(tmp_path / "c.yaml", "--out", tmp_path / "dist")
    assert result.exit_code == 0, result.output
    assert "rollout:" not in result.stdout
