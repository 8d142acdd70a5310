"""A GPU's name as the node spells it gets its catalog name as "did you mean".

Users copy ``gpus.product`` from ``nvidia-smi`` (``NVIDIA H100 80GB HBM3``) or from the
``nvidia.com/gpu.product`` label GPU feature discovery writes (``NVIDIA-H100-80GB-HBM3``).
Both ``validate`` and ``gpustack init --product`` answer with the catalog name, through the
mapping ``gpustack doctor`` already reads nodes with (:func:`gpustack.profile.catalog.
product_from_name`), so there is one table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.profile import catalog
from gpustack.profile.explain import schema_findings
from gpustack.scaffold import products

#: (what the node says, the catalog product): nvidia-smi's names and GFD's labels for them.
HEAD = {"apiVersion": "gpustack.dev/v1alpha1", "kind": "Profile", "metadata": {"name": "t"}}
NODE_NAMES = sorted(
    {(smi, product) for smi, product in catalog.SMI_PRODUCT_NAMES.items()}
    | {(catalog.gfd_product_name(smi), p) for smi, p in catalog.SMI_PRODUCT_NAMES.items()}
)


def test_the_table_has_the_names_the_issue_used() -> None:
    assert ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB") in NODE_NAMES
    assert ("NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB") in NODE_NAMES


@pytest.mark.parametrize(("name", "product"), NODE_NAMES)
def test_validate_suggests_the_catalog_name(name: str, product: str) -> None:
    data = {**HEAD, "gpus": {"product": name}}
    found = schema_findings(data, set())
    assert len(found) == 1
    assert found[0].path == ("gpus", "product")
    assert found[0].hint is not None
    assert found[0].hint.startswith(f"did you mean {product!r}? {name!r} is what nvidia-smi")


def test_other_wrong_products_keep_the_list() -> None:
    found = schema_findings({**HEAD, "gpus": {"product": "H100"}}, set())
    assert found[0].hint is not None and "expected one of:" in found[0].hint


@pytest.mark.parametrize(("name", "product"), [(n, p) for n, p in NODE_NAMES if p in products()])
def test_init_suggests_the_catalog_name(tmp_path: Path, name: str, product: str) -> None:
    out = tmp_path / "profiles"
    result = CliRunner().invoke(main, ["init", "c", "--product", name, "--profiles", str(out)])
    assert result.exit_code == 2
    assert f"did you mean {product!r}?" in result.output
    assert not out.exists()
