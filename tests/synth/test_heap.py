"""``synth`` keeps the C heap's freed memory for its run (:mod:`gpustack.synth.heap`): without
it, glibc hands the heap's top back to the kernel as soon as it is free, and a fleet's run
spent more system time faulting the same pages in again than working (issue #37)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

#: Allocates 200 MB in blocks malloc takes from the heap (above pymalloc's 512 bytes, below the
#: mmap threshold), frees them, and prints how much of it stayed resident (MiB).
PROBE = """
import sys
from gpustack.synth.heap import keep_heap

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) >> 10

if sys.argv[1] == "keep":
    assert keep_heap()
blocks = [bytes(4000) for _ in range(50_000)]
full = rss()
del blocks
print(rss() - full + 200)
"""


def kept_mib(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's",
)
def test_freed_heap_memory_is_kept_only_when_asked() -> None:
    assert kept_mib("default") < 50  # glibc trimmed the freed top of the heap
    assert kept_mib("keep") > 150  # kept, for the run's next allocations


def test_a_synth_run_keeps_its_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The synth action asks for it before anything else (and so does nothing else)."""
    from gpustack.actions import synth as action
    from gpustack.synth import heap

    asked: list[str] = []
    monkeypatch.setattr(heap, "keep_heap", lambda: asked.append("keep") or True)

    def stop(options: object) -> None:
        raise RuntimeError("stop")

    monkeypatch.setattr(action, "resolve", stop)
    with pytest.raises(RuntimeError, match="stop"):
        action.run(action.SynthOptions())
    assert asked == ["keep"]
