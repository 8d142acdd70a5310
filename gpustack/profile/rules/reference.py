"""The rules reference in Markdown (``docs/rules.md``), rendered from the rule registry.

Why generated: the ID a finding prints, what the rule checks, how to fix it and whether a
profile may accept it are stated once, in :mod:`gpustack.profile.rules.registry`; this page
only lays them out, so it cannot describe a rule that does not exist or miss one that does.
``python -m gpustack.profile.rules.reference`` rewrites it; ``--check`` fails when it is stale
(a test does the same).
"""

from __future__ import annotations

from pathlib import Path

from gpustack.fields.generated import write_or_check
from gpustack.profile.rules.accept import SYNTAX
from gpustack.profile.rules.registry import ALL
from gpustack.profile.rules.rule import Described, Rule

REFERENCE_FILE = Path("docs") / "rules.md"

_INTRO = f"""\
# Validation rules

Generated from `gpustack/profile/rules/registry.py` by
`python -m gpustack.profile.rules.reference`; do not edit by hand.

`gpustack validate` prints every finding with the ID of the rule that found it:

```text
t4.yaml:10:16: $.devicePlugin.migStrategy: T4 does not support MIG (…) (rule: mig-needs-capable-gpu)
```

The same ID is the `rule` field of `--format json` and the title of `--format github`
annotations. `load` and `schema` findings come before any rule runs: a profile must load and
match the [schema](reference/profile-fields.md) before the rules check it.

## Accepting a finding

Where a profile is right and gpustack's tables lag behind (a Kubernetes release gpustack does
not know yet, a driver made to run a newer CUDA through NVIDIA's forward compatibility
packages), the profile may accept the finding with a comment on the line the finding points at,
or on a line of its own directly above it:

```yaml
cluster:
  kubernetesVersion: "1.38"  # gpustack: accept kubernetes-version-supported -- canary pool
driver:
  version: "570.133.20"
workloads:
  examples:
    - name: smoke
      # gpustack: accept workload-cuda-fits-driver -- cuda-compat is installed on these nodes
      image: nvcr.io/nvidia/pytorch:25.08-py3
```

The syntax is `{SYNTAX}` (several IDs may be separated by commas); the reason is
required. The comment accepts only that rule's findings on that line, and only the rules marked
*acceptable* below: the others keep the synthesized manifests consistent, and `load` and
`schema` findings can never be accepted. An accept that names an unknown or unacceptable rule,
has no reason or matches no finding is itself an error (rule `accept`), so accepts do not
outlive what they excuse. Accepted findings fail nothing; the summary counts them
(`5 profiles valid (1 finding accepted)`) and `--format json` lists them with their reasons.

An unused accept in a base (`profiles/_bases/`) is reported only when a run checks whole
profiles folders (as `gpustack validate` without arguments and the pre-commit hook do): a run
on one profile cannot tell whether another profile extending the base needs it.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(described: Described) -> str:
    per_node = isinstance(described, Rule) and described.per_node_config
    cells = (
        f"`{described.id}`",
        f"`{described.section}`" + (" and each node config" if per_node else ""),
        _cell(described.summary),
        _cell(described.fix),
        "yes" if described.acceptable else "",
    )
    return "| " + " | ".join(cells) + " |"


def render_reference() -> str:
    """``docs/rules.md``'s exact text: the introduction, then one row per rule, in the order
    they run."""
    lines = [
        _INTRO,
        "## Rules",
        "",
        "| ID | Section | Checks that | Fix | Acceptable |",
        "| --- | --- | --- | --- | --- |",
        *(_row(d) for d in ALL),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Rewrite (or with ``--check``, verify) ``docs/rules.md`` from the registry."""
    write_or_check(
        {REFERENCE_FILE: render_reference()}, "python -m gpustack.profile.rules.reference"
    )


if __name__ == "__main__":
    main()
