"""Locate node-state findings in the profile and add them to a checker result.

The checker (:func:`gpustack.checker.check_paths`) has checked the profile on its own; a
profile that passed is loaded once more to get its position map, so a node finding prints in
the same ``file:line:col: $.path: message (hint) (rule: id)`` form at the line of the field it
holds to the nodes (a field left at its default: its nearest written parent; a field set in an
``extends`` base: that base's line, naming the profile).
"""

from __future__ import annotations

import dataclasses

from gpustack.checker import CheckResult, Issue
from gpustack.kube.nodes import Nodes
from gpustack.kube.state import ClusterState
from gpustack.nodestate.registry import node_findings
from gpustack.profile.document import display_path, format_path
from gpustack.profile.loader import ProfileLoader, profiles_root


def check_against(result: CheckResult, cluster: ClusterState) -> CheckResult:
    """``result`` with every valid profile's node-state findings added as issues."""
    loader = ProfileLoader()
    added: list[Issue] = []
    failed = 0
    for loaded in result.profiles:
        found = node_findings(loaded.profile, Nodes.of(cluster, loaded.profile))
        if not found:
            continue
        failed += 1
        shown = display_path(loaded.path)
        doc = loader.load(loaded.path, shown, profiles_root(loaded.path))
        for finding in found:
            file, line, col = doc.locate(finding.path)
            message = finding.message
            if file != doc.file:
                message += f" [in profile {doc.file}]"
            added.append(
                Issue(
                    file,
                    line,
                    col,
                    format_path(finding.path),
                    message,
                    finding.hint,
                    finding.rule,
                )
            )
    return dataclasses.replace(
        result,
        issues=(*result.issues, *sorted(added, key=lambda i: (i.file, i.line, i.col))),
        files_failed=result.files_failed + failed,
    )
