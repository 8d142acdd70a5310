"""What a rule of the registry is: a documented kind of finding (:class:`Described`), and a
semantic rule that finds it (:class:`Rule`).

Why its own module: the registry's rows are data modules, one per profile area
(:mod:`gpustack.profile.rules.rows`), that all build these; :mod:`gpustack.profile.rules.registry`
joins them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules import node_configs

Check = Callable[[Profile], Iterator[Finding]]

#: A rule ID: lowercase words joined by single hyphens.
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class Described:
    """A kind of finding as the reference documents it.

    ``acceptable``: a profile may accept the finding with a ``# gpustack: accept`` comment. Only
    rules about facts gpustack's tables may not know yet (a new Kubernetes release, a driver or
    CUDA combination NVIDIA supports by other means) are; rules that keep the synthesized
    manifests consistent (names, resources, MIG layouts) never are.
    """

    id: str
    section: str
    summary: str
    fix: str
    acceptable: bool = False


@dataclass(frozen=True, kw_only=True)
class Rule(Described):
    """A semantic rule: ``check`` finds its problems in one schema-valid profile.

    ``per_node_config``: a device plugin rule that must also hold for each node config's view
    (see :func:`~gpustack.profile.rules.node_configs.per_node_config`). Calling the rule runs it
    that way and stamps its ID on every finding.
    """

    check: Check
    per_node_config: bool = False
    _run: Check = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        run = node_configs.per_node_config(self.check) if self.per_node_config else self.check
        object.__setattr__(self, "_run", run)

    def __call__(self, profile: Profile) -> Iterator[Finding]:
        for finding in self._run(profile):
            yield replace(finding, rule=self.id)
