"""The progress line: a count on a terminal after a moment, nothing otherwise."""

from __future__ import annotations

import io

from gpustack.synth.report import ProgressLine


def test_progress_counts_on_one_line_and_clears_it() -> None:
    stream = io.StringIO()
    progress = ProgressLine(stream, 3, enabled=True, delay=0, every=0)
    for done in (1, 2, 3):
        progress(done)
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 4 and "\n" not in text
    assert "synthesized 3/3 clusters" in text and text.endswith("\r\033[K")


def test_no_progress_off_a_terminal_or_for_short_runs() -> None:
    for progress in (
        ProgressLine(io.StringIO(), 100, enabled=False, delay=0, every=0),
        ProgressLine(io.StringIO(), 100, enabled=True, delay=60, every=0),
        ProgressLine(io.StringIO(), 1, enabled=True, delay=0, every=0),
    ):
        progress(1)
        progress.close()
        assert isinstance(progress.stream, io.StringIO)
        assert progress.stream.getvalue() == ""


def test_the_write_phase_counts_on_the_same_line_with_a_total_known_late() -> None:
    stream = io.StringIO()
    progress = ProgressLine(stream, 0, enabled=True, delay=0, every=0, verb="wrote")
    for done in (1, 2):
        progress(done, 2)
    progress.close()
    text = stream.getvalue()
    assert "wrote 1/2 clusters" in text and "wrote 2/2 clusters" in text
    assert "\n" not in text and text.endswith("\r\033[K")
    # one cluster to write: no line at all
    single = ProgressLine(io.StringIO(), 0, enabled=True, delay=0, every=0, verb="wrote")
    single(1, 1)
    assert isinstance(single.stream, io.StringIO) and single.stream.getvalue() == ""
