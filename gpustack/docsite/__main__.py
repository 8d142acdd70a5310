"""``python -m gpustack.docsite [--check]``: rewrite (or verify) every generated page."""

from __future__ import annotations

import sys

from gpustack.docsite.pages import COMMAND, files
from gpustack.fields.generated import write_or_check


def main(argv: list[str]) -> int:
    try:
        generated = files()
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    write_or_check(generated, COMMAND, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
