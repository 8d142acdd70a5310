"""The README's install instructions: the pre-commit snippet names a revision that exists.

pre-commit fetches ``rev`` from the hook repository; a tag that was never created fails every
user's first ``pre-commit run``. The snippet pins a commit, so the test checks that the commit is
in this repository's history and that its ``.pre-commit-hooks.yaml`` publishes the hooks the
snippet asks for.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _precommit_snippet() -> dict[str, Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.S)
    found = [yaml.safe_load(b) for b in blocks if b.lstrip().startswith("repos:")]
    assert len(found) == 1, "the README has one pre-commit snippet"
    snippet: dict[str, Any] = found[0]
    return snippet


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


def test_the_precommit_snippet_pins_a_commit_that_publishes_its_hooks() -> None:
    (repo,) = _precommit_snippet()["repos"]
    rev = repo["rev"]
    assert re.fullmatch(r"[0-9a-f]{40}", rev), "pin a full commit SHA (pre-commit needs it)"
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if _git("cat-file", "-e", f"{rev}^{{commit}}").returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        if shallow:
            pytest.skip(f"shallow clone: {rev} is not fetched")
        pytest.fail(f"README pins rev {rev}, which is no commit of this repository")
    hooks = yaml.safe_load(_git("show", f"{rev}:.pre-commit-hooks.yaml").stdout)
    published = {h["id"] for h in hooks}
    wanted = {h["id"] for h in repo["hooks"]}
    assert wanted <= published, f"{rev} does not publish {sorted(wanted - published)}"


def test_the_install_section_names_the_distribution_pyproject_builds() -> None:
    name = re.search(r'^name = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert name is not None
    section = README[README.index("## Install") : README.index("## Quickstart")]
    assert f"`{name.group(1)}`" in section
    assert f"{name.group(1).replace('-', '_')}-*.whl" in section
