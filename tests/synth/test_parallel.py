"""Synthesis in worker processes gives the very bytes synthesis in this process gives, and
the packaged files left out of the generator digest are never loaded by synthesis."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.profile.model import Profile
from gpustack.synth import parallel
from gpustack.synth.digest import NOT_SYNTHESIS, package_root
from gpustack.synth.errors import SynthError
from gpustack.synth.node import prepare_node

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ["lab-1gpu.yaml", "h100-staging.yaml", "a100-mig-mixed.yaml"]


def jobs() -> list[tuple[Path, object]]:
    result = check_paths([REPO / "profiles" / name for name in EXAMPLES])
    assert result.ok
    return [(p.path, p.profile) for p in result.profiles]


#: Two workers' worth of shapes, by the rule's own constant.
TWO = 2 * parallel.PER_WORKER_MIN


@pytest.mark.parametrize(
    ("shapes", "workers", "expected"),
    [(1, 8, 0), (TWO - 1, 2, 0), (TWO, 2, 2), (TWO, 1, 0), (10 * TWO, 3, 3)],
)
def test_workers_start_only_for_batches_worth_it(shapes: int, workers: int, expected: int) -> None:
    assert parallel.workers_for(shapes, workers) == expected


def named(profile: Profile, name: str) -> Profile:
    return replace(profile, metadata=replace(profile.metadata, name=name))


def test_clusters_of_one_shape_go_to_one_worker() -> None:
    """Profiles equal but for their names are one shape: all of a shape land in one worker
    (where all but the first are render-cache hits), shapes are spread by cost, and every
    cluster is dealt exactly once, in input order within a worker."""
    a, b, c = (p for _, p in jobs())
    fleet = [named(x, f"c{i}") for i, x in enumerate([a, b, a, c, a, b, a, a])]
    shares = parallel.deal([parallel.shape(p) for p in fleet], 2)
    assert sorted(i for share in shares for i in share) == list(range(len(fleet)))
    for share in shares:
        assert share == sorted(share)
    where = {parallel.shape(fleet[i]): w for w, share in enumerate(shares) for i in share}
    assert len(where) == 3  # a, b and c: each shape in exactly one worker
    for w, share in enumerate(shares):
        for i in share:
            assert where[parallel.shape(fleet[i])] == w
    assert {len(s) for s in shares} == {5, 3}  # a (5) alone; b (2) and c (1) together


def test_a_name_does_not_make_a_shape_but_any_other_value_does() -> None:
    a, _, _ = (p for _, p in jobs())
    assert parallel.shape(named(a, "x")) == parallel.shape(named(a, "y"))
    other = replace(a, gpus=replace(a.gpus, per_node=a.gpus.per_node + 1))
    assert parallel.shape(other) != parallel.shape(a)


def test_workers_write_what_this_process_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare_node()
    todo = jobs()
    inline = parallel.synthesize_many(todo, 1)  # type: ignore[arg-type]
    monkeypatch.setattr(parallel, "PER_WORKER_MIN", 1)
    seen: list[int] = []
    in_workers = parallel.synthesize_many(todo, 2, seen.append)  # type: ignore[arg-type]
    assert in_workers == inline
    assert sorted(seen) == [1, 2, 3]


def test_a_worker_that_dies_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare_node()
    monkeypatch.setattr(parallel, "PER_WORKER_MIN", 1)
    monkeypatch.setattr(parallel, "WORKER_FLAGS", ("-c", "import sys; sys.exit(7)", "--"))
    with pytest.raises(SynthError, match="worker stopped unexpectedly"):
        parallel.synthesize_many(jobs()[:2], 2)  # type: ignore[arg-type]


def test_files_left_out_of_the_generator_digest_are_never_loaded() -> None:
    """Synthesize every example profile, then list the gpustack modules that were loaded: none
    may come from a path :data:`NOT_SYNTHESIS` leaves out (else a change there would not
    invalidate the clusters it affects)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from click.testing import CliRunner\n"
        "from gpustack.cli import main\n"
        f"r = CliRunner().invoke(main, ['synth', '{REPO / 'profiles'}', '--out', sys.argv[1],"
        " '--jobs', '1'])\n"
        "assert r.exit_code == 0, r.output\n"
        "for m in list(sys.modules.values()):\n"
        "    f = getattr(m, '__file__', None)\n"
        "    if f: print(f)\n"
    )
    out = Path(__import__("tempfile").mkdtemp()) / "dist"
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    root = package_root()
    loaded = [
        Path(f).resolve().relative_to(root).as_posix()
        for f in done.stdout.split()
        if Path(f).resolve().is_relative_to(root)
    ]
    assert "constructs/driver.py" in loaded  # the listing works
    outside = [m for m in loaded if m.startswith(NOT_SYNTHESIS)]
    plugin_own = [m for m in loaded if m.startswith("plugin/") and m.count("/") == 1]
    assert outside == []
    assert plugin_own in ([], ["plugin/__init__.py"])


def test_deciding_on_o_never_starts_node_in_the_dealing_process() -> None:
    code = (
        "import sys\n"
        "from gpustack.synth import parallel\n"
        "parallel.optimize()\n"
        "print(sorted(m for m in ('jsii', 'cdk8s') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("compiled", "dont_write", "expected"),
    [(True, True, True), (False, False, True), (False, True, False)],
    ids=["optimized bytecode exists", "bytecode may be written", "neither"],
)
def test_o_only_where_it_will_not_recompile_every_worker(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    compiled: bool,
    dont_write: bool,
    expected: bool,
) -> None:
    import importlib.util

    package = tmp_path / "fakebindings" / "k8s"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    source = package / "__init__.py"
    source.write_text("X = 1\n")
    if compiled:
        cached = Path(importlib.util.cache_from_source(str(source), optimization=1))
        cached.parent.mkdir()
        cached.write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(parallel, "_BINDINGS", "fakebindings.k8s")
    monkeypatch.setattr(sys, "dont_write_bytecode", dont_write)
    assert parallel.optimize() is expected


@pytest.mark.parametrize(
    ("count", "jobs", "starts"),
    [(1, 2, True), (TWO - 1, 2, True), (TWO, 2, False), (10 * TWO, 1, True)],
)
def test_cdk8s_starts_early_only_for_synthesis_in_this_process(
    monkeypatch: pytest.MonkeyPatch, count: int, jobs: int, starts: bool
) -> None:
    from gpustack.synth import node

    started: list[int] = []
    monkeypatch.setattr(node, "start_cdk8s", lambda: started.append(1))
    parallel.prepare_to_synthesize(count, jobs)
    assert started == ([1] if starts else [])
