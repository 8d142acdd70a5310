"""Where objects land in a cluster folder, in which order, and which inputs are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpustack.profile import components
from gpustack.synth.errors import SynthError
from gpustack.synth.layout import ClusterOutput, layout_cluster
from gpustack.synth.serialize import PURE_DUMPER, dump_yaml

from .objects import Obj, kube, stack


def files_of(out: ClusterOutput) -> dict[str, bytes]:
    return {f.path: f.content for f in out.files}


def test_stack_layout_order_and_kustomization() -> None:
    out = layout_cluster("lab", stack())
    expected = [
        "common/namespace-gpustack-system.yaml",
        "container-toolkit/runtimeclass-nvidia.yaml",
        "container-toolkit/daemonset-nvidia-container-toolkit.yaml",
        "device-plugin/serviceaccount-gpustack-device-plugin.yaml",
        "device-plugin/configmap-gpustack-device-plugin.yaml",
        "device-plugin/clusterrole-gpustack-device-plugin.yaml",
        "device-plugin/daemonset-gpustack-device-plugin.yaml",
        "driver/daemonset-nvidia-driver.yaml",
        "examples/job-pytorch-smoke.yaml",
        "kustomization.yaml",
    ]
    # driver sorts before container-toolkit: pipeline order, not alphabetical
    expected.insert(1, expected.pop(7))
    assert list(out.paths()) == expected
    kust = yaml.safe_load(files_of(out)["kustomization.yaml"])
    assert (
        kust
        == {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "sortOptions": {"order": "fifo"},  # kubectl keeps this install order (issue 20, item 5)
            "resources": expected[:-1],
        }
    )


def test_order_does_not_depend_on_input_order() -> None:
    objs = stack()
    assert layout_cluster("a", objs) == layout_cluster("a", list(reversed(objs)))


def test_each_file_holds_exactly_its_object() -> None:
    objs = stack()
    out = files_of(layout_cluster("a", objs))
    for o in objs:
        path = f"{o.component}/{o.manifest['kind'].lower()}-{o.manifest['metadata']['name']}.yaml"
        assert list(yaml.safe_load_all(out[path])) == [dict(o.manifest)]


def test_unknown_kinds_sort_last_alphabetically() -> None:
    objs = [
        kube("examples", "Widget", "w", api_version="example.com/v1"),
        kube("examples", "Gadget", "g", api_version="example.com/v1"),
        kube("examples", "ConfigMap", "c2"),
        kube("common", "Job", "j", api_version="batch/v1"),
    ]
    assert list(layout_cluster("a", objs).paths())[:-1] == [
        "common/job-j.yaml",
        "examples/configmap-c2.yaml",
        "examples/gadget-g.yaml",
        "examples/widget-w.yaml",
    ]


def test_folders_follow_the_registry_order() -> None:
    # One object per registered component, fed in reverse: the folders come out in registry order.
    objs = [kube(name, "ConfigMap", name) for name in reversed(components.names())]
    folders = [p.split("/")[0] for p in layout_cluster("a", objs).paths()[:-1]]
    assert folders == list(components.names())


def test_registry_order_is_the_only_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Reversing the registry reverses the folders: layout keeps no order of its own.
    registered = components.names()
    monkeypatch.setattr(components, "REGISTRY", tuple(reversed(components.REGISTRY)))
    objs = [kube(name, "ConfigMap", name) for name in registered]
    folders = [p.split("/")[0] for p in layout_cluster("a", objs).paths()[:-1]]
    assert folders == list(reversed(registered))


def test_an_unregistered_component_is_refused_not_sorted_last() -> None:
    objs = [kube("common", "ConfigMap", "c"), kube("zeta", "ConfigMap", "c")]
    with pytest.raises(SynthError, match="component 'zeta' is not registered"):
        layout_cluster("a", objs)


CONFLICTS = {
    "same kind and name, two namespaces": (
        [kube("common", "Role", "x", namespace="a"), kube("common", "Role", "x", namespace="b")],
        "would both be written to common/role-x.yaml",
    ),
    "same kind in two API groups": (
        [
            kube("common", "Kustomization", "x", api_version="kustomize.toolkit.fluxcd.io/v1"),
            kube("common", "Kustomization", "x", api_version="example.com/v1"),
        ],
        "would both be written to common/kustomization-x.yaml",
    ),
    "same object from two components": (
        [kube("driver", "ServiceAccount", "x"), kube("device-plugin", "ServiceAccount", "x")],
        "ServiceAccount gpustack-system/x is synthesized twice",
    ),
}


@pytest.mark.parametrize(("objs", "message"), CONFLICTS.values(), ids=CONFLICTS.keys())
def test_conflicting_objects_are_an_error(objs: list[Obj], message: str) -> None:
    with pytest.raises(SynthError, match=message):
        layout_cluster("a", objs)


def test_cluster_scoped_and_namespaced_kinds_never_share_a_file() -> None:
    objs = [
        kube("common", "ClusterRole", "x", namespace=None),
        kube("common", "Role", "x"),
        kube("common", "ClusterRoleBinding", "x", namespace=None),
        kube("common", "RoleBinding", "x"),
    ]
    assert len(set(layout_cluster("a", objs).paths())) == 5


BAD_OBJECTS = {
    "path traversal in name": (kube("common", "ConfigMap", "../../etc"), "metadata.name"),
    "slash in name": (kube("common", "ConfigMap", "a/b"), "metadata.name"),
    "uppercase name": (kube("common", "ConfigMap", "Upper"), "metadata.name"),
    "no name": (Obj("common", {"apiVersion": "v1", "kind": "ConfigMap"}), "metadata.name"),
    "no kind": (Obj("common", {"apiVersion": "v1", "metadata": {"name": "x"}}), "kind"),
    "kind with dots": (kube("common", "../Kind", "x"), "kind"),
    "no apiVersion": (Obj("common", {"kind": "ConfigMap", "metadata": {"name": "x"}}), "apiV"),
    "component traversal": (kube("../up", "ConfigMap", "x"), "component"),
    "empty component": (kube("", "ConfigMap", "x"), "component"),
    "name too long for a file": (kube("common", "ConfigMap", "a" * 250), "longer than 255"),
    "not serializable": (kube("common", "ConfigMap", "x", data={"k": {1, 2}}), "as YAML"),
    # `$` in Python's re matches before a final newline: names are matched in full (#11, 9)
    "name with a final newline": (kube("common", "ConfigMap", "x\n"), "metadata.name"),
    "kind with a final newline": (kube("common", "ConfigMap\n", "x"), "kind"),
    "component with a final newline": (kube("common\n", "ConfigMap", "x"), "component"),
}


@pytest.mark.parametrize(("obj", "message"), BAD_OBJECTS.values(), ids=BAD_OBJECTS.keys())
def test_bad_objects_are_refused(obj: Obj, message: str) -> None:
    with pytest.raises(SynthError, match=message):
        layout_cluster("a", [obj])


@pytest.mark.parametrize(
    "name", ["", "../x", "a/b", ".", "..", "Lab", "a.b", "a" * 64, "-a", "lab\n", "lab\n\n"]
)
def test_cluster_names_must_be_dns_labels(name: str) -> None:
    with pytest.raises(SynthError, match="can't be a folder name"):
        layout_cluster(name, stack())


def test_a_cluster_without_objects_is_an_error() -> None:
    with pytest.raises(SynthError, match="synthesizes no objects"):
        layout_cluster("a", [])


def test_a_shared_manifest_is_serialized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clusters of one shape hand the layout the same manifest dicts (the render cache): each
    is serialized once, and an equal but distinct dict is serialized on its own."""
    from gpustack.synth import layout

    calls: list[object] = []
    real = layout.dump_yaml

    def counting(doc: object, **kwargs: Any) -> bytes:
        calls.append(doc)
        return real(doc, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(layout, "dump_yaml", counting)
    monkeypatch.setattr(layout, "_SERIALIZED", type(layout._SERIALIZED)())
    shared = stack()
    one = layout_cluster("one", shared)
    manifests = len(calls)
    two = layout_cluster("two", shared)
    assert len(calls) == manifests + 1  # only the kustomization of "two"
    assert one.files == two.files
    fresh = stack()  # equal, not the same objects
    three = layout_cluster("three", fresh)
    assert len(calls) == 2 * manifests + 1
    assert three.files == one.files


REPO_DIST = Path(__file__).resolve().parents[2] / "dist" / "clusters"


def test_serializing_shared_subtrees_gives_the_whole_document_s_bytes() -> None:
    """The layout writes each nested map and list once per object (``shared``): for every
    committed example file, the bytes of the file, the first time and from the cache."""
    files = sorted(p for p in REPO_DIST.rglob("*.yaml") if p.name != "kustomization.yaml")
    assert len(files) > 100
    docs = []
    for path in files:
        raw = path.read_bytes()
        # the document, after any comment lines a file starts with (a generated-file header)
        while raw.startswith(b"#"):
            raw = raw.partition(b"\n")[2]
        docs.append((path, raw, yaml.safe_load(raw)))
    for _ in range(2):
        for path, raw, doc in docs:
            assert dump_yaml(doc, shared=True) == raw, path


KEYS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
DOCS = st.recursive(
    st.none() | st.booleans() | st.integers() | KEYS | st.text(max_size=60),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=16,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, DOCS, min_size=1, max_size=4), DOCS)
@example({"0": ["\n"], "": None}, ["x\n\n"])
@example({"a": 1}, {"b": [{"c": "x\n"}]})
def test_a_subtree_shared_by_documents_is_written_where_it_stands(
    doc: dict[str, Any], sub: Any
) -> None:
    """One object in several places (under a key, as an item, first in an item, nested deeper)
    and in several documents: each place gets the reference's text, cached or not."""
    placed = {**doc, "under": sub, "items": [sub, [sub]], "deeper": {"x": [{"y": sub}]}}
    for document in (doc, placed, {"again": sub}, placed):
        assert dump_yaml(document, shared=True) == dump_yaml(document, PURE_DUMPER)
