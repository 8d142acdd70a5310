"""The writer: layout on disk, ownership, stale clusters, atomicity and ``--check`` comparison."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gpustack.synth import fsswap
from gpustack.synth.errors import SynthError
from gpustack.synth.index import PACKAGED_DEFAULT, digest
from gpustack.synth.layout import ClusterOutput, ManifestFile
from gpustack.synth.statcache import CACHE_NAME
from gpustack.synth.writer import SourcedCluster, apply, compare, make_plan

from .objects import cluster, tree


def write(
    out: Path, *clusters: SourcedCluster, force: bool = False, prune: bool = False
) -> tuple[str, ...]:
    return apply(make_plan(out, clusters, force=force, prune=prune)).written


def hidden_entries(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "clusters").iterdir() if p.name.startswith("."))


def test_first_write_lays_out_every_file_and_the_index(workdir: Path) -> None:
    out = workdir / "dist"
    a, b = cluster("a"), cluster("b", examples=False)
    assert write(out, a, b) == ("a", "b")
    expected: dict[str, bytes | None] = {
        ".gpustack": None,
        "clusters": None,
        "clusters/a": None,
        "clusters/b": None,
    }
    for c in (a, b):
        for f in c.output.files:
            expected[f"clusters/{c.output.name}/{f.path}"] = f.content
            expected[f"clusters/{c.output.name}/{Path(f.path).parent}".rstrip("/.")] = None
    index = json.loads((out / ".gpustack" / "index.json").read_bytes())
    expected[".gpustack/index.json"] = (out / ".gpustack" / "index.json").read_bytes()
    assert tree(out) == expected
    assert index == {
        "format": 2,
        "generator": "gpustack",
        "clusters": {
            c.output.name: {
                "profile": f"../profiles/{c.output.name}.yaml",
                "files": {f.path: digest(f.content) for f in c.output.files},
            }
            for c in (a, b)
        },
    }


def test_same_input_twice_changes_nothing(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    before = tree(out)
    inode = (out / "clusters" / "a").stat().st_ino
    summary = apply(make_plan(out, [cluster("a")]))
    assert (summary.written, summary.unchanged, summary.removed) == ((), ("a",), ())
    assert tree(out) == before
    assert (out / "clusters" / "a").stat().st_ino == inode  # not even swapped


def test_removed_component_disappears_and_no_staging_is_left(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    assert (out / "clusters" / "a" / "examples").is_dir()
    assert write(out, cluster("a", examples=False)) == ("a",)
    assert not (out / "clusters" / "a" / "examples").exists()
    assert b"examples/" not in (out / "clusters" / "a" / "kustomization.yaml").read_bytes()
    assert hidden_entries(out) == []


def test_hand_edits_inside_an_owned_cluster_are_replaced_when_forced(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    (out / "clusters" / "a" / "driver" / "notes.yaml").write_text("x: 1\n")
    (out / "clusters" / "a" / "kustomization.yaml").write_text("edited\n")
    with pytest.raises(SynthError, match="edited by hand"):
        write(out, cluster("a"))
    assert write(out, cluster("a"), force=True) == ("a",)
    assert not (out / "clusters" / "a" / "driver" / "notes.yaml").exists()
    assert (out / "clusters" / "a" / "kustomization.yaml").read_bytes() == dict(
        (f.path, f.content) for f in cluster("a").output.files
    )["kustomization.yaml"]


def test_nothing_outside_the_output_folder_is_touched(workdir: Path) -> None:
    (workdir / "clusters").mkdir()  # decoys with the names the writer uses
    (workdir / ".gpustack").mkdir()
    (workdir / "dist").mkdir()
    (workdir / "dist" / "keep.txt").write_text("mine")
    write(workdir / "dist", cluster("a"), force=True)  # take over a folder with a foreign file
    write(workdir / "dist", cluster("a", examples=False))
    after = tree(workdir)
    outside = {k: v for k, v in after.items() if k != "dist" and not k.startswith("dist/")}
    assert outside == {
        "clusters": None,
        ".gpustack": None,
        "profiles": None,
        "profiles/a.yaml": b"metadata: {name: a}\n",
        "profiles/b.yaml": b"metadata: {name: b}\n",
    }
    assert after["dist/keep.txt"] == b"mine"


FOREIGN = {
    "non-empty folder without index": lambda out: (out / "README.md").write_text("hi"),
    "cluster folder not in the index": lambda out: (
        write(out, cluster("b")),
        (out / "clusters" / "a").mkdir(),
        (out / "clusters" / "a" / "app.yaml").write_text("kind: Mine\n"),
    ),
    "file where the cluster folder goes": lambda out: (
        write(out, cluster("b")),
        (out / "clusters" / "a").write_text("x"),
    ),
    "unreadable index": lambda out: (
        write(out, cluster("b")),
        (out / ".gpustack" / "index.json").write_text("{not json"),
    ),
}


@pytest.mark.parametrize("prepare", FOREIGN.values(), ids=FOREIGN.keys())
def test_foreign_content_is_refused_unless_forced(
    workdir: Path, prepare: Callable[[Path], object]
) -> None:
    out = workdir / "dist"
    out.mkdir()
    prepare(out)
    before = tree(workdir)
    with pytest.raises(SynthError, match="--force") as err:
        make_plan(out, [cluster("a"), cluster("b")])
    assert "\n" not in str(err.value)
    assert tree(workdir) == before
    write(out, cluster("a"), cluster("b"), force=True)
    assert write(out, cluster("a"), cluster("b")) == ()  # now ours
    assert (out / "clusters" / "a" / "kustomization.yaml").is_file()
    assert not (out / "clusters" / "a" / "app.yaml").exists()
    assert hidden_entries(out) == []


@pytest.mark.parametrize("placeholder", [None, ".gitkeep", ".keep"])
def test_an_empty_existing_output_folder_is_fine(workdir: Path, placeholder: str | None) -> None:
    (workdir / "dist").mkdir()
    if placeholder:
        (workdir / "dist" / placeholder).touch()
    assert write(workdir / "dist", cluster("a")) == ("a",)
    assert not placeholder or (workdir / "dist" / placeholder).exists()


def test_forced_symlinked_cluster_is_replaced_but_its_target_is_kept(workdir: Path) -> None:
    out = workdir / "dist"
    elsewhere = workdir / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.yaml").write_text("keep")
    (out / "clusters").mkdir(parents=True)
    (out / "clusters" / "a").symlink_to(elsewhere)
    write(out, cluster("a"), force=True)
    assert not (out / "clusters" / "a").is_symlink()
    assert (elsewhere / "precious.yaml").read_text() == "keep"


UNSAFE_OUT = {
    "output is a file": (
        lambda out: (out.parent.mkdir(), out.write_text("x")),
        "output {out} is not a folder;",
    ),
    "output is inside a file": (
        lambda out: out.parent.write_text("x"),
        "output {out} is not a folder ({out.parent} is a file);",
    ),
    "clusters is a symlink": (
        lambda out: (out.mkdir(parents=True), (out / "clusters").symlink_to(out.parent)),
        "{out}/clusters must be a plain folder",
    ),
    # issue #21: the index would be written (and read) wherever the link points
    "the index folder is a symlink": (
        lambda out: (out.mkdir(parents=True), (out / ".gpustack").symlink_to(out.parent)),
        "{out}/.gpustack must be a plain folder, not a link",
    ),
    "the index folder is a file": (
        lambda out: (out.mkdir(parents=True), (out / ".gpustack").write_text("x")),
        "{out}/.gpustack must be a plain folder, not a link or a file",
    ),
}


@pytest.mark.parametrize(("prepare", "says"), UNSAFE_OUT.values(), ids=UNSAFE_OUT.keys())
def test_unsafe_output_is_refused_even_with_force(
    workdir: Path, prepare: Callable[[Path], object], says: str
) -> None:
    out = workdir / "site" / "dist"
    prepare(out)
    for force in (False, True):
        with pytest.raises(SynthError) as err:
            make_plan(out, [cluster("a")], force=force)
        assert str(err.value).startswith(says.format(out=out))


def test_two_profiles_naming_one_cluster_is_an_error(workdir: Path) -> None:
    with pytest.raises(SynthError) as err:
        make_plan(workdir / "dist", [cluster("a"), cluster("a", "../profiles/b.yaml")])
    assert str(err.value).startswith(
        f"profiles {workdir}/profiles/a.yaml and {workdir}/profiles/b.yaml both define cluster 'a'"
    )
    assert not (workdir / "dist").exists()


def test_cluster_of_a_deleted_profile_is_removed(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    (workdir / "profiles" / "b.yaml").unlink()
    summary = apply(make_plan(out, [cluster("a")], prune=True))
    assert summary.removed == ("b",)
    assert sorted(os.listdir(out / "clusters")) == ["a"]
    assert list(json.loads((out / ".gpustack" / "index.json").read_bytes())["clusters"]) == ["a"]


def test_cluster_of_a_profile_left_out_of_this_run_is_kept(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    assert apply(make_plan(out, [cluster("a", examples=False)])).removed == ()
    assert sorted(os.listdir(out / "clusters")) == ["a", "b"]
    assert "b" in json.loads((out / ".gpustack" / "index.json").read_bytes())["clusters"]


def test_renamed_cluster_replaces_the_old_folder(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    summary = apply(make_plan(out, [cluster("a-renamed", "../profiles/a.yaml")], prune=True))
    assert (summary.written, summary.removed) == (("a-renamed",), ("a",))
    assert sorted(os.listdir(out / "clusters")) == ["a-renamed"]


def test_packaged_default_cluster_goes_once_real_profiles_are_used(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("default", PACKAGED_DEFAULT))
    assert apply(make_plan(out, [cluster("a")], prune=True)).removed == ("default",)
    assert sorted(os.listdir(out / "clusters")) == ["a"]


def test_a_cluster_claimed_by_another_existing_profile_is_an_error(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    (workdir / "profiles" / "c.yaml").write_text("metadata: {name: a}\n")
    # Named as the user finds them, not relative to the output folder as the index keeps them.
    with pytest.raises(SynthError) as err:
        make_plan(out, [cluster("a", "../profiles/c.yaml")])
    assert str(err.value).startswith(
        f"cluster 'a' from {workdir}/profiles/c.yaml is already synthesized from "
        f"{workdir}/profiles/a.yaml, which"
    )
    (workdir / "profiles" / "a.yaml").unlink()  # moved away: c may take the name over
    write(out, cluster("a", "../profiles/c.yaml", examples=False))


def test_failure_while_staging_leaves_the_previous_output_intact(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    before = tree(workdir)
    # Writing "x/y.yaml" after a *file* "x" fails in the OS, midway through cluster b's files.
    broken = ClusterOutput("b", (ManifestFile("x", b"1\n"), ManifestFile("x/y.yaml", b"2\n")))
    b = SourcedCluster(broken, "../profiles/b.yaml")
    plan = make_plan(out, [cluster("a", examples=False), b])
    with pytest.raises(SynthError, match=r"cannot write .*x/y\.yaml: .*left unchanged"):
        apply(plan)
    assert tree(workdir) == before
    assert hidden_entries(out) == []


def test_failed_first_run_leaves_no_output_folder(workdir: Path) -> None:
    broken = ClusterOutput("b", (ManifestFile("x", b"1\n"), ManifestFile("x/y.yaml", b"2\n")))
    plan = make_plan(workdir / "dist", [SourcedCluster(broken, "../profiles/b.yaml")])
    with pytest.raises(SynthError, match="cannot write"):
        apply(plan)
    assert not (workdir / "dist").exists()
    write(workdir / "dist", cluster("b"))  # and the next run does not see a foreign folder


def test_failed_swap_on_a_first_run_leaves_no_output_folder(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_swap_in(staged: Path, target: Path) -> Path | None:
        raise OSError(28, "No space left on device", str(target))

    monkeypatch.setattr(fsswap, "swap_in", failing_swap_in)
    with pytest.raises(SynthError, match="No space left on device"):
        apply(make_plan(workdir / "dist", [cluster("a")]))
    assert not (workdir / "dist").exists()


@pytest.mark.parametrize("atomic_exchange", [True, False], ids=["exchange", "two-renames"])
def test_failure_while_swapping_rolls_back(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, atomic_exchange: bool
) -> None:
    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    before = tree(workdir)
    if not atomic_exchange:
        monkeypatch.setattr(fsswap, "_renameat2", None)
    real_swap_in = fsswap.swap_in
    calls: list[Path] = []

    def flaky_swap_in(staged: Path, target: Path) -> Path | None:
        calls.append(target)
        if len(calls) == 2:  # the second cluster: the first one is already in place
            raise OSError(28, "No space left on device", str(target))
        return real_swap_in(staged, target)

    monkeypatch.setattr(fsswap, "swap_in", flaky_swap_in)
    plan = make_plan(out, [cluster("a", examples=False), cluster("b", examples=False)])
    with pytest.raises(SynthError, match="No space left on device; .* left unchanged"):
        apply(plan)
    assert tree(workdir) == before
    assert hidden_entries(out) == []


def test_forced_run_over_an_index_that_is_a_folder_fails_cleanly(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    index = out / ".gpustack" / "index.json"
    index.unlink()
    index.mkdir()  # something that is not a gpustack index stands where it goes
    before = tree(workdir)
    with pytest.raises(SynthError) as err:
        apply(make_plan(out, [cluster("a", examples=False)], force=True))
    assert str(err.value) == f"cannot replace {index}: Is a directory; {out} was left unchanged"
    assert tree(workdir) == before
    assert hidden_entries(out) == []
    assert set(os.listdir(out / ".gpustack")) - {CACHE_NAME} == {"index.json"}


def test_leftovers_of_an_interrupted_run_are_cleaned(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    (out / "clusters" / ".a.gpustack-tmp-deadbeef" / "driver").mkdir(parents=True)
    (out / "clusters" / ".a.gpustack-old-deadbeef").mkdir()
    (out / "clusters" / ".keep-me").mkdir()
    (out / ".gpustack" / ".index.json.gpustack-tmp-deadbeef").write_text("{}\n")
    write(out, cluster("a", examples=False))
    assert hidden_entries(out) == [".keep-me"]
    assert set(os.listdir(out / ".gpustack")) - {CACHE_NAME} == {"index.json"}


def test_unwritable_clusters_folder_names_the_cluster_not_the_staging_copy(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    real_sibling = fsswap.sibling
    blocker = out / "clusters" / "not-a-folder"

    def blocked_sibling(path: Path, tag: str) -> Path:
        # Creating the staging folder fails in the OS (a file where its parent should be).
        return blocker / "staged" if tag == "tmp" else real_sibling(path, tag)

    blocker.write_text("")
    before = tree(workdir)
    monkeypatch.setattr(fsswap, "sibling", blocked_sibling)
    with pytest.raises(SynthError) as err:
        apply(make_plan(out, [cluster("a", examples=False)]))
    assert str(err.value).startswith(f"cannot write {out}/clusters/a: ")
    assert "gpustack-tmp" not in str(err.value) and "staged" not in str(err.value)
    assert tree(workdir) == before


def test_compare_lists_every_difference_and_writes_nothing(workdir: Path) -> None:
    out = workdir / "dist"
    plan = make_plan(out, [cluster("a")])
    missing = compare(plan)
    assert {d.kind for d in missing} == {"missing"}
    assert len(missing) == len(cluster("a").output.files) + 1  # and the index
    assert not out.exists()

    write(out, cluster("a"), cluster("b"))
    (workdir / "profiles" / "b.yaml").unlink()
    a = out / "clusters" / "a"
    (a / "driver" / "daemonset-nvidia-driver.yaml").write_text("changed\n")
    (a / "common" / "namespace-gpustack-system.yaml").unlink()
    (a / "driver" / "extra.yaml").write_text("x\n")
    before = tree(workdir)
    diffs = compare(make_plan(out, [cluster("a")]))
    assert tree(workdir) == before
    found = {(d.kind, d.path.relative_to(out).as_posix()) for d in diffs}
    b_files = {("extra", f"clusters/b/{p}") for p in cluster("b").output.paths()}
    assert found == {
        ("differs", "clusters/a/driver/daemonset-nvidia-driver.yaml"),
        ("missing", "clusters/a/common/namespace-gpustack-system.yaml"),
        ("extra", "clusters/a/driver/extra.yaml"),
        ("differs", ".gpustack/index.json"),
        *b_files,
    }


def test_compare_is_empty_when_up_to_date(workdir: Path) -> None:
    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    assert compare(make_plan(out, [cluster("a"), cluster("b")])) == []


def test_exchange_swaps_two_folders_atomically(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "from-x").touch()
    (tmp_path / "y").mkdir()
    if not fsswap.exchange(tmp_path / "x", tmp_path / "y"):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    assert os.listdir(tmp_path / "y") == ["from-x"]
    assert os.listdir(tmp_path / "x") == []


def test_staging_reports_each_cluster_it_writes(workdir: Path) -> None:
    """The write phase's progress: one call per cluster actually written (an unchanged one is
    not staged), with how many there are."""
    out = workdir / "dist"
    write(out, cluster("a"))
    calls: list[tuple[int, int]] = []
    plan = make_plan(out, [cluster("a"), cluster("b"), cluster("c", examples=False)])
    summary = apply(plan, lambda done, total: calls.append((done, total)))
    assert summary.written == ("b", "c")
    assert calls == [(1, 2), (2, 2)]


def test_an_unchanged_index_is_left_and_one_reformatted_by_hand_is_rewritten(
    workdir: Path,
) -> None:
    out = workdir / "dist"
    write(out, cluster("a"))
    index = out / ".gpustack" / "index.json"
    before = index.stat()
    canonical = index.read_bytes()
    assert write(out, cluster("a")) == ()  # nothing staged: only the index is compared
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    index.write_bytes(json.dumps(json.loads(canonical)).encode())  # same content, other text
    assert write(out, cluster("a")) == ()
    assert index.read_bytes() == canonical


def test_a_fleet_rendered_again_holds_one_copy_of_its_index(workdir: Path) -> None:
    """Issue #37: planning over an index the caller parsed takes it as it is, an unchanged
    cluster's digests are the index's own map, and its folder is not read into the plan."""
    from gpustack.synth.index import index_path, read_index

    out = workdir / "dist"
    write(out, cluster("a"), cluster("b"))
    index_bytes = index_path(out).read_bytes()
    parsed = read_index(out)
    assert parsed is not None
    changed = cluster("b", examples=False)
    plan = make_plan(out, [cluster("a"), changed], index_bytes=index_bytes, index=parsed)
    assert plan.before is parsed and plan.before_bytes is index_bytes
    assert plan.after.clusters["a"].files is parsed.clusters["a"].files
    assert plan.after.clusters["b"].files is not parsed.clusters["b"].files
    assert set(plan.current) == {"b"}, "only a folder that will change is recorded"
    assert apply(plan).written == ("b",)
    with pytest.raises(SynthError, match="changed while this run"):
        make_plan(out, [cluster("a")], index_bytes=index_bytes + b" ", index=parsed)
