"""``gpustack init``: a valid first profile, its schemas, and nothing clobbered."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.profile import catalog
from gpustack.profile.model.upstream import GPU_OPERATOR_KUBERNETES
from gpustack.profile.schema import BASE_SCHEMA_ID, render
from gpustack.scaffold import products
from tests.k8s_schema import assert_valid


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def init(*args: str) -> Result:
    return CliRunner().invoke(main, ["init", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    ("product", "per_node", "cuda"),
    [("L4", 2, "12.6"), ("H100-SXM5-80GB", 8, "12.6"), ("B200-SXM-180GB", 8, "12.8")],
)
def test_writes_a_valid_profile_and_its_schemas(
    here: Path, product: str, per_node: int, cuda: str
) -> None:
    result = init("gpu-east", "--product", product, "--gpus-per-node", str(per_node))
    assert result.exit_code == 0, result.output
    path = here / "profiles" / "gpu-east.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schemas/profile.schema.json\n")
    checked = check_paths([path])
    assert checked.ok, [str(i) for i in checked.issues]
    profile = checked.profiles[0].profile
    assert (profile.name, profile.gpus.product, profile.gpus.per_node) == (
        "gpu-east",
        product,
        per_node,
    )
    (job,) = yaml.safe_load(text)["workloads"]["examples"]
    assert job["gpus"] == 1 and f"cuda{cuda}" in job["image"]  # one GPU, not the whole node
    # the release is written out, and it is the newest the pinned GPU Operator supports
    assert yaml.safe_load(text)["cluster"] == {"kubernetesVersion": GPU_OPERATOR_KUBERNETES[-1]}
    from gpustack.constructs import synthesize  # starts Node: only here

    objects = synthesize(profile)
    assert_valid([o.manifest for o in objects], profile.cluster.kubernetes_version)
    assert any(o.kind == "Job" for o in objects)
    assert (here / "schemas" / "profile.schema.json").read_text() == render()
    assert (here / "schemas" / "profile-base.schema.json").is_file()
    assert sorted(p.name for p in (here / "profiles").iterdir()) == ["gpu-east.yaml"]


@pytest.mark.parametrize(("asked", "code"), [(8, 0), (9, 1)])
def test_example_gpus_at_most_a_node(here: Path, asked: int, code: int) -> None:
    result = CliRunner().invoke(
        main,
        ["init", "big", "--product", "H100-SXM5-80GB", "--gpus-per-node", "8"]
        + ["--example-gpus", str(asked)],
    )
    assert result.exit_code == code, result.output
    path = here / "profiles" / "big.yaml"
    if code == 0:
        (job,) = yaml.safe_load(path.read_text())["workloads"]["examples"]
        assert job["gpus"] == asked
    else:
        assert "workload-fits-node" in result.output and not path.exists()
        # the option that asked for it, not a line of a file never written
        assert result.stderr.startswith("Error: --example-gpus: the job requests 9 nvidia.com/gpu")
        assert "big.yaml" not in result.output


def test_every_offered_product_gives_a_valid_profile(here: Path) -> None:
    # the default driver (595) no longer runs Kepler (last: 470) nor Maxwell to Volta (last: 580)
    dropped = {"kepler", "maxwell", "pascal", "volta"}
    assert "K80" not in products() and "V100-SXM2-32GB" not in products()
    for product in products():
        result = init(f"p-{product.lower()}", "--product", product)
        assert result.exit_code == 0, (product, result.output)
    assert len(list((here / "profiles").glob("*.yaml"))) == len(products())
    assert check_paths([here / "profiles"]).ok
    assert set(products()) == {
        n for n, p in catalog.PRODUCTS.items() if p.architecture not in dropped
    }


def test_never_replaces_a_profile(here: Path) -> None:
    (here / "profiles").mkdir()
    (here / "profiles" / "lab.yaml").write_text("# mine\n")
    result = init("lab", "--product", "L4")
    assert result.exit_code == 1
    assert "profiles/lab.yaml exists" in result.output
    assert (here / "profiles" / "lab.yaml").read_text() == "# mine\n"


def test_invalid_name_writes_nothing(here: Path) -> None:
    result = init("Lab_1", "--product", "L4")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: NAME: 'Lab_1' does not match")
    assert "Lab_1.yaml" not in result.output
    assert not (here / "profiles").exists() and not (here / "schemas").exists()


def test_unknown_product_is_a_usage_error(here: Path) -> None:
    result = init("lab", "--product", "H100")
    assert result.exit_code == 2
    assert not (here / "profiles").exists()


def test_keeps_a_schema_that_is_not_gpustacks_and_updates_its_own(here: Path) -> None:
    schemas = here / "schemas"
    schemas.mkdir()
    foreign = json.dumps({"$id": "https://example.com/other.json"})
    (schemas / "profile.schema.json").write_text(foreign)
    old = json.loads(render())
    old["title"] = "an older gpustack's schema"
    (schemas / "profile-base.schema.json").write_text(json.dumps({**old, "$id": BASE_SCHEMA_ID}))
    result = init("lab", "--product", "L4", "--profiles", "clusters")
    assert result.exit_code == 0, result.output
    assert (schemas / "profile.schema.json").read_text() == foreign
    assert "kept schemas/profile.schema.json" in result.output
    assert "updated schemas/profile-base.schema.json" in result.output
    assert (here / "clusters" / "lab.yaml").is_file()


def test_a_file_where_the_schemas_go_is_refused_before_anything_is_written(here: Path) -> None:
    """It was a traceback after the profile was written (issue #33)."""
    (here / "schemas").write_text("not a folder")
    done = CliRunner().invoke(main, ["init", "c1", "--product", "L4"])
    assert done.exit_code == 1, done.output
    assert done.output.splitlines() == [
        "Error: schemas is a file, where the profile schemas' folder goes; move it away, or name"
        " another --profiles"
    ]
    assert not (here / "profiles").exists()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_schema_file_that_is_no_file_is_kept_unread(here: Path, kind: str) -> None:
    """The existing schema is read through gpustack's limits: a FIFO there hung ``init``."""
    (here / "schemas").mkdir()
    target = here / "schemas" / "profile.schema.json"
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    done = init("c1", "--product", "L4")
    assert done.exit_code == 0, done.output
    assert f"kept {Path('schemas/profile.schema.json')}" in done.output
