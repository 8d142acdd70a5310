"""``synth --check --diff``: what a change would do to each file, the index included as a real
diff of its entries (issue #24, item 3: it showed as deleted, ``+++ /dev/null``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpustack.synth.report import STALE
from tests.test_synth_cli import PROFILE, synth

DRIVER_DS = "driver/daemonset-nvidia-driver-daemonset.yaml"
INDEX = ".gpustack/index.json"

#: (what changes in alpha's profile, the files of alpha whose diff it shows)
CHANGES = {
    "driver bump": (('"580.105.08"', '"570.195.03"'), [DRIVER_DS]),
    "no change but the index": (("product: L4", "product: L4"), []),
}


def _headers(diff: str) -> list[tuple[str, str]]:
    return re.findall(r"^--- (\S+)\n\+\+\+ (\S+)$", diff, flags=re.M)


def _hunk_lines(diff: str, path: str, sign: str) -> list[str]:
    """The ``sign`` lines of ``path``'s diff, without the sign."""
    chunk = diff.split(f"--- a/{path}\n", 1)[1].split("\n--- ", 1)[0]
    return [
        line[1:]
        for line in chunk.splitlines()[1:]
        if line.startswith(sign) and not line.startswith(sign * 3)
    ]


@pytest.mark.parametrize(("edit", "changed"), CHANGES.values(), ids=CHANGES.keys())
def test_check_diff_shows_the_changed_files_and_a_real_index_diff(
    profiles: Path, edit: tuple[str, str], changed: list[str]
) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    index = out / INDEX
    if not changed:  # an index whose entries differ from what the run records
        index.write_text(index.read_text().replace(f'"{DRIVER_DS}": "sha256:', '"x": "sha256:', 1))
    old_index = index.read_text()
    (profiles / "alpha.yaml").write_text(PROFILE.format(name="alpha").replace(*edit))
    result = synth(profiles, "--out", out, "--check", "--diff")
    assert result.exit_code == STALE, result.output
    wanted = [f"{out}/clusters/alpha/{f}" for f in changed] + [f"{out}/{INDEX}"]
    assert _headers(result.stdout) == [(f"a/{p}", f"b/{p}") for p in wanted]
    assert "/dev/null" not in result.stdout
    # the index diff is the one the run makes: its lines are in the old and the new index
    assert synth(profiles, "--out", out).exit_code == 0
    new_index = index.read_text().splitlines()
    removed, added = (_hunk_lines(result.stdout, f"{out}/{INDEX}", s) for s in "-+")
    assert removed and added
    assert all(line in old_index.splitlines() for line in removed)
    assert all(line in new_index for line in added)
