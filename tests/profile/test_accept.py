"""``# gpustack: accept <rule> -- <reason>``: a profile keeps a finding knowingly, never silently.

Each case is a profile's text and exactly what validating it reports: the issues (as printed)
and the accepted findings. An accept must name an acceptable rule, give a reason and match a
finding of that rule on its line; anything else is itself an issue.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.profile.rules import accept, registry

HEAD = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: p\n"
K8S = 'cluster:\n  kubernetesVersion: "1.28"{comment}\n'
K8S_FINDING = (
    "profiles/p.yaml:6:22: $.cluster.kubernetesVersion: Kubernetes 1.28 is not supported"
    " (use 1.29 to 1.37) (rule: kubernetes-version-supported)"
)
REASON = " -- canary pool runs it"


def at_line_6(message: str, col: int = 30, path: str = "$.cluster.kubernetesVersion") -> str:
    return f"profiles/p.yaml:6:{col}: {path}: {message} (rule: accept)"


#: case -> (profile text, issues printed, (line, rule, reason) of each accepted finding)
CASES: dict[str, tuple[str, list[str], list[tuple[int, str, str]]]] = {
    "trailing": (
        HEAD + K8S.format(comment=f"  # gpustack: accept kubernetes-version-supported{REASON}"),
        [],
        [(6, "kubernetes-version-supported", "canary pool runs it")],
    ),
    "line above, past other comments": (
        HEAD
        + "cluster:\n  # gpustack: accept kubernetes-version-supported, driver-supports-gpu"
        + REASON
        + '\n  # the canary pool\n  kubernetesVersion: "1.28"\n',
        [
            "profiles/p.yaml:6:3: $.cluster.kubernetesVersion: nothing to accept: rule"
            " driver-supports-gpu reports nothing on line 8 (remove the accept; the finding it"
            " was for is gone) (rule: accept)"
        ],
        [(8, "kubernetes-version-supported", "canary pool runs it")],
    ),
    "a label the team sets itself": (
        HEAD
        + "cluster:\n  nodeSelector:\n    # gpustack: accept node-selector-label-known -- our"
        + " provisioning labels GPU pools\n    team.example.com/gpu-pool: training\n",
        [],
        [(8, "node-selector-label-known", "our provisioning labels GPU pools")],
    ),
    "no reason": (
        HEAD + K8S.format(comment="  # gpustack: accept kubernetes-version-supported"),
        [
            K8S_FINDING,
            at_line_6(
                "an accept needs a reason after -- (e.g. # gpustack: accept"
                " kubernetes-version-supported -- <reason>)"
            ),
        ],
        [],
    ),
    "empty reason": (
        HEAD + K8S.format(comment="  # gpustack: accept kubernetes-version-supported --  "),
        [
            K8S_FINDING,
            at_line_6(
                "an accept needs a reason after -- (e.g. # gpustack: accept"
                " kubernetes-version-supported -- <reason>)"
            ),
        ],
        [],
    ),
    "no rule": (
        HEAD + K8S.format(comment=f"  # gpustack: accept{REASON}"),
        [
            K8S_FINDING,
            at_line_6("an accept names no rule (write # gpustack: accept <rule-id> -- <reason>)"),
        ],
        [],
    ),
    "unknown rule": (
        HEAD + K8S.format(comment=f"  # gpustack: accept kubernetes-version{REASON}"),
        [
            K8S_FINDING,
            at_line_6(
                "unknown rule 'kubernetes-version' (did you mean 'kubernetes-version-supported'?)"
            ),
        ],
        [],
    ),
    "unknown verb": (
        HEAD + K8S.format(comment="  # gpustack: ignore kubernetes-version-supported"),
        [
            K8S_FINDING,
            at_line_6(
                "unknown gpustack comment 'ignore kubernetes-version-supported' (write"
                " # gpustack: accept <rule-id> -- <reason>)"
            ),
        ],
        [],
    ),
    "schema findings cannot be accepted": (
        HEAD + K8S.format(comment=f"  # gpustack: accept schema{REASON}"),
        [
            K8S_FINDING,
            at_line_6(
                "rule schema cannot be accepted (fix what it reports; docs/rules.md marks the"
                " rules a profile may accept)"
            ),
        ],
        [],
    ),
    "a rule that keeps manifests consistent cannot be accepted": (
        HEAD
        + "workloads:\n  examples:\n    - name: a\n    - name: a"
        + f"  # gpustack: accept workload-names-unique{REASON}\n",
        [
            "profiles/p.yaml:8:13: $.workloads.examples[1].name: example name 'a' is used twice"
            " (give each example its own name) (rule: workload-names-unique)",
            "profiles/p.yaml:8:16: $.workloads.examples[1].name: rule workload-names-unique"
            " cannot be accepted (fix what it reports; docs/rules.md marks the rules a profile"
            " may accept)"
            " (rule: accept)",
        ],
        [],
    ),
    "another rule's accept excuses nothing": (
        HEAD + K8S.format(comment=f"  # gpustack: accept driver-supports-gpu{REASON}"),
        [
            K8S_FINDING,
            at_line_6(
                "nothing to accept: rule driver-supports-gpu reports nothing on line 6 (remove"
                " the accept; the finding it was for is gone)"
            ),
        ],
        [],
    ),
    "unused": (
        HEAD
        + 'cluster:\n  kubernetesVersion: "1.33"'
        + f"  # gpustack: accept kubernetes-version-supported{REASON}\n",
        [
            at_line_6(
                "nothing to accept: rule kubernetes-version-supported reports nothing on line 6"
                " (remove the accept; the finding it was for is gone)"
            )
        ],
        [],
    ),
    "on a line with no finding": (
        HEAD
        + f"# gpustack: accept kubernetes-version-supported{REASON}\n\n"
        + K8S.format(comment=""),
        [
            "profiles/p.yaml:5:1: $: nothing to accept: rule kubernetes-version-supported reports"
            " nothing on line 6 (remove the accept; the finding it was for is gone)"
            " (rule: accept)",
            "profiles/p.yaml:8:22: $.cluster.kubernetesVersion: Kubernetes 1.28 is not supported"
            " (use 1.29 to 1.37) (rule: kubernetes-version-supported)",
        ],
        [],
    ),
    "a hash inside a value is no comment": (
        HEAD + 'cluster:\n  kubernetesVersion: "1.28#gpustack: accept x"\n',
        [
            "profiles/p.yaml:6:22: $.cluster.kubernetesVersion: '1.28#gpustack: accept x' does not"
            " match ^1\\.\\d+$ (e.g. 1.36) (rule: schema)"
        ],
        [],
    ),
}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "profiles").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("case", sorted(CASES))
def test_accept(tree: Path, case: str) -> None:
    text, issues, accepted = CASES[case]
    (tree / "profiles" / "p.yaml").write_text(text, encoding="utf-8")
    result = check_paths([Path("profiles")])
    assert [str(i) for i in result.issues] == issues
    assert [(a.issue.line, a.issue.rule, a.reason) for a in result.accepted] == accepted
    assert result.ok == (not issues)
    assert [p.profile.name for p in result.profiles] == ([] if issues else ["p"])
    assert result.files_failed == (1 if issues else 0)


def test_only_rules_about_facts_gpustack_may_not_know_are_acceptable() -> None:
    acceptable = {d.id for d in registry.ALL if d.acceptable}
    assert acceptable == {
        "kubernetes-version-supported",
        "cdi-strategy-needs-runtime-cdi",
        "default-images-outside-mirror",
        "node-selector-labels-deployed",
        "node-selector-label-known",
        "node-selector-not-self-labelled",  # nodes labelled by the team (a pool template)
        "driver-supports-gpu",
        "driver-still-supports-gpu",
        "workload-cuda-fits-driver",
        "workload-cuda-fits-gpu",
        "workload-cuda-knows-gpu",
        "dra-compute-domains-need-cliques",  # GFD run by the cluster, not gpustack
        "dra-extended-resource-gate",  # a gate turned on by hand on 1.35
        "dra-feature-gate-needs-kubernetes",  # the same, for the driver's gates
    }
    assert not {"load", "schema", "accept", "profile-names-unique"} & acceptable


BASE = 'cluster:\n  kubernetesVersion: "1.28"  # gpustack: accept kubernetes-version-supported'
BASE += REASON + "\n"


def _with_base(tree: Path, base: str, *names: str) -> None:
    (tree / "profiles" / "_bases").mkdir()
    (tree / "profiles" / "_bases" / "b.yaml").write_text(base, encoding="utf-8")
    for name in names:
        (tree / "profiles" / f"{name}.yaml").write_text(
            "extends: _bases/b.yaml\n" + HEAD.replace("name: p", f"name: {name}"),
            encoding="utf-8",
        )


def test_an_accept_in_a_base_accepts_for_every_profile_once(tree: Path) -> None:
    _with_base(tree, BASE, "one", "two")
    result = check_paths([Path("profiles")])
    assert result.issues == ()
    assert [(a.issue.file, a.issue.line) for a in result.accepted] == [
        ("profiles/_bases/b.yaml", 2)
    ]
    assert [p.profile.name for p in result.profiles] == ["one", "two"]


def test_an_unused_accept_in_a_base_is_reported_only_when_all_profiles_were_checked(
    tree: Path,
) -> None:
    _with_base(tree, BASE.replace('"1.28"', '"1.33"'), "one", "two")
    unused = (
        "profiles/_bases/b.yaml:2:30: $.cluster.kubernetesVersion: nothing to accept: rule"
        " kubernetes-version-supported reports nothing on line 2 (remove the accept; the finding"
        " it was for is gone) (rule: accept)"
    )
    result = check_paths([Path("profiles")])
    assert [str(i) for i in result.issues] == [unused]
    assert (result.files_failed, result.profiles) == (2, ())
    # one profile alone may not be the one the accept is for
    result = check_paths([Path("profiles/one.yaml")])
    assert (result.issues, result.files_failed) == ((), 0)


def test_directives_are_found_only_in_comments() -> None:
    text = (
        "a: 1  # gpustack: accept driver-supports-gpu -- r\n"
        "b: 'x # gpustack: accept driver-supports-gpu -- r'\n"  # quoted: read as a comment too
        "c: x#gpustack: accept driver-supports-gpu -- r\n"  # no space before #: not a comment
    )
    found = accept.parse("f.yaml", text)
    assert [(a.line, a.target) for a in found.accepts] == [(1, 1), (2, 2)]
    assert accept.parse("f.yaml", "a: 1\n") == accept.NONE


def test_default_images_outside_a_mirror_can_be_accepted(tree: Path) -> None:
    """Issue 19 item 9: the finding is acceptable where the nodes reach the public registry."""
    mirror = "registry.corp.example:5000"
    text = (
        "# gpustack: accept default-images-outside-mirror" + REASON + "\n"
        + HEAD
        + f"toolkit:\n  image: {mirror}/nvidia/k8s/container-toolkit\n"
    )  # fmt: skip
    (tree / "profiles" / "p.yaml").write_text(text, encoding="utf-8")
    result = check_paths([Path("profiles/p.yaml")])
    assert result.issues == ()
    assert {a.issue.rule for a in result.accepted} == {"default-images-outside-mirror"}
    (tree / "profiles" / "p.yaml").write_text(text.split("\n", 1)[1], encoding="utf-8")
    refused = check_paths([Path("profiles/p.yaml")])
    assert {i.rule for i in refused.issues} == {"default-images-outside-mirror"}
