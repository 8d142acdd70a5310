"""A fleet's files kept in the spool are the files: same bytes, same folders, same index."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.synth import pipeline, writer
from gpustack.synth.index import INDEX_DIR
from gpustack.synth.layout import ClusterOutput, ManifestFile
from gpustack.synth.plan import existing_files
from gpustack.synth.spool import Spool
from gpustack.synth.statcache import CACHE_NAME

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ["lab-1gpu.yaml", "h100-staging.yaml", "a100-mig-mixed.yaml"]


@pytest.mark.parametrize(
    "contents",
    [[b""], [b"x"], [b"a" * 70_000, b"", b"\0\n\xff"], [bytes(range(256)) * 40] * 3],
    ids=["empty", "one byte", "mixed", "repeated"],
)
def test_kept_files_read_back_as_they_were(contents: list[bytes]) -> None:
    spool = Spool()
    files = tuple(ManifestFile(f"f{i}.yaml", c) for i, c in enumerate(contents))
    output = ClusterOutput("c", files)
    first = spool.keep(output)
    second = spool.keep(output)  # after other files: offsets are the spool's own
    for kept in (first, second):
        assert all(not isinstance(f.stored, bytes) for f in kept.files)
        assert [f.content for f in kept.files] == contents
        assert kept == output


def synthesized(tmp: Path, spool_min: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    result = check_paths([REPO / "profiles" / name for name in EXAMPLES])
    assert result.ok
    sources = [pipeline.Source(p.path, p.profile, files=p.files) for p in result.profiles]
    monkeypatch.setattr(pipeline, "SPOOL_MIN", spool_min)
    clusters = pipeline.synthesize_clusters(sources, tmp)
    spooled = {not isinstance(f.stored, bytes) for c in clusters for f in c.output.files}
    assert spooled == {spool_min <= len(sources)}
    writer.run(tmp, clusters)
    # not the local stat cache: its keys hold each write's inodes and ctimes by design
    return {
        rel: p.read_bytes()
        for rel, p in existing_files(tmp).items()
        if not rel.startswith(f"{INDEX_DIR}/{CACHE_NAME}/")
    }


def test_a_spooled_fleet_is_written_as_one_kept_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_memory = synthesized(tmp_path / "memory", 100, monkeypatch)
    spooled = synthesized(tmp_path / "spool", 1, monkeypatch)
    assert len(in_memory) > 50
    assert spooled == in_memory  # every cluster file, and the index
