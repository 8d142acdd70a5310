"""The documentation site builds with strict link checking, its generated pages and the README's
API access table are what the code says, and the README stays a front page."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpustack.docsite import access, mermaid_js, pages
from gpustack.docsite.__main__ import main
from tests.docs.blocks import REPO
from tests.docs.blocks import pages as site_pages

MAX_README_LINES = 250


def _mkdocs() -> str:
    """mkdocs is in the dev extra (`make .venv/.installed` installs it): missing under CI=true
    is a broken setup and fails; elsewhere the test skips."""
    found = shutil.which(
        "mkdocs", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    if found is not None:
        return found
    message = "mkdocs is not installed (pip install -e '.[dev]')"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """Broken links, anchors and pages left out of nav are warnings, and --strict fails on them."""
    done = subprocess.run([_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """Guards the guard: the same build over a copy with one dead link must fail."""
    copy = tmp_path / "repo"
    shutil.copytree(REPO / "docs", copy / "docs")
    shutil.copy2(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    hook = Path(mermaid_js.__file__).relative_to(REPO)  # mkdocs.yml's `hooks:` entry
    (copy / hook).parent.mkdir(parents=True)
    shutil.copy2(REPO / hook, copy / hook)
    index = copy / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n")
    done = subprocess.run([_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=copy, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_the_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move text to docs/"


def test_the_quickstart_commands_are_the_makefile_targets() -> None:
    """The README's two commands: `make run` sets up and synthesizes, `make test` sets up and
    runs the linters and the whole suite (make -n prints what each would run)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quickstart = readme[readme.index("## Quickstart") :].split("\n## ", 1)[0]
    assert "make run " in quickstart and "make test " in quickstart
    runs = {}
    for target in ("run", "test"):
        done = subprocess.run(["make", "-n", "-W", "pyproject.toml", target], cwd=REPO,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs[target] = done.stdout
    for target in runs:
        assert "pip install -q -e '.[dev]'" in runs[target], f"make {target} sets up .venv"
    assert "gpustack synth" in runs["run"]
    assert all(tool in runs["test"] for tool in ("ruff check", "mypy", "pytest"))


def test_generated_pages_are_up_to_date() -> None:
    stale = [str(p) for p, text in pages.files().items() if p.read_text(encoding="utf-8") != text]
    assert stale == [], "run: python -m gpustack.docsite"


def test_check_mode_names_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "cli.md"
    target.write_text("stale\n", encoding="utf-8")
    monkeypatch.setattr(pages, "files", lambda: {target: "fresh\n"})
    monkeypatch.setattr("gpustack.docsite.__main__.files", pages.files)
    with pytest.raises(SystemExit) as exited:
        main(["--check"])
    assert str(exited.value) == f"{target} is stale; run: python -m gpustack.docsite"
    assert target.read_text(encoding="utf-8") == "stale\n"  # --check writes nothing
    assert main([]) == 0 and target.read_text(encoding="utf-8") == "fresh\n"


def test_missing_markers_are_one_error_line() -> None:
    with pytest.raises(ValueError, match="api-access"):
        pages.readme("# a README without the markers\n")


def test_the_readme_table_lists_every_role_with_its_service_account() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = access.readme_table()
    assert table in readme
    for grant in access.grants():
        row = next(line for line in table.splitlines() if f"`{grant.role}`" in line
                   and grant.kind in line)  # fmt: skip
        assert grant.service_account in row
        for rule in grant.rules:
            assert all(v in row for v in rule.verbs) and all(r in row for r in rule.resources)


def test_the_api_access_page_has_each_roles_table() -> None:
    page = pages.API_ACCESS.read_text(encoding="utf-8")
    for grant in access.grants():
        key = access.section_key(grant)
        section = page.split(f"<!-- BEGIN {key}:", 1)[1].split(f"<!-- END {key} -->", 1)[0]
        assert access.page_table(grant) in section


def test_every_page_is_in_nav() -> None:
    """mkdocs reports pages left out of nav (omitted_files: warn); this names them directly."""
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    docs = REPO / "docs"
    missing = [p.relative_to(docs).as_posix() for p in site_pages()[1:]
               if p.relative_to(docs).as_posix() not in nav]  # fmt: skip
    assert missing == []
