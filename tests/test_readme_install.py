"""Install instructions and release discipline: what the README and the site tell a user to
install and to pin is a revision the repository has, and any version they name is the one this
checkout declares.

pre-commit fetches ``rev`` from the hook repository, and ``pip`` the ``@rev`` of a git URL: a
tag the repository lacks fails both (issue #32: every page pinned ``v0.2.0``, which was never
tagged). So a pin names ``main`` or a tag ``git tag`` lists. (tests/test_precommit_hook.py runs
the snippet itself, against this checkout.) The CHANGELOG's newest release is the version.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from gpustack import __version__
from tests.docs.blocks import all_blocks, pages

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
#: Where a page names a gpustack release: (what, pattern whose group is the version).
PINS = (
    ("install from git", r"github\.com/gpustack-dev/gpustack@v([\w.+-]+)"),
    ("pre-commit rev", r"^\s*rev: v([\w.+-]+)"),
    ("device plugin image", r"gpustack-device-plugin:(\d[\w.+-]*)"),
    ("Argo CD sidecar image", r"gpustack-argocd-cmp:(\d[\w.+-]*)"),
    ("Argo CD plugin name", r"name: gpustack-(\d+\.\d+\.\d+)"),
    ("device plugin tag", r"devicePlugin\.version \((\d[\w.+-]*)\)"),
)


def precommit_snippet() -> tuple[str, dict[str, Any]]:
    """The one pre-commit config the docs show: its text and its document."""
    found = [b for b in all_blocks() if b.lang == "yaml" and b.text.lstrip().startswith("repos:")]
    assert len(found) == 1, f"the docs show one pre-commit snippet: {[b.id for b in found]}"
    return found[0].text, yaml.safe_load(found[0].text)


def test_the_precommit_snippet_names_this_release_and_hooks_it_publishes() -> None:
    (repo,) = precommit_snippet()[1]["repos"]
    assert repo["repo"] == "https://github.com/gpustack-dev/gpustack"
    assert repo["rev"] in revisions(), "the snippet pins a revision the repository has"
    published = {h["id"] for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    wanted = {h["id"] for h in repo["hooks"]}
    assert wanted <= published, f"not published: {sorted(wanted - published)}"
    assert published <= wanted, f"the snippet leaves out {sorted(published - wanted)}"


def test_every_release_a_page_names_is_this_version() -> None:
    wrong = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for what, pattern in PINS:
            for m in re.finditer(pattern, text, re.MULTILINE):
                if m.group(1) != __version__:
                    line = text.count("\n", 0, m.start()) + 1
                    wrong.append(f"{page.relative_to(REPO)}:{line}: {what} {m.group(1)}")
    assert wrong == [], f"gpustack is {__version__}:\n" + "\n".join(wrong)


def revisions() -> set[str]:
    """What a pin may name: the default branch, and the tags this repository has."""
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(REPO), "tag", "--list"], capture_output=True, text=True, check=True
    )
    return {"main", *done.stdout.split()}


#: A pin of gpustack's repository: pip's git URL ``@rev``, pre-commit's ``rev:``.
PIN = re.compile(r"github\.com/gpustack-dev/gpustack@([\w.+-]+)|^\s*rev: ([\w.+-]+)", re.M)


def test_every_pin_names_a_revision_the_repository_has() -> None:
    have = revisions()
    wrong = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for m in PIN.finditer(text):
            rev = m.group(1) or m.group(2)
            if rev not in have:
                line = text.count("\n", 0, m.start()) + 1
                wrong.append(f"{page.relative_to(REPO)}:{line}: {rev}")
    assert wrong == [], f"no such tag here ({sorted(have)}):\n" + "\n".join(wrong)


def test_the_readme_installs_a_revision_the_repository_has() -> None:
    install = README[README.index("## Install") : README.index("## Quickstart")]
    url = re.search(r"'git\+https://github\.com/gpustack-dev/gpustack(@[\w.+-]+)?'", install)
    assert url is not None
    assert url.group(1) is None or url.group(1)[1:] in revisions()


def test_the_changelogs_newest_release_is_the_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.MULTILINE)
    assert releases, "no release heading `## [x.y.z] - YYYY-MM-DD`"
    assert releases[0][0] == __version__, "add the release to CHANGELOG.md with the version bump"
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^\[{re.escape(__version__)}\]: ", changelog, re.MULTILINE)


def test_the_install_section_names_the_distribution_pyproject_builds() -> None:
    name = re.search(r'^name = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert name is not None
    section = README[README.index("## Install") : README.index("## Quickstart")]
    assert f"`{name.group(1)}`" in section
    assert f"{name.group(1).replace('-', '_')}-*.whl" in section
    assert "`build` package" in section, "building the wheel needs `build`: say so"
