"""Property-based tests (hypothesis) over the loader, validate and synth (issue #11).

Two kinds of input: random YAML documents (text from YAML's own punctuation, and random data
dumped as YAML), and mutations of the example profiles (profiles/ and the valid cases) that aim
at the fields the API server is strict about (labels, tolerations, names, env, images) with
values that have broken gpustack before (a trailing newline, ``on``, ``0859``, an ``@``).

The properties: validation never raises and answers within :data:`CHECK_SECONDS`; a file it
refuses has a finding; a profile it accepts synthesizes, every object passes the strict
Kubernetes schema and what the API server checks beyond it (:mod:`tests.property.apiserver`:
label keys and values, tolerations, names, images), every key is a string, every scalar reads
back the same from the YAML gpustack writes, and every variable in the stack's containers is
one gpustack manages or one the profile added.

Budget: ``GPUSTACK_PROPERTY_EXAMPLES`` sets the examples per test; unset, a derandomized CI budget
of 40 each (about 25 s in all). The large run the issue asks for is
``GPUSTACK_PROPERTY_EXAMPLES=1000 pytest tests/property --hypothesis-show-statistics``.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpustack.checker import CheckResult, check_paths
from gpustack.profile import managed_env
from gpustack.profile.model import Toolkit
from gpustack.scan import discover
from gpustack.synth.serialize import dump_yaml
from tests.k8s_schema import assert_valid
from tests.property import apiserver

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("GPUSTACK_PROPERTY_EXAMPLES", "0"))
BUDGET = settings(
    max_examples=EXAMPLES or 40,
    deadline=None,  # the first synth starts Node; "never hangs" is CHECK_SECONDS per check
    derandomize=not EXAMPLES,  # CI: the same examples every run; a large run explores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
#: Seconds one validation may take (a profile is checked in milliseconds).
CHECK_SECONDS = 5.0

#: Strings that broke, or could break, what lands in a manifest.
NASTY = [
    "lab\n", "x\n\n", "team@corp.example", "a b", "on", "NO", "y", "null", "~", "", "0859",
    "089", "0o17", "5E10", "1.30", "1_000", "true", "nvidia.com/gpu", "example.com/pool",
    "a/b/c", "-a", "a-", "x" * 63, "x" * 64, "é", "Exists", "Equal", "NoExecute", "NoSchedule",
    "CONTAINERD_CONFIG", "RUNTIME_SOCKET", "KERNEL_MODULE_TYPE", "CONFIG_FILE", "HTTPS_PROXY",
    "570", "580.105.08", "sha256:" + "a" * 64, "v1.18.1", "docker.io/x/y:1@sha256:" + "b" * 64,
    "nvcr.io/nvidia/driver\n", "system-node-critical",
]  # fmt: skip

words = st.one_of(
    st.sampled_from(NASTY),
    st.text(alphabet="abcXYZ019-_./@ :\n", max_size=12),
    st.text(max_size=6),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 70_000), st.floats(allow_nan=False), words
)
keys = st.one_of(words, st.booleans(), st.integers(0, 3), st.none(), st.floats(0, 2))
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)
labels = st.dictionaries(words, words, max_size=3)
tolerations = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": words,
            "operator": st.sampled_from(["Exists", "Equal", "In"]),
            "value": words,
            "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
            "tolerationSeconds": st.integers(-1, 600),
        },
    ),
    max_size=3,
)
env = st.lists(st.fixed_dictionaries({"name": words, "value": words}), max_size=2)

#: Fields to aim at, each with what to put there.
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "metadata.name": words,
    "metadata.labels": labels,
    "cluster.nodeSelector": labels,
    "cluster.tolerations": tolerations,
    "cluster.namespace": words,
    "cluster.priorityClassName": words,
    "cluster.imagePullSecrets": st.lists(words, max_size=2),
    "cluster.requireImageDigests": st.booleans(),
    "devicePlugin.nodeConfigLabel": words,
    "devicePlugin.nodeConfigs": st.lists(st.fixed_dictionaries({"name": words}), max_size=2),
    "devicePlugin.env": env,
    "devicePlugin.version": words,
    "devicePlugin.digest": words,
    "driver.env": env,
    "driver.version": st.one_of(words, st.integers(500, 600), st.floats(500, 600)),
    "driver.osTag": words,
    "driver.kernelVersion": words,
    "driver.usePrecompiled": st.booleans(),
    "toolkit.env": env,
    "toolkit.version": words,
    "toolkit.digest": words,
    "toolkit.image": words,
    "toolkit.runtimeClass": words,
    "workloads.examples": st.lists(
        st.fixed_dictionaries({"name": words}, optional={"image": words}), max_size=2
    ),
    "gpus.mig": st.dictionaries(keys, st.integers(0, 8), max_size=2),
}
#: Component folder -> the variables gpustack manages in its containers.
MANAGED = {
    "driver": managed_env.DRIVER,
    "container-toolkit": managed_env.TOOLKIT,
    "device-plugin": managed_env.DEVICE_PLUGIN,
}


@cache
def examples() -> tuple[dict[str, Any], ...]:
    sources = discover([REPO / "profiles", REPO / "tests" / "profile" / "cases" / "valid"])
    docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sources]
    return tuple(d for d in docs if "extends" not in d)  # bases resolve relative to their folder


def put(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        if not isinstance(doc.get(part), dict):
            doc[part] = {}
        doc = doc[part]
    doc[last] = value


def check(text: str) -> CheckResult:
    """Validate ``text`` as a profile file; fails if that raises or takes too long."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.yaml"
        path.write_text(text, encoding="utf-8")
        started = time.monotonic()
        result = check_paths([path])
        assert time.monotonic() - started < CHECK_SECONDS, text[:200]
    if not result.ok:
        assert result.issues and all(i.message for i in result.issues)
    return result


@BUDGET
@given(st.text(alphabet="{}[]:,-?&*!|>'\"#%@` \n\tab01.~=", max_size=80))
def test_validate_answers_any_text(text: str) -> None:
    check(text)


@BUDGET
@given(documents)
def test_validate_answers_any_yaml_document(data: Any) -> None:
    check(yaml.safe_dump(data, allow_unicode=True))


def synthesized_problems(result: CheckResult) -> list[str]:
    """Every way the objects of an accepted profile would fail at the API server or in the
    round trip through YAML; empty when they are fine."""
    from gpustack.constructs import synthesize  # starts Node: only here

    profile = result.profiles[0].profile
    objects = synthesize(profile)
    assert_valid([o.manifest for o in objects], profile.cluster.kubernetes_version)
    sections = (profile.driver, profile.toolkit, profile.device_plugin)
    own_env = {v.name for section in sections for v in section.env}
    out: list[str] = []
    for o in objects:
        out += apiserver.problems(o.manifest)
        odd = [k for k in apiserver.keys(o.manifest) if not isinstance(k, str)]
        out += [f"{o.kind}/{o.name}: key {k!r}" for k in odd]
        if yaml.safe_load(dump_yaml(o.manifest)) != o.manifest:
            out.append(f"{o.kind}/{o.name}: does not read back the same")
        managed = MANAGED.get(o.component)
        if managed is not None and o.kind == "DaemonSet":
            pod = o.manifest["spec"]["template"]["spec"]
            # the running containers: a section's env joins those (init containers such as the
            # driver manager take their settings from other fields)
            for c in pod["containers"]:
                names = {e["name"] for e in c.get("env") or []} - own_env
                out += [f"{o.kind}/{o.name}: unmanaged env {n}" for n in names - set(managed)]
    return out


@BUDGET
@given(st.data())
def test_what_validate_accepts_the_api_server_accepts(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(examples()), label="example"))
    for field in data.draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3)):
        put(doc, field, data.draw(FIELDS[field], label=field))
    result = check(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))
    event("accepted and synthesized" if result.ok else "refused with findings")
    if result.ok:
        assert synthesized_problems(result) == []


def test_digests_land_in_every_image() -> None:
    # item 20: the pinned valid case renders no image without its digest (the MPS daemon, the
    # toolkit's wait in the plugin pod, the example job included)
    result = check_paths([REPO / "tests/profile/cases/valid/image-digests-pinned.yaml"])
    assert result.ok, result.issues
    from gpustack.constructs import synthesize

    images = {
        c["image"]
        for o in synthesize(result.profiles[0].profile)
        if "template" in o.manifest.get("spec", {})
        for pod in [o.manifest["spec"]["template"]["spec"]]
        for c in [*pod.get("initContainers", []), *pod["containers"]]
    }
    assert len(images) >= 4, images
    assert all("@sha256:" + "a" * 64 in i for i in images), images
    assert Toolkit().image_ref() + "@sha256:" + "a" * 64 in images
    assert synthesized_problems(result) == []
