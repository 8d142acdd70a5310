"""The fenced code blocks of the README and the documentation site, as data.

A block's info string is either a language (```` ```sh ````) or, for a block that cannot run in
the test suite (it needs a cluster, a registry, an image build), the attribute form
```` ```{.sh .syntax-only} ```` that MkDocs (attr_list + superfences) renders like the plain one.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SYNTAX_ONLY = "syntax-only"

_FENCE = re.compile(
    r"^(?P<indent>[ ]*)(?P<fence>`{3,})(?P<info>[^`\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its classes and its text (dedented)."""

    path: Path
    line: int
    lang: str
    classes: tuple[str, ...]
    text: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO).as_posix()}:{self.line}"

    @property
    def syntax_only(self) -> bool:
        return SYNTAX_ONLY in self.classes


def pages() -> list[Path]:
    """README.md and every page of the site."""
    found = sorted(DOCS.rglob("*.md"))
    return [REPO / "README.md", *found]


def _info(info: str) -> tuple[str, tuple[str, ...]]:
    info = info.strip()
    if info.startswith("{"):
        classes = tuple(re.findall(r"\.([\w-]+)", info))
        return (classes[0] if classes else ""), classes[1:]
    return (info.split()[0] if info else ""), ()


def blocks_of(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        lang, classes = _info(m.group("info"))
        indent = len(m.group("indent"))
        body = textwrap.dedent(m.group("body")) if indent else m.group("body")
        line = text.count("\n", 0, m.start()) + 1
        out.append(Block(path, line, lang, classes, body))
    return out


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks_of(p)]


def page_text(relative: str) -> str:
    """The text of a site page, by its path under docs/ (what the README-reading tests read
    since the README was split into the site)."""
    return (DOCS / relative).read_text(encoding="utf-8")
