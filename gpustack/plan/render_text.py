"""The plan for a terminal and for a pull request: plain text, and Markdown for a comment.

Both list each changed cluster's rollouts first (what replaces pods, and what that does on the
nodes), then MIG layouts, configs, what changes without recreating a pod, and the manual steps
with their commands; unchanged clusters are counted on one line.
"""

from __future__ import annotations

from gpustack.plan.model import ClusterPlan, ConfigChange, Plan
from gpustack.plan.words import effect, how, mig, title
from gpustack.plan.workloads import CREATED
from gpustack.profile.derive import MIG_CONFIG_LABEL

#: The first line of a pull-request comment: a bot finds its earlier comment by it.
MARKER = "<!-- gpustack-plan -->"


def _config(c: ConfigChange) -> str:
    users = "; ".join(
        f"{r} {'rolls' if rolls else 'does not roll (running pods keep the old content)'}"
        for r, rolls in c.mounted_by
    )
    return f"{c.ref} changes {', '.join(c.keys)}" + (f": {users}" if users else "")


def _whole(c: ClusterPlan) -> list[tuple[int, str]]:
    """A cluster added or removed in one piece: counted, not listed (the JSON lists each)."""
    if c.status == "added":
        return [(0, f"new cluster: {len(c.added)} objects; its first sync installs the stack")]
    why = f"cluster removed: only a sync that prunes deletes its {len(c.removed)} objects, or"
    return [(0, why), *((2, command) for step in c.manual for command in step.commands)]


def _lines(c: ClusterPlan) -> list[tuple[int, str]]:
    """The cluster's plan as (depth, line) pairs, for either rendering to indent."""
    if c.status in ("added", "removed"):
        return _whole(c)
    out: list[tuple[int, str]] = []
    for r in c.rollouts:
        what = "" if r.changed == ("new",) else f"; template changes: {', '.join(r.changed)}"
        verb = "starts" if r.strategy == CREATED else "rolls"
        out.append((0, f"{verb} {title(r)}: {how(r)}{what}"))
        out.append((1, f"nodes: {r.nodes}"))
        out += [(1, effect(r, e)) for e in r.effects]
    if c.mig_configs:
        out.append((0, mig(c.mig_configs, MIG_CONFIG_LABEL)))
    out += [(0, f"config: {_config(x)}") for x in c.configs]
    groups = (
        ("changed in place, no pod recreated", c.in_place),
        ("replaced, runs again (a Job's template is immutable)", c.replaced),
        ("metadata only, no pod recreated", c.metadata_only),
        ("new", c.added),
        ("removed", c.removed),
    )
    for what, refs in groups:
        out += [(0, f"{what}: {ref}") for ref in refs]
    for step in c.manual:
        out.append((0, f"manual ({step.kind}): {step.ref}: {step.why}"))
        out += [(2, command) for command in step.commands]
    return out


def _unchanged(plan: Plan) -> list[str]:
    same = [c.name for c in plan.clusters if c.status == "unchanged"]
    return [f"unchanged: {len(same)} cluster{'s' if len(same) != 1 else ''}"] if same else []


def text(plan: Plan) -> str:
    lines = [f"plan: {plan.base} → {plan.head}"]
    for c in plan.clusters:
        if c.status == "unchanged":
            continue
        lines.append(f"cluster {c.name}: {c.status}")
        for depth, line in _lines(c):
            lines.append("  " * (depth + 1) + ("$ " if depth == 2 else "") + line)
    lines += _unchanged(plan)
    if not plan.disruptive:
        lines.append("no pod is replaced and no manual step is needed")
    return "\n".join(lines) + "\n"


def github(plan: Plan) -> str:
    """A Markdown comment: a section per changed cluster, commands in shell blocks."""
    lines = [MARKER, f"### gpustack plan: `{plan.base}` → {plan.head}", ""]
    for c in plan.clusters:
        if c.status == "unchanged":
            continue
        lines += [f"#### `{c.name}`: {c.status}", ""]
        commands: list[str] = []
        for depth, line in _lines(c):
            if depth == 2:
                commands.append(line)
                continue
            if commands:
                lines += ["  ```sh", *(f"  {x}" for x in commands), "  ```"]
                commands = []
            lines.append(("  " * depth) + f"- {line}")
        if commands:
            lines += ["  ```sh", *(f"  {x}" for x in commands), "  ```"]
        lines.append("")
    lines += _unchanged(plan)
    if not plan.disruptive:
        lines.append("No pod is replaced and no manual step is needed.")
    return "\n".join(lines) + "\n"
