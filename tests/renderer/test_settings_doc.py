"""The plugin how-to's table of the renderer's settings is the one the client reads: every
variable with its default, and no other."""

from __future__ import annotations

import re

from gpustack.render_client.rundir import BASE_DIR, KNOBS, SWITCH
from tests.renderer.procs import REPO

DOC = REPO / "docs" / "how-to" / "argocd-plugin.md"


def documented() -> dict[str, str]:
    """Each ``| `GPUSTACK_RENDERER...` | default |`` row of the how-to: name -> default."""
    rows = re.findall(r"^\| `(GPUSTACK_RENDERER\w*)` \|([^|]*)\|", DOC.read_text(), re.M)
    return {name: default.strip() for name, default in rows}


def test_the_how_to_lists_every_setting_with_its_default() -> None:
    want = {name: f"{default:g}" for name, (default, _) in KNOBS.items()}
    rows = documented()
    assert rows.pop(SWITCH) == "" and BASE_DIR in rows
    rows.pop(BASE_DIR)
    assert rows == want
