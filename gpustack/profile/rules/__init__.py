"""Semantic rules: what a schema cannot say about a profile.

Each rule is a small function ``Profile -> Iterator[Finding]`` in the module of the section it
checks (:mod:`.cluster`, :mod:`.driver`, :mod:`.gpus`, :mod:`.device_plugin`, :mod:`.sharing`,
:mod:`.node_configs`, :mod:`.workloads`; :mod:`.profiles` across profiles), run only on profiles
that passed the schema. Every message says what is wrong and how to fix it. Facts (drivers,
architectures, MIG layouts) come from :mod:`gpustack.profile.catalog`; what a profile means (the
resources it advertises, the one a job requests) from :mod:`gpustack.profile.derive`. Which rules
exist, with their IDs, is the table in :mod:`.registry`.
"""

from __future__ import annotations

from gpustack.profile.rules.profiles import cross_profile_findings
from gpustack.profile.rules.registry import ALL, RULES, dated_findings, get, rule_findings
from gpustack.profile.rules.rule import Described, Rule

__all__ = [
    "ALL",
    "RULES",
    "Described",
    "Rule",
    "cross_profile_findings",
    "dated_findings",
    "get",
    "rule_findings",
]
