"""The node-state rules reference (``docs/node-rules.md``), rendered from :mod:`.registry`.

``python -m gpustack.nodestate.reference`` rewrites it; ``--check`` fails when it is stale (a
test does the same), so the page cannot describe a check that does not exist.
"""

from __future__ import annotations

from pathlib import Path

from gpustack.fields.generated import write_or_check
from gpustack.nodestate.registry import NODE_RULES, NodeRule

REFERENCE_FILE = Path("docs") / "node-rules.md"

_INTRO = """\
# Node-state rules

Generated from `gpustack/nodestate/registry.py` by `python -m gpustack.nodestate.reference`;
do not edit by hand.

`gpustack validate PROFILE --state state.json` (or `--kubectl`) checks what the profile
assumes about the nodes its `cluster.nodeSelector` picks against those nodes, read from
`kubectl get nodes,pods,daemonsets,events -A -o json` (the state `gpustack doctor` reads;
kubectl only gets and lists). Each mismatch is one finding at the profile field, in the same
form as the [profile rules](rules.md), naming the nodes and the value they have:

```text
prod.yaml:21:18: $.driver.kernelVersion: the precompiled driver image is built for kernel \
6.8.0-1031-aws, but node ip-10-0-2-41.ec2.internal has kernel 6.8.0-1039-aws (…) \
(rule: kernel-matches-precompiled)
```

A node that does not tell (no Node Feature Discovery or GPU feature discovery labels before
the stack's first sync) is skipped for the checks that read those labels, never guessed at.
Node-state findings cannot be accepted with a comment: the profile or the nodes must change.

## Rules
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(rule: NodeRule) -> str:
    cells = (f"`{rule.id}`", f"`{rule.field}`", rule.reads, rule.summary, rule.fix)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def render_reference() -> str:
    lines = [
        _INTRO,
        "| ID | Profile field | Reads on the nodes | Checks that | Fix |",
        "| --- | --- | --- | --- | --- |",
        *(_row(r) for r in NODE_RULES),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    write_or_check({REFERENCE_FILE: render_reference()}, "python -m gpustack.nodestate.reference")


if __name__ == "__main__":
    main()
