"""Every command and snippet in the README and the documentation site is run, or checked as
what it is, so none can go stale without a failing test.

- ``sh`` blocks run with bash (``-euo pipefail``) in a copy of the repository, with the
  project's venv on ``PATH``; ``console`` blocks run each ``$`` command there too and must print
  every output line they show (a ``[...]`` stands for text left out).
- ``yaml`` blocks are checked as what they are: a gpustack profile, or a part of one, with
  ``gpustack validate``; a Kubernetes object against the API's strict OpenAPI schema; an Argo CD
  or Flux object against its CRD (``../shared/crds/``); a pre-commit config with
  ``pre-commit validate-config`` (the snippet itself is run in tests/test_precommit_hook.py).
- ``{.lang .syntax-only}`` blocks need what the suite has not (a cluster, a registry, an image
  build): bash parses them (``bash -n``) and YAML loads.
- ``text`` blocks are sample output: every rule ID they name must exist.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpustack.lint.registry import RULES as LINT_RULES
from gpustack.nodestate.registry import NODE_RULES
from gpustack.profile.model import Profile
from gpustack.profile.rules.registry import ALL as PROFILE_RULES
from gpustack.profile.schema import schema
from tests import k8s_schema
from tests.docs.blocks import REPO, Block, all_blocks
from tests.test_readme_gitops import GITOPS_GROUPS, crd_schemas

BLOCKS = all_blocks()
LANGUAGES = ("sh", "console", "yaml", "text", "mermaid")
VENV_BIN = Path(sys.executable).parent
#: What a copy of the repository leaves out: git's and tools' state, build output.
IGNORED = (".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
           "build", "site", "*.egg-info", ".cache", "node_modules")  # fmt: skip
#: The shown output of a command may leave text out with this marker.
ELIDED = "[...]"
KUSTOMIZATION_KEYS = {"apiVersion", "kind", "namespace", "resources", "patches", "images",
                      "components", "configMapGenerator", "labels", "sortOptions"}  # fmt: skip


def _ids(blocks: list[Block]) -> list[str]:
    return [b.id for b in blocks]


def _of(lang: str, *, runs: bool) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang and b.syntax_only is not runs]


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "80"}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the working tree (what a reader has after cloning), the venv linked in."""
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    (copy / ".venv").symlink_to(VENV_BIN.parent)
    return copy


def test_blocks_are_found_and_each_has_a_known_language() -> None:
    assert len(BLOCKS) > 40
    unknown = [f"{b.id}: {b.lang or '(none)'}" for b in BLOCKS if b.lang not in LANGUAGES]
    assert unknown == [], f"give each block one of {LANGUAGES}: {unknown}"
    marked = [b.id for b in BLOCKS if b.syntax_only and b.lang == "text"]
    assert marked == [], "text blocks never run; syntax-only means nothing there"


# --- shell --------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", _of("sh", runs=True), ids=_ids(_of("sh", runs=True)))
def test_shell_block_runs(block: Block, checkout: Path) -> None:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=checkout,
                          env=_env(), capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, f"{block.id}: exit {done.returncode}\n{done.stdout}{done.stderr}"


def session(text: str) -> list[tuple[str, list[str]]]:
    """A console block as (command, the output lines shown after it)."""
    out: list[tuple[str, list[str]]] = []
    continued = False
    for line in text.splitlines():
        if continued:
            command, shown = out[-1]
            out[-1] = (f"{command}\n{line}", shown)
        elif line.startswith("$ "):
            out.append((line[2:], []))
        else:
            assert out, f"output before the first command: {line!r}"
            out[-1][1].append(line)
        continued = line.endswith("\\") and (continued or line.startswith("$ "))
    return out


def _shows(shown: str, printed: str, lines: set[str]) -> bool:
    if re.fullmatch(r"\[\.\.\..*\]", shown.strip()):  # "[... 2 more ...]": a summary, not output
        return True
    if ELIDED in shown:
        return all(part.strip() in printed for part in shown.split(ELIDED))
    return shown.rstrip() in lines


@pytest.mark.parametrize("block", _of("console", runs=True), ids=_ids(_of("console", runs=True)))
def test_console_block_prints_what_it_shows(block: Block, checkout: Path) -> None:
    for command, shown in session(block.text):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=checkout, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=600)  # fmt: skip
        printed = done.stdout
        assert "Traceback" not in printed, f"{block.id}: {command}\n{printed}"
        assert done.returncode != 2, f"{block.id}: usage error: {command}\n{printed}"
        if not [s for s in shown if s.strip()]:
            assert done.returncode == 0, f"{block.id}: {command}: exit {done.returncode}\n{printed}"
        lines = {line.rstrip() for line in printed.splitlines()}
        missing = [s for s in shown if s.strip() and not _shows(s, printed, lines)]
        assert missing == [], f"{block.id}: {command} did not print:\n" + "\n".join(
            missing + ["--- it printed:", printed]
        )


def test_console_sessions_are_read_as_commands_and_output() -> None:
    text = "$ a \\\n  --b\nout 1\n$ c\n"
    assert session(text) == [("a \\\n  --b", ["out 1"]), ("c", [])]
    assert _shows("x [...] z", "x y z", {"x y z"}) and not _shows("x [...] q", "x y z", set())


SYNTAX = [b for b in BLOCKS if b.lang in ("sh", "console")]


@pytest.mark.parametrize("block", SYNTAX, ids=_ids(SYNTAX))
def test_shell_syntax(block: Block) -> None:
    script = block.text
    if block.lang == "console":
        script = "\n".join(command for command, _ in session(block.text))
    done = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert done.returncode == 0, f"{block.id}: {done.stderr}"


# --- YAML ---------------------------------------------------------------------------------------

PROFILE_HEADER = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: snippet\n"
SECTIONS = set(schema()["properties"]) - {"apiVersion", "kind", "metadata"}


def _validate_profile(text: str, folder: Path) -> None:
    profiles = folder / "profiles"
    profiles.mkdir()
    (profiles / "snippet.yaml").write_text(text, encoding="utf-8")
    done = subprocess.run([str(VENV_BIN / "gpustack"), "validate", "profiles/"], cwd=folder,
                          env=_env(), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _object_errors(doc: dict[str, Any]) -> list[str]:
    api_version, kind = str(doc["apiVersion"]), str(doc["kind"])
    group = api_version.split("/")[0] if "/" in api_version else ""
    if group.endswith(GITOPS_GROUPS):
        crd = crd_schemas().get((api_version, kind))
        assert crd is not None, f"no served CRD for {api_version} {kind}"
        return [
            f"{e.json_path}: {e.message}" for e in jsonschema.Draft7Validator(crd).iter_errors(doc)
        ]
    if group == "kustomize.config.k8s.io":
        return [f"unknown key {k}" for k in sorted(set(doc) - KUSTOMIZATION_KEYS)]
    version = Profile.from_dict({"metadata": {"name": "x"}}).cluster.kubernetes_version
    return k8s_schema.errors(doc, version)


def what_it_is(docs: list[Any]) -> str:
    """The kind of YAML snippet: profile, profile-part, object, pre-commit-config."""
    if len(docs) == 1 and isinstance(docs[0], dict):
        doc = docs[0]
        if "repos" in doc:
            return "pre-commit-config"
        if str(doc.get("apiVersion", "")).startswith("gpustack.dev/"):
            return "profile"
        if "apiVersion" not in doc and doc and set(doc) <= SECTIONS:
            return "profile-part"
    if docs and all(isinstance(d, dict) and "apiVersion" in d and "kind" in d for d in docs):
        return "object"
    return "unknown"


YAML = _of("yaml", runs=True)


@pytest.mark.parametrize("block", YAML, ids=_ids(YAML))
def test_yaml_block_is_valid_as_what_it_is(block: Block, tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(block.text))
    kind = what_it_is(docs)
    if kind == "profile":
        _validate_profile(block.text, tmp_path)
    elif kind == "profile-part":
        _validate_profile(PROFILE_HEADER + block.text, tmp_path)
    elif kind == "object":
        found = [f"{d['kind']}: {e}" for d in docs for e in _object_errors(d)]
        assert found == [], f"{block.id}:\n" + "\n".join(found)
    elif kind == "pre-commit-config":
        config = tmp_path / ".pre-commit-config.yaml"
        config.write_text(block.text, encoding="utf-8")
        done = subprocess.run([str(VENV_BIN / "pre-commit"), "validate-config", str(config)],
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        pytest.fail(
            f"{block.id}: neither a profile (or a part of one), a Kubernetes object nor a"
            " pre-commit config; mark it {.yaml .syntax-only} if it is something else"
        )


def test_a_yaml_snippet_is_recognised_for_what_it_is() -> None:
    assert what_it_is([{"cluster": {}}]) == "profile-part"
    assert what_it_is([{"clusterr": {}}]) == "unknown"
    assert what_it_is([{"apiVersion": "v1", "kind": "ConfigMap"}]) == "object"


SYNTAX_YAML = _of("yaml", runs=False)


@pytest.mark.parametrize("block", SYNTAX_YAML, ids=_ids(SYNTAX_YAML))
def test_syntax_only_yaml_loads(block: Block) -> None:
    assert [d for d in yaml.safe_load_all(block.text) if d is not None]


# --- sample output ------------------------------------------------------------------------------

RULE_IDS = {r.id for r in PROFILE_RULES} | {r.id for r in NODE_RULES} | {r.id for r in LINT_RULES}
SHOWN = [b for b in BLOCKS if b.lang in ("text", "console")]


@pytest.mark.parametrize("block", SHOWN, ids=_ids(SHOWN))
def test_sample_output_names_rules_that_exist(block: Block) -> None:
    named = set(re.findall(r"\(rule: ([\w-]+)\)", block.text))
    assert named - RULE_IDS == set(), f"{block.id}: no such rule"
