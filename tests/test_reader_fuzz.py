"""Mutated inputs through every entry point that reads a file: no traceback, no hang (issue #33).

A bounded run of :mod:`tests.reader_fuzz` (:data:`COUNT` seeded inputs per entry point) on
every test run; ``bench/fuzz_readers.py`` runs 10,000 and more per entry point with the same
engine and reports the figures. The last test shows the engine finds what it looks for.
"""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import pytest

from tests.reader_fuzz import ENTRIES, Entry, fuzz

COUNT = 100


@pytest.mark.parametrize("entry", ENTRIES)
def test_no_mutated_input_gives_a_traceback_or_hangs(entry: str) -> None:
    found = fuzz(entry, COUNT)
    assert found.inputs == COUNT
    assert not found.tracebacks, "\n".join(found.tracebacks[:5])
    assert not found.hangs, "\n".join(found.hangs[:5])


def test_the_engine_reports_tracebacks_and_hangs() -> None:
    """A reader that raises, or runs past the deadline, is counted, not missed."""
    with mock.patch("gpustack.nodestate.source.parse", side_effect=KeyError("boom")):
        assert len(fuzz("validate-state", 3).tracebacks) == 3

    def blocks(_: Path) -> None:
        time.sleep(2)  # as a read of a FIFO would: no CPU

    def spins(_: Path) -> None:
        end = time.process_time() + 2
        while time.process_time() < end:
            pass

    patched = {"blocks": Entry(ENTRIES["plugin-config"].seeds, blocks),
               "spins": Entry(ENTRIES["plugin-config"].seeds, spins)}  # fmt: skip
    with (
        mock.patch("tests.reader_fuzz.HANG_S", 0.1),
        mock.patch("tests.reader_fuzz.HANG_WALL_S", 0.3),
        mock.patch.dict(ENTRIES, patched),
    ):
        for name in patched:
            found = fuzz(name, 2)
            assert len(found.hangs) == 2 and not found.tracebacks, name
