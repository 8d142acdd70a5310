"""The readiness and placement diagrams on the site, one example profile each.

Why generated: the pictures on the node and MIG pages are :func:`gpustack.explain.mermaid`
of a profile in ``profiles/``, rewritten by ``python -m gpustack.docsite``; a change to the
registry's waits, files or labels changes them, and ``--check`` fails until they are rewritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from gpustack.checker import check_paths
from gpustack.explain import mermaid

ROOT: Final = Path(__file__).resolve().parents[2]
DOCS: Final = ROOT / "docs"

#: (page, marker name, example profile): which profile's graph each page shows.
GRAPHS: Final = (
    (DOCS / "concepts" / "node.md", "node-graph", "profiles/h100-prod-east.yaml"),
    (DOCS / "how-to" / "mig.md", "mig-graph", "profiles/a100-mig-mixed.yaml"),
)


def section(profile: str) -> str:
    """The Markdown of one diagram: a Mermaid block and the command that prints it."""
    checked = check_paths([ROOT / profile])
    if not checked.ok or not checked.profiles:
        raise ValueError(f"{profile}: does not validate; run: gpustack validate {profile}")
    return "\n".join(
        [
            "```mermaid",
            mermaid(checked.profiles[0].profile).rstrip("\n"),
            "```",
            "",
            f"The graph of `{profile}`; `gpustack explain --graph {profile}` prints it (Mermaid"
            " text) for any profile.",
        ]
    )


def sections() -> tuple[tuple[Path, str, str], ...]:
    """(page, marker name, section body) for every generated diagram."""
    return tuple((page, key, section(profile)) for page, key, profile in GRAPHS)
