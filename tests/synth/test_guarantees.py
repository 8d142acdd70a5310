"""Issue #11: gpustack never deletes what it cannot prove it owns.

Each test here was written against the code that lost data, and failed there: an index naming
paths outside ``clusters/``, a deleted profile, hand edits, leftovers of a killed run, and two
runs planning from the same index.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
import yaml

from gpustack.synth import plan as planning
from gpustack.synth import writer
from gpustack.synth.errors import SynthError
from gpustack.synth.writer import apply, compare, make_plan

from .objects import cluster, tree


def index_of(out: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((out / ".gpustack" / "index.json").read_bytes())
    return data


def set_index_clusters(out: Path, clusters: dict[str, object]) -> None:
    doc = index_of(out)
    doc["clusters"] = clusters
    (out / ".gpustack" / "index.json").write_text(json.dumps(doc, indent=2) + "\n")


# --- 1. the committed index is data, never trusted as paths ----------------------------------


@pytest.mark.parametrize(
    "key",
    ["../../victim", "../victim", "/ABS/victim", ".", "", "..", "a/../../victim", "A", "a\n"],
)
def test_an_index_naming_a_path_outside_the_clusters_folder_is_refused(
    workdir: Path, key: str
) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    victim = workdir / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep")
    key = key.replace("/ABS/victim", str(victim))
    clusters: dict[str, object] = index_of(out)["clusters"]  # type: ignore[assignment]
    entry = {**clusters["a"], "profile": "../profiles/gone.yaml"}  # type: ignore[dict-item]
    set_index_clusters(out, {**clusters, key: entry})
    before = tree(workdir)
    with pytest.raises(SynthError) as err:
        apply(make_plan(out, [cluster("a")]))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{out}/.gpustack/index.json:")
    assert "git checkout" in message
    assert tree(workdir) == before


@pytest.mark.parametrize("path", ["../../victim/precious.txt", "/etc/passwd", "a/../../x", ""])
def test_an_index_naming_a_file_outside_its_cluster_is_refused(workdir: Path, path: str) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    files = {path: "sha256:" + "0" * 64}
    set_index_clusters(out, {"a": {"profile": "../profiles/a.yaml", "files": files}})
    with pytest.raises(SynthError, match=r"index\.json:\d+:\d+: .*file"):
        make_plan(out, [cluster("a")])


# --- 3. removing a cluster folder is explicit --------------------------------------------------


def test_a_deleted_profile_does_not_remove_its_cluster_without_prune(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a"), cluster("b")]))
    (workdir / "profiles" / "b.yaml").unlink()
    before = tree(workdir)
    with pytest.raises(SynthError) as err:
        apply(make_plan(out, [cluster("a", examples=False)]))
    message = str(err.value)
    assert "\n" not in message
    assert f"{out}/clusters/b" in message and "--prune" in message
    assert f"{workdir}/profiles/b.yaml" in message
    assert tree(workdir) == before  # not even cluster a was written
    summary = apply(make_plan(out, [cluster("a", examples=False)], prune=True))
    assert summary.removed == ("b",)
    assert not (out / "clusters" / "b").exists()


def test_compare_lists_a_pending_removal_without_prune(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a"), cluster("b")]))
    (workdir / "profiles" / "b.yaml").unlink()
    diffs = compare(make_plan(out, [cluster("a")]))
    assert {d.kind for d in diffs} == {"extra", "differs"}
    assert any(d.path.parent.parent == out / "clusters" / "b" for d in diffs)


# --- 4. hand edits in an owned folder are never lost silently ---------------------------------


def test_hand_edits_are_refused_and_named(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    a = out / "clusters" / "a"
    (a / "driver" / "notes.yaml").write_text("x: 1\n")
    (a / "kustomization.yaml").write_text("edited\n")
    before = tree(workdir)
    with pytest.raises(SynthError) as err:
        apply(make_plan(out, [cluster("a", examples=False)]))
    message = str(err.value)
    assert "\n" not in message
    assert f"{a}/kustomization.yaml (changed)" in message
    assert f"{a}/driver/notes.yaml (added)" in message
    assert "--force" in message
    assert tree(workdir) == before

    plan = make_plan(out, [cluster("a", examples=False)], force=True)
    assert plan.overwrites == (a / "driver" / "notes.yaml", a / "kustomization.yaml")
    apply(plan)
    assert not (a / "driver" / "notes.yaml").exists()


def test_hand_edits_in_a_pruned_cluster_are_refused(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a"), cluster("b")]))
    (workdir / "profiles" / "b.yaml").unlink()
    (out / "clusters" / "b" / "mine.yaml").write_text("kind: Mine\n")
    with pytest.raises(SynthError, match=r"clusters/b/mine\.yaml \(added\)"):
        apply(make_plan(out, [cluster("a")], prune=True))
    assert (out / "clusters" / "b" / "mine.yaml").exists()


def test_an_edit_that_matches_the_new_output_is_no_hand_edit(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    new = {f.path: f.content for f in cluster("a", examples=False).output.files}
    (out / "clusters" / "a" / "kustomization.yaml").write_bytes(new["kustomization.yaml"])
    assert apply(make_plan(out, [cluster("a", examples=False)])).written == ("a",)


def test_the_index_records_a_digest_per_file(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    doc = index_of(out)
    assert doc["format"] == 2
    files = doc["clusters"]["a"]["files"]  # type: ignore[index]
    assert sorted(files) == sorted(cluster("a").output.paths())
    assert all(d.startswith("sha256:") and len(d) == 71 for d in files.values())


def test_a_format_1_index_is_read_and_upgraded(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    doc = {
        "format": 1,
        "generator": "gpustack",
        "clusters": {
            "a": {"profile": "../profiles/a.yaml", "files": list(cluster("a").output.paths())}
        },
    }
    (out / ".gpustack" / "index.json").write_text(json.dumps(doc))
    # Format 1 has no digests: an added file is still a hand edit, a changed one can't be told.
    (out / "clusters" / "a" / "mine.yaml").write_text("x\n")
    with pytest.raises(SynthError, match=r"mine\.yaml \(added\)"):
        apply(make_plan(out, [cluster("a")]))
    (out / "clusters" / "a" / "mine.yaml").unlink()
    assert compare(make_plan(out, [cluster("a")]))[0].kind == "differs"  # the index
    apply(make_plan(out, [cluster("a")]))
    assert index_of(out)["format"] == 2


def test_an_equal_index_in_other_bytes_is_rewritten_and_the_same_one_is_not(
    workdir: Path,
) -> None:
    """A run that changes nothing leaves the index file alone; an index with the same content
    in other bytes (reformatted by hand) is written back as gpustack writes it."""
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    path = out / ".gpustack" / "index.json"
    canonical = path.read_bytes()
    before = path.stat()
    apply(make_plan(out, [cluster("a")]))
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    path.write_text(json.dumps(json.loads(canonical)))  # same content, one line
    apply(make_plan(out, [cluster("a")]))
    assert path.read_bytes() == canonical


# --- 5. leftovers of a killed run -------------------------------------------------------------


def test_check_reports_leftovers_and_the_next_run_removes_them(workdir: Path) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    stale = [
        out / "clusters" / ".a.gpustack-tmp-deadbeef",
        out / ".gpustack" / ".a.gpustack-old-deadbeef",
        out / ".gpustack" / ".index.json.gpustack-tmp-deadbeef",
    ]
    stale[0].mkdir()
    stale[1].mkdir()
    stale[2].write_text("{}\n")
    diffs = compare(make_plan(out, [cluster("a")]))
    assert sorted((d.kind, d.path) for d in diffs) == [("leftover", p) for p in sorted(stale)]
    apply(make_plan(out, [cluster("a")]))
    assert compare(make_plan(out, [cluster("a")])) == []
    assert not any(p.exists() for p in stale)


def test_staging_never_happens_under_the_synced_clusters_folder(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = workdir / "dist"
    apply(make_plan(out, [cluster("a")]))
    seen: list[list[str]] = []
    real = writer.fsswap.swap_in

    def spy(staged: Path, target: Path) -> Path | None:
        seen.append(sorted(p.name for p in (out / "clusters").iterdir()))
        assert staged.parent == out / ".gpustack"
        return real(staged, target)

    monkeypatch.setattr(writer.fsswap, "swap_in", spy)
    apply(make_plan(out, [cluster("a", examples=False), cluster("b")]))
    assert seen == [["a"], ["a"]]


# --- 6. two runs at once ----------------------------------------------------------------------


def test_a_plan_made_before_another_run_wrote_is_refused(workdir: Path) -> None:
    out = workdir / "dist"
    (workdir / "profiles" / "c.yaml").write_text("metadata: {name: c}\n")
    apply(make_plan(out, [cluster("a")]))
    late = make_plan(out, [cluster("b")])
    apply(make_plan(out, [cluster("c")]))  # another run, in between
    with pytest.raises(SynthError, match="changed while this run was planning"):
        apply(late)
    assert sorted(index_of(out)["clusters"]) == ["a", "c"]  # type: ignore[arg-type]


def test_concurrent_runs_wait_for_each_other_and_both_count(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = workdir / "dist"
    (workdir / "profiles" / "c.yaml").write_text("metadata: {name: c}\n")
    writer.run(out, [cluster("a")])
    first_planned = threading.Event()
    real_read = planning.read_index

    def slow_read(path: Path) -> object:
        found = real_read(path)
        if threading.current_thread().name == "first":
            first_planned.set()
            time.sleep(0.3)  # the second run starts meanwhile
        return found

    monkeypatch.setattr(planning, "read_index", slow_read)
    waited: list[str] = []
    errors: list[BaseException] = []

    def go(c: str) -> None:
        try:
            writer.run(out, [cluster(c)], on_wait=lambda: waited.append(c))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    first = threading.Thread(target=go, args=("b",), name="first")
    first.start()
    assert first_planned.wait(5)
    second = threading.Thread(target=go, args=("c",), name="second")
    second.start()
    first.join(10)
    second.join(10)
    assert errors == []
    assert waited == ["c"]
    assert sorted(index_of(out)["clusters"]) == ["a", "b", "c"]  # type: ignore[arg-type]
    assert sorted(p.name for p in (out / "clusters").iterdir()) == ["a", "b", "c"]


def test_a_run_that_cannot_get_the_lock_in_time_fails_clearly(workdir: Path) -> None:
    out = workdir / "dist"
    writer.run(out, [cluster("a")])
    with writer.locked(out):
        done = threading.Event()
        errors: list[SynthError] = []

        def go() -> None:
            try:
                writer.run(out, [cluster("a", examples=False)], wait=0.2)
            except SynthError as exc:
                errors.append(exc)
            done.set()

        threading.Thread(target=go).start()
        assert done.wait(5)
    assert len(errors) == 1
    assert str(errors[0]).startswith(f"another gpustack synth has been writing {out} for ")


# --- the docs say what protects a cluster, and name only tests that exist ---------------------

REPO = Path(__file__).resolve().parents[2]
GUARANTEES = REPO / "docs" / "concepts" / "guarantees.md"
GITOPS = REPO / "docs" / "concepts" / "gitops.md"


def test_readme_applicationset_preserves_a_removed_clusters_stack() -> None:
    text = GITOPS.read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    docs = [d for b in blocks for d in yaml.safe_load_all(b) if isinstance(d, dict)]
    (appset,) = [d for d in docs if d.get("kind") == "ApplicationSet"]
    assert appset["spec"]["syncPolicy"]["preserveResourcesOnDeletion"] is True


def test_readme_guarantees_table_names_existing_tests() -> None:
    table = GUARANTEES.read_text(encoding="utf-8")
    tests_dir = REPO / "tests"
    sources = {p.name: p.read_text(encoding="utf-8") for p in tests_dir.rglob("test_*.py")}
    named = re.findall(r"`(?:[\w/]*/)?(test_\w+\.py)(?:::(\w+))?`", table)
    assert len(named) >= 20
    for file, test in named:
        assert file in sources, file
        assert not test or f"def {test}(" in sources[file], f"{file}::{test}"
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) >= 7  # a header and one row per guarantee
