"""Mutated inputs through every entry point that reads a file: tracebacks and hangs (issue #33).

Why: the guarantee is "0 tracebacks and 0 hangs over at least 10,000 mutated inputs per entry
point". tests/test_reader_fuzz.py runs a few hundred per entry point on every test run; this
runs as many as asked (default 10,000 each, seeded) and prints, per entry point, the inputs,
tracebacks, hangs (tests/reader_fuzz.HANG_S of CPU), wall seconds and the CPU seconds of the
slowest input, then
the first failures in full. Exit 1 if any entry point had a traceback or a hang.

Usage: ``.venv/bin/python bench/fuzz_readers.py [--count 10000] [--seed N] [ENTRY ...]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reader_fuzz import ENTRIES, HANG_S, HANG_WALL_S, fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("entries", nargs="*", choices=[[], *ENTRIES], default=[])
    args = parser.parse_args()
    names = args.entries or list(ENTRIES)
    print(f"{'entry point':<24} {'inputs':>7} {'tracebacks':>10} {'hangs':>6} {'wall s':>8} "
          f"{'slowest CPU s':>13}  (hang: past {HANG_S:g} CPU s or {HANG_WALL_S:g} s)",
          flush=True)  # fmt: skip
    failures: list[str] = []
    for name in names:
        found = fuzz(name, args.count, args.seed)
        print(
            f"{name:<24} {found.inputs:>7} {len(found.tracebacks):>10} {len(found.hangs):>6} "
            f"{found.seconds:>8.1f} {found.slowest:>13.2f}",
            flush=True,
        )
        failures += found.tracebacks[:3] + found.hangs[:3]
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
