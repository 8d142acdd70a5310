"""ResourceSlice publishing against a recording API server on 127.0.0.1.

What NVIDIA's resourceslice controller does (see gpustack/plugin/dra/publisher.py) reduced to one
slice: create once, nothing while unchanged, PUT with the read resourceVersion on change (same
generation), delete extras with preconditions, recreate a wiped slice with a higher generation.
Every call is one of kubeapi.RBAC_RULES.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gpustack.plugin.dra import slices
from gpustack.plugin.dra.kubeapi import RBAC_RULES, ApiConfig, ApiError, KubeClient
from gpustack.plugin.dra.publisher import Publisher
from tests.k8s_schema import errors

from .conftest import H100X8, REPO
from .fake_apiserver import SLICES, FakeApiServer
from .test_dra_slices import discover, gpus_of

DRIVER = "gpu.nvidia.com"
NODE = "node-a"


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        server.add_node(NODE)
        yield server


@pytest.fixture
def client(api: FakeApiServer, tmp_path: Path) -> KubeClient:
    token = tmp_path / "token"
    token.write_text(api.token + "\n")
    return KubeClient(ApiConfig(api.url, token_file=str(token)))


def verb(method: str, path: str) -> tuple[str, str, str]:
    """(group, resource, RBAC verb) of a request to the fake server."""
    if path.startswith("/api/v1/nodes/"):
        return "", "nodes", {"GET": "get"}[method]
    if path == SLICES:
        return "resource.k8s.io", "resourceslices", {"GET": "list", "POST": "create"}[method]
    if path.startswith(SLICES + "/"):
        return "resource.k8s.io", "resourceslices", {"PUT": "update", "DELETE": "delete"}[method]
    if "/resourceclaims/" in path:
        return "resource.k8s.io", "resourceclaims", {"GET": "get"}[method]
    raise AssertionError(f"unexpected call {method} {path}")


def assert_within_rbac(api: FakeApiServer) -> None:
    allowed = {(g, r, v) for g, r, verbs in RBAC_RULES for v in verbs}
    for method, path in api.calls():
        assert verb(method, path) in allowed, (method, path)


def test_first_sync_creates_one_owned_slice(api: FakeApiServer, client: KubeClient) -> None:
    publisher = Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver())
    assert publisher.sync() == "created"
    assert api.calls() == [("GET", SLICES), ("GET", f"/api/v1/nodes/{NODE}"), ("POST", SLICES)]
    listed = api.requests[0]
    assert listed.query == {"fieldSelector": f"spec.driver={DRIVER},spec.nodeName={NODE}"}
    (created,) = api.slices.values()
    assert created["metadata"]["name"].startswith(f"00000-{DRIVER}-{NODE}-")
    assert created["metadata"]["ownerReferences"][0]["uid"] == api.nodes[NODE]["metadata"]["uid"]
    assert created["spec"]["pool"] == {"name": NODE, "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in created["spec"]["devices"]] == [f"gpu-{i}" for i in range(8)]
    assert errors(created, "1.34") == []
    assert api.requests[-1].body == slices.resource_slice(
        DRIVER, NODE, api.nodes[NODE]["metadata"]["uid"], discover(H100X8), slices.NodeDriver()
    )
    assert_within_rbac(api)


def test_unchanged_sync_only_lists(api: FakeApiServer, client: KubeClient) -> None:
    publisher = Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver())
    publisher.sync()
    before = len(api.requests)
    assert publisher.sync() == "unchanged"
    assert api.calls()[before:] == [("GET", SLICES)]


def test_changed_gpus_update_in_place(api: FakeApiServer, client: KubeClient) -> None:
    Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver()).sync()
    (name,) = api.slices
    version = api.slices[name]["metadata"]["resourceVersion"]
    fewer = gpus_of({"index": 0}, {"index": 1})
    before = len(api.requests)
    assert Publisher(client, DRIVER, NODE, fewer, slices.NodeDriver()).sync() == "updated"
    put = api.requests[-1]
    assert (put.method, put.path) == ("PUT", f"{SLICES}/{name}")
    assert put.body["metadata"]["resourceVersion"] == version
    assert [r.method for r in api.requests[before:]] == ["GET", "PUT"]
    assert [d["name"] for d in api.slices[name]["spec"]["devices"]] == ["gpu-0", "gpu-1"]
    assert api.slices[name]["spec"]["pool"]["generation"] == 1
    assert_within_rbac(api)


def test_driver_version_change_updates(api: FakeApiServer, client: KubeClient) -> None:
    Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver()).sync()
    newer = slices.NodeDriver(driver_version="590.10.02", cuda_driver_version="13.1")
    assert Publisher(client, DRIVER, NODE, discover(H100X8), newer).sync() == "updated"
    (obj,) = api.slices.values()
    assert obj["spec"]["devices"][0]["attributes"]["driverVersion"] == {"version": "590.10.2"}


def test_extra_and_foreign_slices(api: FakeApiServer, client: KubeClient) -> None:
    """Extra slices of this driver on this node go; other drivers' and nodes' stay."""
    publisher = Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver())
    publisher.sync()
    extra = slices.resource_slice(DRIVER, NODE, "u", discover(H100X8), slices.NodeDriver())
    extra["metadata"]["generateName"] = f"00001-{DRIVER}-{NODE}-"
    other_driver = slices.resource_slice("x.example.com", NODE, "u", [], slices.NodeDriver())
    other_node = slices.resource_slice(DRIVER, "node-b", "u", [], slices.NodeDriver())
    for body in (extra, other_driver, other_node):
        client.create_slice(body)
    (extra_name,) = [n for n in api.slices if n.startswith("00001-")]
    extra_obj = api.slices[extra_name]
    assert publisher.sync() == "unchanged"
    delete = api.requests[-1]
    assert (delete.method, delete.path) == ("DELETE", f"{SLICES}/{extra_name}")
    assert delete.body["preconditions"] == {
        "uid": extra_obj["metadata"]["uid"],
        "resourceVersion": extra_obj["metadata"]["resourceVersion"],
    }
    assert len(api.slices) == 3
    assert_within_rbac(api)


def test_wiped_slice_is_recreated_with_a_higher_generation(
    api: FakeApiServer, client: KubeClient
) -> None:
    publisher = Publisher(client, DRIVER, NODE, discover(H100X8), slices.NodeDriver())
    publisher.sync()
    (old,) = api.slices.values()
    old["spec"]["pool"]["generation"] = 4
    old["metadata"]["name"] = "not-an-index-name"
    api.slices = {"not-an-index-name": old}
    assert publisher.sync() == "created"
    (new,) = api.slices.values()
    assert new["spec"]["pool"]["generation"] == 5
    assert ("DELETE", f"{SLICES}/not-an-index-name") in api.calls()
    # The Node's UID was read once, on the first create.
    assert api.calls().count(("GET", f"/api/v1/nodes/{NODE}")) == 1


def test_api_errors_carry_status(api: FakeApiServer, tmp_path: Path) -> None:
    token = tmp_path / "wrong"
    token.write_text("nope")
    bad = KubeClient(ApiConfig(api.url, token_file=str(token)))
    with pytest.raises(ApiError) as caught:
        Publisher(bad, DRIVER, NODE, [], slices.NodeDriver()).sync()
    assert caught.value.status == 401
    assert "401" in str(caught.value)


def test_unreachable_server(tmp_path: Path) -> None:
    client = KubeClient(ApiConfig("http://127.0.0.1:9"))
    with pytest.raises(ApiError) as caught:
        client.list_slices(DRIVER, NODE)
    assert caught.value.status == 0


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
         "https://10.96.0.1:443"),
        ({"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
         "https://[fd00::1]:6443"),
    ],
)  # fmt: skip
def test_in_cluster_config(env: dict[str, str], expected: str) -> None:
    config = ApiConfig.in_cluster(env)
    assert config.server == expected
    assert config.token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert config.ca_file == "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


def test_not_in_a_pod() -> None:
    with pytest.raises(ApiError, match="KUBERNETES_SERVICE_HOST"):
        ApiConfig.in_cluster({})


def test_docs_state_exactly_the_rbac() -> None:
    """The API access page's table for the simulated DRA driver lists RBAC_RULES, no more, no
    less."""
    text = (REPO / "docs" / "reference" / "api-access.md").read_text()
    section = text.split("## The simulated DRA driver", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    table = set()
    for row in rows[1:]:
        group, resource, verbs, _ = (cell.strip() for cell in row.strip("|").split("|"))
        table.add(
            (
                "" if group == "core" else group.strip("`"),
                resource.strip("`"),
                tuple(v.strip() for v in verbs.split(",")),
            )
        )
    assert table == set(RBAC_RULES)
