"""The e2e page's figures are the tier's (issue 31 item 4: the page said 225 tests where 227 ran).

Collecting the tier needs no control plane, so its test count, folders and variants are checked
against the sentence that states them whenever the suite runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.folder import folders
from tests.e2e.variants import VARIANTS

REPO = Path(__file__).parents[2]
PAGE = REPO / "docs" / "how-to" / "e2e.md"
STATED = re.compile(r"\((\d+) folders and (\d+) variants; (\d+) tests, the acceptance runs")


def test_the_page_states_the_tiers_size() -> None:
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    found = STATED.search(text)
    assert found, "docs/how-to/e2e.md no longer states the tier's size"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "tests/e2e"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    collected = re.search(r"(\d+) tests? collected", done.stdout)
    assert collected, done.stdout[-2000:] + done.stderr[-2000:]
    stated = tuple(int(g) for g in found.groups())
    assert stated == (len(folders()), len(VARIANTS), int(collected.group(1)))
