"""Keep the C heap's freed memory for the rest of a ``synth`` run instead of handing it back.

Why: glibc's ``free`` returns the top of the heap to the kernel once more than 128 KiB of it
is free, and the next allocations fault the same pages in again, zeroed. A fleet's synthesis
frees and allocates hundreds of MB in turn (a profile's document, a cluster's objects and
files); once gpustack stopped holding every profile's document until the end (issue #37), its
heap top was free often enough that this churn cost more system time than the work: 10,000
clusters cold took 44 s of system CPU instead of 13 s (95 s wall instead of 65 s), and 16 s with
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_`` set as below. The peak resident memory is
the same either way (memory is only kept after it was used); a ``synth`` process ends when the
run does. Not used by the long-lived renderer, whose memory bound wants memory handed back.

Only glibc has ``mallopt``; elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import platform
import sys

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
#: Free memory kept at the heap's top before any is returned, and the extra asked for whenever
#: the heap grows (fewer, larger ``brk`` calls).
TRIM_THRESHOLD = 1 << 30
TOP_PAD = 64 << 20


def keep_heap() -> bool:
    """Set glibc's trim threshold and top pad (see the module docstring); whether it did."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(mallopt(M_TOP_PAD, TOP_PAD))
