"""One report from the acceptance pods' logs: text, JSON, or JUnit XML for CI.

Each pod prints one ``GPUSTACK-ACCEPT {json}`` line per container (the all-reduce: rank 0
only). The report lists every result, and counts the results each Job of the run should have
produced: a pod that never ran (not scheduled, image not pulled) is a failure too, not a gap.
A per-node check that reports one node more often than its pods there print is a failure too
(a queued pod landed where its sibling already ran, so another node went unchecked); where the
groups name their nodes (``--state``), each node without its result is named.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from gpustack import limits
from gpustack.accept.expect import Group

MARK = "GPUSTACK-ACCEPT"
#: ``kubectl logs`` of a whole run (every pod's NCCL output included) is a few MiB; past this
#: the file is refused unread, not parsed line by line.
MAX_LOG_BYTES = 64 << 20


@dataclass(frozen=True)
class Result:
    check: str
    subject: str
    ok: bool
    message: str
    data: dict[str, Any] = field(default_factory=dict, compare=False)


def expected_counts(groups: list[Group]) -> dict[str, int]:
    """Check name -> how many result lines the run should print."""
    counts: dict[str, int] = {}
    for g in groups:
        counts[f"devices{g.suffix}"] = g.nodes * g.containers
        if g.bandwidth is not None and g.view.gpus.per_node >= 2:
            counts[f"allreduce-node{g.suffix}"] = g.nodes
        if g.bandwidth is not None and g.nodes >= 2:
            counts[f"allreduce-nodes{g.suffix}"] = 1
    return counts


def per_node_counts(groups: list[Group]) -> dict[str, tuple[Group, int]]:
    """Per-node check name -> its group and how many result lines one node prints."""
    found: dict[str, tuple[Group, int]] = {}
    for g in groups:
        found[f"devices{g.suffix}"] = (g, g.containers)
        if g.bandwidth is not None and g.view.gpus.per_node >= 2:
            found[f"allreduce-node{g.suffix}"] = (g, 1)
    return found


def _coverage(seen: dict[tuple[str, str], int], groups: list[Group]) -> list[Result]:
    """Failures: a node checked more often than once, and a named node never checked."""
    out: list[Result] = []
    for check, (group, each) in per_node_counts(groups).items():
        for (found, node), have in sorted(seen.items()):
            if found == check and have > each:
                out.append(
                    Result(
                        check,
                        node,
                        False,
                        f"{have} results where one pod prints {each}: checked more than once,"
                        " so another node was left unchecked (write the Jobs with --state,"
                        " which pins each to its node)",
                    )
                )
        for host in group.hosts:
            if seen.get((check, host.name), 0) < each:
                out.append(
                    Result(
                        check,
                        host.name,
                        False,
                        "no result from this node: its pod did not run or did not finish"
                        " (kubectl get pods -l app.kubernetes.io/component=acceptance)",
                    )
                )
    return out


def _message(data: dict[str, Any]) -> str:
    """What a result line says; any field may hold any type (a log is read, not trusted)."""
    problems = data.get("problems") or []
    if problems:
        return "; ".join(map(str, problems)) if isinstance(problems, list) else str(problems)
    if str(data.get("check", "")).startswith("allreduce"):
        return (
            f"bus bandwidth {data.get('busbw')} GB/s >= {data.get('threshold')} GB/s"
            f" ({data.get('world')} ranks, {data.get('backend')})"
        )
    expect = data.get("expect")
    if isinstance(expect, dict) and expect.get("simulated"):
        return "simulated GPUs allocated"
    gpus = data.get("gpus") if isinstance(data.get("gpus"), list) else []
    mig = data.get("mig") if isinstance(data.get("mig"), dict) else {}
    shown = f"{len(gpus)} x {gpus[0]}" if gpus else "no GPU"
    if mig:
        shown += ", MIG " + ", ".join(f"{n} x {p}" for p, n in sorted(mig.items()))
    return shown


def parse_logs(text: str, groups: list[Group]) -> list[Result]:
    """The results in ``text`` (``kubectl logs`` output, any prefix before the mark), then one
    failure per check with fewer results than its Jobs should print."""
    results: list[Result] = []
    seen: dict[str, int] = {}
    by_node: dict[tuple[str, str], int] = {}
    for line in text.splitlines():
        _, mark, rest = line.partition(f"{MARK} ")
        if not mark:
            continue
        try:
            data = limits.load_json(rest, what="result line")
        except limits.Refused:
            results.append(Result("log", line[:80], False, "an unreadable result line"))
            continue
        if not isinstance(data, dict):
            continue
        pod = str(data.get("pod", "?"))
        key = str(data.get("check", "?"))
        subject = f"{data.get('node', '?')}/{pod}"
        if data.get("container") not in (None, "devices"):
            subject += f"/{data['container']}"
        seen[key] = seen.get(key, 0) + 1
        node = str(data.get("node", "?"))
        by_node[(key, node)] = by_node.get((key, node), 0) + 1
        results.append(Result(key, subject, bool(data.get("ok")), _message(data), data))
    results += _coverage(by_node, groups)
    named = {check for check, (g, _) in per_node_counts(groups).items() if g.hosts}
    for check, want in expected_counts(groups).items():
        have = seen.get(check, 0)
        if have < want and check not in named:
            results.append(
                Result(
                    check,
                    "run",
                    False,
                    f"{want - have} of {want} result(s) missing: a pod did not run or did not"
                    " finish (kubectl get pods -l app.kubernetes.io/component=acceptance)",
                )
            )
    return results


def summary(results: list[Result]) -> str:
    failed = sum(1 for r in results if not r.ok)
    word = "check" if len(results) == 1 else "checks"
    return f"{len(results)} {word}, {failed} failed" if failed else f"{len(results)} {word} passed"


def render_text(results: list[Result]) -> str:
    lines = [f"{'PASS' if r.ok else 'FAIL'} {r.check} {r.subject}: {r.message}" for r in results]
    return "\n".join([*lines, summary(results)]) + "\n"


def render_json(results: list[Result]) -> str:
    doc = {
        "ok": all(r.ok for r in results),
        "results": [
            {
                "check": r.check,
                "subject": r.subject,
                "ok": r.ok,
                "message": r.message,
                "data": r.data,
            }
            for r in results
        ],
        "summary": summary(results),
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def render_junit(results: list[Result], name: str = "gpustack accept") -> str:
    """One ``testsuite`` per check, one ``testcase`` per result (a ``failure`` when it failed)."""
    root = ET.Element("testsuites", name=name)
    by_check: dict[str, list[Result]] = {}
    for r in results:
        by_check.setdefault(r.check, []).append(r)
    for check, found in by_check.items():
        failures = sum(1 for r in found if not r.ok)
        suite = ET.SubElement(
            root, "testsuite", name=check, tests=str(len(found)), failures=str(failures)
        )
        for r in found:
            case = ET.SubElement(suite, "testcase", classname=check, name=r.subject)
            if r.ok:
                ET.SubElement(case, "system-out").text = r.message
            else:
                ET.SubElement(case, "failure", message=r.message).text = r.message
    root.set("tests", str(len(results)))
    root.set("failures", str(sum(1 for r in results if not r.ok)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


RENDERERS = {"text": render_text, "json": render_json, "junit": render_junit}
