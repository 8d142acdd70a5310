"""``gpustack init``'s errors: validate's did-you-mean for a product, and the argument that is
wrong rather than a line of a file never written (issue #24, item 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.scaffold import ARGUMENTS, profile_text
from tests.test_synth_cli import PROFILE

#: a product as typed -> what both validate and init suggest
PRODUCTS = {
    "h100": "did you mean one of 'H100-NVL-94GB', 'H100-PCIE-80GB', 'H100-SXM5-80GB'?",
    "l4": "did you mean one of 'L4', 'L40', 'L40S'?",
    "H100-SXM5": "did you mean 'H100-SXM5-80GB'?",
    "RTX-409": "did you mean 'RTX-4090'?",
}


def _suggestion(text: str) -> str:
    (found,) = re.findall(r"did you mean [^?]*\?", text)
    return str(found)


@pytest.mark.parametrize(("typed", "suggested"), PRODUCTS.items(), ids=PRODUCTS.keys())
def test_init_suggests_the_product_as_validate_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str, suggested: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(PROFILE.format(name="a").replace("L4", typed))
    validated = CliRunner().invoke(main, ["validate", "p.yaml"])
    assert validated.exit_code == 1
    result = CliRunner().invoke(main, ["init", "lab", "--product", typed])
    assert result.exit_code == 2
    assert _suggestion(result.stderr) == _suggestion(validated.stdout) == suggested
    assert f"'{typed}' is not a product gpustack knows" in result.stderr
    assert not (tmp_path / "profiles").exists()


#: arguments -> the argument the error names first
ARGUMENT_ERRORS = {
    "too many example GPUs": (["lab", "--example-gpus", "16"], "--example-gpus"),
    "not a DNS label": (["Lab_1"], "NAME"),
}


@pytest.mark.parametrize(("args", "named"), ARGUMENT_ERRORS.values(), ids=ARGUMENT_ERRORS.keys())
def test_init_errors_name_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["init", *args, "--product", "L4"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {named}: ")
    assert ".yaml" not in result.stderr and "$." not in result.stderr
    assert "gpus.perNode" not in result.stderr  # the option that sets it instead
    assert not (tmp_path / "profiles").exists()


def test_every_argument_path_is_in_the_profile_init_writes() -> None:
    import yaml

    doc = yaml.safe_load(profile_text("lab", "L4", 2, "s.json", 1))
    for path in ARGUMENTS:
        node = doc
        for part in re.findall(r"\.(\w+)|\[(\d+)\]", path):
            node = node[part[0]] if part[0] else node[int(part[1])]
        assert node in ("lab", "L4", 2, 1)
