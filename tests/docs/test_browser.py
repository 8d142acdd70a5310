"""The built site in a real browser (Debian's headless Chromium): every Mermaid diagram renders
to an SVG, with the site's own copy of Mermaid; search finds dotted profile field names by their
last part; no name in a table is broken mid-word; screenshots of the home page and a how-to.

Needs ``chromium`` (apt) and the npm package ``mermaid`` (``npm install --no-save mermaid@...``
in the checkout, or ``$GPUSTACK_MERMAID_JS``); ``.ci/run`` installs both, so under ``CI=true`` a
missing one fails. The screenshots go to ``$GPUSTACK_SCREENSHOTS`` when set (a folder to look at
them in), else to the test's temporary folder; they are never committed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import struct
import subprocess
import threading
import zlib
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpustack.docsite.mermaid_js import ENV, MERMAID_VERSION, SITE_PATH, mermaid_js
from tests.docs.blocks import DOCS, REPO, blocks_of
from tests.docs.browser import Browser, Page, chromium
from tests.docs.test_site import _mkdocs
from tests.tooling import require_tool

#: Pages with diagrams, docs-relative path -> how many Mermaid blocks it has.
DIAGRAMS = {
    p.relative_to(DOCS).as_posix(): n
    for p in sorted(DOCS.rglob("*.md"))
    if (n := sum(b.lang == "mermaid" for b in blocks_of(p)))
}
#: A query -> the profile-fields section that defines it, which the search must list first.
SEARCHED = {
    "nodeSelector": "#cluster",
    "migStrategy": "#deviceplugin",
    "dra.nodeSelector": "#dra",
}
#: Pages whose tables name profile fields.
FIELD_TABLES = ("reference/profile-fields.md", "how-to/migrate-from-gpu-operator.md")
SCREENSHOTS = ("index.md", "how-to/driver-upgrades.md")


def _url(page: str) -> str:
    """A page's URL path under the site root (``use_directory_urls``)."""
    return "" if page == "index.md" else page.removesuffix(".md") + "/"


def _require_mermaid() -> Path:
    found = mermaid_js(REPO)
    if found is not None:
        return found
    message = (
        f"mermaid.min.js not found: run `npm install --no-save --no-package-lock "
        f"mermaid@{MERMAID_VERSION}` in the checkout, or set {ENV} (CI installs it in .ci/run)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site built with the local Mermaid, served over HTTP (the search runs in a web
    worker, which a file:// page may not start); its base URL."""
    script = _require_mermaid()
    built = tmp_path_factory.mktemp("site")
    env = {**os.environ, ENV: str(script), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([_mkdocs(), "build", "--strict", "--site-dir", str(built)], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (built / SITE_PATH).read_bytes() == script.read_bytes()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=built))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium(require_tool("chromium")) as b:
        yield b


@pytest.fixture
def page(browser: Browser) -> Page:
    return browser.new_page()


#: The least a diagram may be shrunk to fit the text column at 1280 px (its text stays readable).
MIN_SCALE = 0.6
#: Per rendered diagram: its SVG's size, how many shapes it drew, and any error text.
RENDERED = """
window.__shadowRoots.map(r => r.querySelector('svg')).filter(s => s).map(s => {
  const box = s.getBoundingClientRect();
  return {width: box.width, height: box.height, scale: box.width / s.viewBox.baseVal.width,
          shapes: s.querySelectorAll('g.node, rect.actor, g.cluster').length,
          error: /Syntax error|Parse error/.test(s.textContent)};
})
"""


def test_ci_installs_what_this_test_needs() -> None:
    """Under ``CI=true`` a missing browser or Mermaid fails this module, so ``.ci/run`` must
    install both, Mermaid at the version the site is tested with (a CI run failed when the
    module said CI installed them and it did not)."""
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"apt-get install[^\n]*(\\\n[^\n]*)*\bchromium\b", ci), "chromium"
    assert f'"mermaid@{MERMAID_VERSION}"' in ci


def test_the_site_has_at_least_three_diagrams() -> None:
    assert sum(DIAGRAMS.values()) >= 3, DIAGRAMS
    assert {"index.md", "concepts/node.md", "how-to/driver-upgrades.md"} <= DIAGRAMS.keys()


@pytest.mark.parametrize("path", sorted(DIAGRAMS))
def test_every_diagram_renders_to_svg(path: str, site: str, page: Page) -> None:
    page.open(site + _url(path))
    want = DIAGRAMS[path]
    page.wait_for(f"({RENDERED}).length >= {want}")
    drawn = page.evaluate(RENDERED)
    assert len(drawn) == want, f"{path}: {len(drawn)} of {want} diagrams rendered"
    for i, svg in enumerate(drawn):
        assert not svg["error"], f"{path}: diagram {i + 1} is Mermaid's error picture"
        assert svg["width"] > 100 and svg["height"] > 50, f"{path}: diagram {i + 1}: {svg}"
        assert svg["shapes"] >= 3, f"{path}: diagram {i + 1} drew {svg['shapes']} shapes"
        # Mermaid shrinks a diagram wider than the text column, its text with it
        assert svg["scale"] >= MIN_SCALE, f"{path}: diagram {i + 1} is shrunk to {svg['scale']:.2f}"
    # a block Mermaid failed on stays a <pre class="mermaid"> in the page
    assert page.evaluate("document.querySelectorAll('pre.mermaid').length") == 0
    scripts = page.evaluate(
        "performance.getEntriesByType('resource').filter(e => e.initiatorType === 'script')"
        ".map(e => e.name)"
    )
    assert [s for s in scripts if not s.startswith(site)] == [], "a script came from elsewhere"
    assert site + SITE_PATH in scripts


def _png_facts(data: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct pixels (RGBA) of a Chromium PNG screenshot."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        chunks.setdefault(kind, []).append(data[at + 8 : at + 8 + size])
        at += 12 + size
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    assert (depth, color) in ((8, 6), (8, 2)), "8-bit RGBA or RGB"
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride = width * channels
    previous = bytearray(stride)
    pixels: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + pred) & 0xFF
        pixels.update(bytes(line[i : i + channels]) for i in range(0, stride, channels * 7))
        previous = line
    return width, height, len(pixels)


@pytest.mark.parametrize("path", SCREENSHOTS)
def test_screenshot_shows_the_page_and_its_diagram(
    path: str, site: str, page: Page, tmp_path: Path
) -> None:
    """The viewport with the page's first diagram scrolled into it: a picture of the right
    size with text and drawing in it (a blank or one-colour page has a handful of colours)."""
    page.open(site + _url(path), width=1280, height=900)
    assert page.wait_for(f"({RENDERED}).length >= 1")
    page.evaluate("window.__shadowRoots[0].host.scrollIntoView({block: 'center'})")
    # the header swaps the site's name for the page's title as the page scrolls, animated
    page.wait_for("new Promise(r => setTimeout(() => r(true), 600))")
    shot = page.screenshot()
    folder = Path(os.environ.get("GPUSTACK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (path.replace("/", "-").removesuffix(".md") + ".png")).write_bytes(shot)
    width, height, colours = _png_facts(shot)
    assert (width, height) == (1280, 900)
    assert colours > 50, f"{path}: the screenshot has {colours} colours: nothing drawn"


SEARCH = """
(async () => {
  const input = document.querySelector('.md-search__input');
  input.focus();
  input.value = %s;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true}));
  return true;
})()
"""
RESULTS = "[...document.querySelectorAll('.md-search-result__link')].map(a => a.href)"


@pytest.mark.parametrize("query", sorted(SEARCHED))
def test_search_lists_the_profile_fields_page_first(query: str, site: str, page: Page) -> None:
    """A field's last part finds the page that defines it, first, with the field's section
    among the page's first sections (the search splits dotted names at the dots)."""
    page.open(site)
    # the search index loads in a worker; a query typed before it is ready shows nothing
    page.wait_for(
        "!document.querySelector('.md-search-result__meta')?.textContent.includes('Initializing')"
    )
    page.evaluate(SEARCH % json.dumps(query))
    fields = site + "reference/profile-fields/"
    found = page.wait_for(f"{RESULTS}.length > 0 && {RESULTS}[0] === {json.dumps(fields)}", 20)
    listed = page.evaluate(RESULTS)
    assert found, f"searching {query!r} lists first: {listed[:5]}"
    sections = [h for h in listed[:6] if h.startswith(fields + "#")]
    assert fields + SEARCHED[query] in sections, f"searching {query!r}: {listed[:6]}"


#: Every word (letters, digits, underscores) of every code span in a table: the word's text and
#: how many lines it is laid out on.
SPLIT_WORDS = r"""
(() => {
  const out = [];
  for (const code of document.querySelectorAll('.md-typeset table code')) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/\w+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        out.push([code.textContent, m[0], tops.size]);
      }
    }
  }
  return out;
})()
"""


@pytest.mark.parametrize("width", [1280, 800, 420])
@pytest.mark.parametrize("path", FIELD_TABLES)
def test_no_name_in_a_table_is_split(path: str, width: int, site: str, page: Page) -> None:
    page.open(site + _url(path), width=width, height=900)
    words = page.evaluate(SPLIT_WORDS)
    assert len(words) > (400 if path.startswith("reference") else 50), "the tables were read"
    split = sorted({f"{name} (at {word!r})" for name, word, lines in words if lines > 1})
    assert split == [], f"{path} at {width}px breaks: " + "; ".join(split[:10])


def test_field_names_may_wrap_at_their_dots() -> None:
    """The profile-field tables mark each dot as a place to wrap (the CSS allows no other)."""
    text = (DOCS / "reference" / "profile-fields.md").read_text(encoding="utf-8")
    assert "| <code>driver.<wbr>enabled</code> |" in text
    assert not re.search(r"^\| `[\w.\[\]]+\.[\w.\[\]]+` \|", text, re.MULTILINE)
