"""Checking a fleet holds each profile's document only as long as it is needed: until its
rules ran, unless an accept comment in one of its files needs it later. The documents (the data
and the position of every path) were most of the 10,000-cluster ``synth``'s high-water mark
(issue #37: 240 MiB after validation, 108 MiB since); bases are kept, being shared."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gpustack import checker
from gpustack.checker import check_paths
from gpustack.profile import loader
from gpustack.profile.document import Document
from gpustack.profile.model import Profile

BODY = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: {name}\n"


@pytest.fixture
def documents(monkeypatch: pytest.MonkeyPatch) -> dict[str, weakref.ref[Document]]:
    """Every document read, by file name, as a weak reference."""
    read: dict[str, weakref.ref[Document]] = {}
    real = loader.read_document

    def tracked(path: Path, display: str) -> Document:
        doc = real(path, display)
        read[path.name] = weakref.ref(doc)
        return doc

    monkeypatch.setattr(loader, "read_document", tracked)
    return read


def alive(documents: dict[str, weakref.ref[Document]]) -> set[str]:
    gc.collect()
    return {name for name, ref in documents.items() if ref() is not None}


def fleet(folder: Path) -> None:
    """Three plain profiles, one extending a base, one with an accept comment."""
    (folder / "_bases").mkdir()
    (folder / "_bases" / "fleet.yaml").write_text(BODY.format(name="base"))
    for i in range(3):
        (folder / f"plain-{i}.yaml").write_text(BODY.format(name=f"plain-{i}"))
    (folder / "child.yaml").write_text("extends: _bases/fleet.yaml\nmetadata:\n  name: child\n")
    (folder / "accepting.yaml").write_text(
        BODY.format(name="accepting")
        + "# gpustack: accept image-not-from-mirror reason: pulled through a proxy\n"
    )


def test_while_the_cross_profile_rules_run_only_shared_and_accepting_documents_live(
    tmp_path: Path, documents: dict[str, weakref.ref[Document]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the point every document could be held (the cross-profile rules, after every file
    was read), only the base's and the accepting profile's are: the others were slimmed to
    their name's position, which the rules still report at."""
    fleet(tmp_path)
    (tmp_path / "twin.yaml").write_text("# a twin\n" + BODY.format(name="plain-0"))
    seen: list[set[str]] = []
    real = checker.cross_profile_findings

    def observing(docs: Sequence[tuple[Path, Document, Profile]]) -> Any:
        seen.append(alive(documents))
        return real(docs)

    monkeypatch.setattr(checker, "cross_profile_findings", observing)
    result = check_paths([tmp_path])
    assert set(documents) >= {"fleet.yaml", "plain-0.yaml", "child.yaml", "accepting.yaml"}
    assert seen == [{"fleet.yaml", "accepting.yaml"}]
    twin = [i for i in result.issues if i.rule == "profile-names-unique"]
    assert [(Path(i.file).name, i.line, i.col, i.json_path) for i in twin] == [
        ("twin.yaml", 5, 9, "$.metadata.name")
    ]
    assert alive(documents) == set()  # once the result is all that is left
