"""API access is documented: each (Cluster)Role gpustack synthesizes has exactly the rules of its
component's table, and the README shows that very table (rendered from the same constant)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpustack.constructs import driver_manager, mig_manager, nfd
from gpustack.constructs.rbac import Access, markdown_table
from gpustack.profile.model import DriverUpgrade, MigManager

README = Path(__file__).resolve().parents[2] / "README.md"

#: Every role name gpustack may synthesize -> the rules its component declares.
DOCUMENTED: dict[str, tuple[Access, ...]] = {
    driver_manager.CLUSTER_ROLE: driver_manager.rules(DriverUpgrade().version),
    nfd.WORKER_ROLE: nfd.WORKER_RULES,
    nfd.MASTER_ROLE: nfd.MASTER_RULES,
    nfd.GC_ROLE: nfd.GC_RULES,
    mig_manager.CLUSTER_ROLE: mig_manager.cluster_rules(MigManager().version),
    mig_manager.ROLE: mig_manager.RULES,
}


@pytest.mark.parametrize("role", list(DOCUMENTED))
def test_readme_documents_each_role_table(role: str) -> None:
    text = README.read_text(encoding="utf-8")
    heading = re.search(rf"^#+ .*`{re.escape(role)}`.*$", text, re.MULTILINE)
    assert heading, f"README has no heading naming `{role}`"
    after = text[heading.end() :]
    assert markdown_table(DOCUMENTED[role]) in after.split("\n#", 1)[0], (
        f"README's table under `{role}` differs from the synthesized rules; paste:\n"
        + markdown_table(DOCUMENTED[role])
    )


def test_markdown_table_renders_every_rule() -> None:
    rules = (
        Access("", ("nodes",), ("get",), "read"),
        Access("coordination.k8s.io", ("leases",), ("get", "update"), "lead", names=("x",)),
    )
    assert markdown_table(rules).splitlines()[2:] == [
        "| core | `nodes` | get | read |",
        "| `coordination.k8s.io` | `leases` (`x`) | get, update | lead |",
    ]
