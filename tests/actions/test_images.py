"""``gpustack images``: for every example cluster, exactly the ``image:`` fields of its committed
folder in ``dist/`` (read here by a plain YAML walk, not by the command's code); under
``cluster.imageRegistry`` each moved image with its source; bad input one line, exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpustack.actions.images import ImagesOptions, run
from gpustack.cli import main

REPO = Path(__file__).resolve().parents[2]
CLUSTERS = REPO / "dist" / "clusters"
NAMES = sorted(p.name for p in CLUSTERS.iterdir() if p.is_dir())


def _images(value: Any) -> Iterator[str]:
    """Every string under an ``image`` key, anywhere in a document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "image" and isinstance(item, str):
                yield item
            yield from _images(item)
    elif isinstance(value, list):
        for item in value:
            yield from _images(item)


def _dist_images(name: str) -> set[str]:
    return {
        image
        for path in (CLUSTERS / name).rglob("*.yaml")
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        for image in _images(doc)
    }


@pytest.fixture(scope="module")
def fleet() -> dict[str, set[str]]:
    outcome = run(ImagesOptions((REPO / "profiles",)))
    return {c.name: {i.reference for i in c.images} for c in outcome.clusters}


def test_every_example_cluster_is_listed(fleet: dict[str, set[str]]) -> None:
    assert sorted(fleet) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_images_are_the_image_fields_of_dist(fleet: dict[str, set[str]], name: str) -> None:
    assert fleet[name] == _dist_images(name)
    assert fleet[name]  # every example pulls something: an empty walk would pass anything


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["images", *args])


def test_list_of_the_fleet_is_dist_as_a_whole() -> None:
    done = _invoke(str(REPO / "profiles"))
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines == sorted(set(lines), key=lambda line: line.split()[-1])
    assert {line.split()[-1] for line in lines} == set().union(*map(_dist_images, NAMES))


MIRROR = "registry.corp.example:5000/mirror"
PROFILE = f"""
apiVersion: gpustack.dev/v1alpha1
kind: Profile
metadata: {{name: mirrored}}
cluster:
  kubernetesVersion: "1.33"
  imageRegistry: {MIRROR}
toolkit:
  image: registry.other.example/tk/container-toolkit
gpus: {{product: L4, perNode: 1}}
"""


def test_image_registry_names_source_and_mirror(tmp_path: Path) -> None:
    (tmp_path / "mirrored.yaml").write_text(PROFILE)
    done = _invoke(str(tmp_path / "mirrored.yaml"), "--format", "json")
    assert done.exit_code == 0, done.output
    (cluster,) = json.loads(done.stdout)["clusters"]
    by_image = {i["image"]: i for i in cluster["images"]}
    driver = next(i for i in cluster["images"] if "/nvidia/driver:" in i["image"])
    assert driver["image"].startswith(f"{MIRROR}/nvidia/driver:")
    assert driver["mirror"] == driver["image"]
    assert driver["source"] == "nvcr.io/" + driver["image"].removeprefix(f"{MIRROR}/")
    assert any(u["object"] == "DaemonSet/nvidia-driver-daemonset" for u in driver["usedBy"])
    # named by the profile: pulled from where it says, nothing to mirror
    toolkit = by_image["registry.other.example/tk/container-toolkit:v1.20.0"]
    assert toolkit["source"] == toolkit["image"] and toolkit["mirror"] is None
    listed = _invoke(str(tmp_path / "mirrored.yaml")).stdout.splitlines()
    assert f"{driver['source']} {driver['image']}" in listed
    assert "registry.other.example/tk/container-toolkit:v1.20.0" in listed


def test_one_cluster_of_the_fleet() -> None:
    done = _invoke(str(REPO / "profiles"), "--cluster", "lab-1gpu", "--format", "json")
    assert done.exit_code == 0, done.output
    assert [c["name"] for c in json.loads(done.stdout)["clusters"]] == ["lab-1gpu"]


@pytest.mark.parametrize(
    ("files", "args", "said"),
    [
        ({}, ["missing.yaml"], "missing.yaml: no such file or folder"),
        (
            {"bad.yaml": PROFILE.replace("gpus:", "nope: 1\ngpus:")},
            ["bad.yaml"],
            "bad.yaml",
        ),
        ({"ok.yaml": PROFILE}, ["ok.yaml", "--cluster", "other"], "no cluster named 'other'"),
    ],
    ids=["missing path", "invalid profile", "unknown cluster"],
)
def test_bad_input_is_one_line_and_exit_1(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    args: list[str],
    said: str,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    done = _invoke(*args)
    assert done.exit_code == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: ") and said in line
