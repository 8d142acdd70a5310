"""The rule registry: one row per rule, the only place a rule's ID, check and meaning are given.

Why one table: the ID a finding prints, the function that finds it, the section it belongs to,
what the reference says it checks and how to fix it, whether it also runs on each node config
and whether a profile may accept its finding are facts about one rule. Stated side by side (as
pre-commit's hook tables do), none can be added, renamed or documented without the others;
``docs/rules.md`` is rendered from this table and a test keeps it current. The rows are data
modules, one per profile area (:mod:`gpustack.profile.rules.rows`), each a table that reads as
one; this module joins them in the reference's order, and the reference lists every rule.

Findings that no rule function makes get an ID here too, so every line ``gpustack validate``
prints names its source: ``load`` (the file is no profile document), ``schema`` (the JSON
Schema), ``profile-names-unique`` (across profiles) and ``accept`` (a broken accept comment).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import date

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules import cluster as cluster_rules
from gpustack.profile.rules import profiles
from gpustack.profile.rules.rows import cluster, device_plugin, dra_gates, driver, workloads
from gpustack.profile.rules.rule import Described, Rule

LOAD = Described(
    id="load",
    section="file",
    summary="the file reads as one YAML mapping (UTF-8, no duplicate keys, no tabs, no merge keys"
    " or custom tags) and its `extends` chain resolves inside the profiles root",
    fix="fix the YAML at the line shown, or the `extends` path",
)
SCHEMA = Described(
    id="schema",
    section="any",
    summary="every key and value is one the profile schema allows (types, enums, patterns,"
    " required keys)",
    fix="follow the hint; the [field reference](reference/profile-fields.md) documents each field",
)
PROFILE_NAMES_UNIQUE = Described(
    id=profiles.PROFILE_NAMES_UNIQUE,
    section="metadata",
    summary="no two profiles checked together share `metadata.name` (each writes"
    " dist/clusters/<name>/)",
    fix="give every profile its own name",
)
KUBERNETES_END_OF_LIFE = Described(
    id="kubernetes-end-of-life",
    section="cluster",
    summary="`kubernetesVersion` is a release upstream still supports on the day of the check"
    " (kubernetes.io's end-of-life dates): a notice by default, an error with"
    " `cluster.endOfLife: error`",
    fix="upgrade the cluster and its `kubernetesVersion`; where a platform's extended support"
    " covers the release, leave `cluster.endOfLife` at notice",
)
ACCEPT = Described(
    id="accept",
    section="comments",
    summary="each `# gpustack: accept <rule> -- <reason>` comment names an acceptable rule, gives"
    " a reason, and matches a finding of that rule on its line",
    fix="fix the comment, or remove it once the finding is gone",
)

#: Every rule, area by area in the order the reference lists them.
RULES: tuple[Rule, ...] = (
    *cluster.RULES,
    *driver.RULES,
    *device_plugin.RULES,
    *workloads.RULES,
    *dra_gates.RULES,
)
#: Every kind of finding, in the order the reference lists them.
ALL: tuple[Described, ...] = (
    LOAD,
    SCHEMA,
    *RULES,
    KUBERNETES_END_OF_LIFE,
    PROFILE_NAMES_UNIQUE,
    ACCEPT,
)

_BY_ID: dict[str, Described] = {d.id: d for d in ALL}


def get(rule_id: str) -> Described | None:
    """The registered rule (or built-in finding kind) with this ID, if any."""
    return _BY_ID.get(rule_id)


def rule_findings(profile: Profile, rules: Iterable[Rule] = RULES) -> list[Finding]:
    """Every rule's findings for one (schema-valid) profile, in rule order, each with its ID."""
    return [finding for rule in rules for finding in rule(profile)]


#: The rules whose findings depend on the day of the check, each with its check, which is
#: given that day: ``(p: Profile, today: date) -> Iterator[Finding]``.
DATED: tuple[tuple[Described, Callable[[Profile, date], Iterator[Finding]]], ...] = (
    (KUBERNETES_END_OF_LIFE, cluster_rules.kubernetes_end_of_life),
)


def dated_findings(profile: Profile, today: date) -> list[Finding]:
    """The findings that depend on the day of the check (a release's end of life), each with
    its ID; ``today`` is given so that tests and a profile's result do not read the clock."""
    return [replace(f, rule=rule.id) for rule, check in DATED for f in check(profile, today)]
