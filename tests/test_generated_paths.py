"""The generators write into the repository wherever they are run from.

Each ``python -m <generator>`` names its files relative to the repository root. Run from another
folder, they used to be resolved against that folder: ``--check`` called the committed files
stale, and a plain run left a second copy behind (``tests/profile/cases/schemas/`` held 5,918
lines of one). Here each generator runs from an empty temporary folder: ``--check`` passes on
the committed files and nothing appears in that folder; ``--root`` puts the files elsewhere.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpustack.docsite import __main__ as docsite
from gpustack.fields import generated
from gpustack.fields.generated import REPO_ROOT, write_or_check
from gpustack.gitops import argocd_sidecar
from gpustack.nodestate import reference as node_rules
from gpustack.plugin import schema as plugin_schema
from gpustack.profile import schema as profile_schema
from gpustack.profile.rules import reference as profile_rules


def _argv_main(main: Callable[[], None]) -> Callable[[list[str]], None]:
    """A generator whose ``main()`` reads ``sys.argv``, called with ``args``."""

    def run(args: list[str]) -> None:
        saved = sys.argv
        sys.argv = ["generator", *args]
        try:
            main()
        finally:
            sys.argv = saved

    return run


def _docsite(args: list[str]) -> None:
    assert docsite.main(args) == 0


GENERATORS: dict[str, Callable[[list[str]], None]] = {
    "gpustack.profile.schema": _argv_main(profile_schema.main),
    "gpustack.plugin.schema": _argv_main(plugin_schema.main),
    "gpustack.profile.rules.reference": _argv_main(profile_rules.main),
    "gpustack.nodestate.reference": _argv_main(node_rules.main),
    "gpustack.gitops.argocd_sidecar": _argv_main(argocd_sidecar.main),
    "gpustack.docsite": _docsite,
}


def test_the_repository_root_is_this_checkout() -> None:
    assert (REPO_ROOT / "pyproject.toml").is_file()
    assert Path(__file__).resolve().parents[1] == REPO_ROOT


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_check_from_another_folder_reads_the_repository(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    GENERATORS[name](["--check"])  # the committed files are current: no exit
    assert list(tmp_path.iterdir()) == []


def test_a_run_from_another_folder_writes_nothing_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    GENERATORS["gpustack.profile.schema"](["--root", str(out)])
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "schemas/profile-base.schema.json",
        "schemas/profile.md",
        "schemas/profile.schema.json",
    ]
    committed = REPO_ROOT / profile_schema.SCHEMA_FILE
    assert (out / profile_schema.SCHEMA_FILE).read_text() == committed.read_text()
    assert list(elsewhere.iterdir()) == []


def test_root_takes_relative_and_checkout_paths_and_check_names_them_relative(
    tmp_path: Path,
) -> None:
    files = {Path("a") / "x.md": "x\n", REPO_ROOT / "b" / "y.md": "y\n"}
    write_or_check(files, "make it", argv=[f"--root={tmp_path}"])
    assert (tmp_path / "a" / "x.md").read_text() == "x\n"
    assert (tmp_path / "b" / "y.md").read_text() == "y\n"
    (tmp_path / "b" / "y.md").write_text("old\n")
    with pytest.raises(SystemExit, match=r"^b/y\.md is stale; run: make it$"):
        write_or_check(files, "make it", argv=["--check", "--root", str(tmp_path)])


def test_outside_a_checkout_the_generator_asks_for_a_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generated, "REPO_ROOT", tmp_path)  # as in site-packages: no pyproject
    with pytest.raises(SystemExit, match="is no gpustack checkout; run from one, or pass --root"):
        write_or_check({Path("x.md"): "x\n"}, "make it", argv=[])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit, match="--root needs a folder"):
        write_or_check({Path("x.md"): "x\n"}, "make it", argv=["--root"])
