"""MkDocs hook (``hooks:`` in ``mkdocs.yml``): serve Mermaid's JavaScript from the site itself.

Why: the theme (Material) draws every ```` ```mermaid ```` block with the global ``mermaid``
when a page already has one, and otherwise loads it from a CDN as the page opens. A site that
loads a script from a CDN at view time shows no diagram offline, behind a proxy, or when the CDN
is down, and runs code nobody reviewed. So the build copies ``mermaid.min.js`` from the npm
package installed next to the checkout (``npm install --no-save mermaid@<MERMAID_VERSION>``, not
committed) into the site, where ``extra_javascript`` loads it before the theme's bundle needs it.
A build without the package still builds (the theme then falls back to its CDN); the browser
test (``tests/docs/test_browser.py``) builds with it and proves every diagram renders.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

#: The Mermaid release the site is tested with (the theme's own loader asks for ``mermaid@11``).
MERMAID_VERSION: Final = "11.17.2"
#: Where the site serves it from (``extra_javascript`` in ``mkdocs.yml`` names this path).
SITE_PATH: Final = "assets/javascripts/mermaid.min.js"
#: An explicit ``mermaid.min.js`` to use instead of the checkout's ``node_modules``.
ENV: Final = "GPUSTACK_MERMAID_JS"


def mermaid_js(root: Path) -> Path | None:
    """The ``mermaid.min.js`` the build serves: ``$GPUSTACK_MERMAID_JS``, else the npm package
    under ``root/node_modules``; ``None`` when neither exists."""
    named = os.environ.get(ENV)
    found = Path(named) if named else root / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
    return found if found.is_file() else None


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    script = mermaid_js(Path(config.config_file_path).parent)
    if script is not None and files.get_file_from_path(SITE_PATH) is None:
        files.append(File.generated(config, SITE_PATH, abs_src_path=str(script)))
    return files
