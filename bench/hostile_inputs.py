"""Time and peak memory of each entry point's answer to each hostile file (issue #21).

Why: the guarantee is "every entry point answers each hostile input in under 2 s and 200 MB,
with one line". tests/test_hostile_inputs.py holds each run to hard limits (a timeout and an
address-space limit) and checks the line; this measures what the answers cost, per process
(wall seconds and peak resident memory from ``wait4``), with the same commands and files.

Usage: ``.venv/bin/python bench/hostile_inputs.py [ENTRY_PREFIX]``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_hostile_inputs import ENTRIES, INPUTS, applies, make_input, run_hostile  # noqa: E402

#: What the issue promises for each answer.
MAX_SECONDS = 2.0
MAX_RSS_MB = 200


def main(prefix: str = "") -> int:
    worst_s = worst_mb = 0.0
    over = 0
    print(f"{'entry point':<20} {'input':<18} {'status':>6} {'seconds':>8} {'peak MB':>8}")
    for entry_name, entry in ENTRIES.items():
        if not entry_name.startswith(prefix):
            continue
        for input_name in INPUTS:
            if not applies(entry_name, input_name):
                continue
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                file = make_input(input_name, folder)
                stdin = str(folder / file) if entry.stdin else None
                ran = run_hostile(entry, file, folder, stdin_path=stdin)
            mb = ran.max_rss_kib / 1024
            worst_s, worst_mb = max(worst_s, ran.seconds), max(worst_mb, mb)
            over += ran.seconds > MAX_SECONDS or mb > MAX_RSS_MB
            print(
                f"{entry_name:<20} {input_name:<18} {ran.status:>6} {ran.seconds:>8.2f} {mb:>8.1f}"
            )
    print(
        f"worst: {worst_s:.2f} s, {worst_mb:.1f} MB; "
        f"over {MAX_SECONDS} s or {MAX_RSS_MB} MB: {over}"
    )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
