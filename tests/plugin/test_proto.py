"""The committed generated code matches api.proto, and api.proto matches the kubelet API."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from google.protobuf.descriptor import FieldDescriptor

from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

from .conftest import REPO

PROTO_DIR = Path("gpustack/plugin/v1beta1")
GENERATED = ("api_pb2.py", "api_pb2.pyi", "api_pb2_grpc.py")

# The kubelet device plugin API v1beta1: message -> [(number, name, type, repeated)].
S, B, I32, I64, MSG = "string", "bool", "int32", "int64", "message"
MESSAGES: dict[str, list[tuple[int, str, str, bool]]] = {
    "DevicePluginOptions": [
        (1, "pre_start_required", B, False),
        (2, "get_preferred_allocation_available", B, False),
    ],
    "RegisterRequest": [
        (1, "version", S, False),
        (2, "endpoint", S, False),
        (3, "resource_name", S, False),
        (4, "options", MSG, False),
    ],
    "Empty": [],
    "ListAndWatchResponse": [(1, "devices", MSG, True)],
    "TopologyInfo": [(1, "nodes", MSG, True)],
    "NUMANode": [(1, "ID", I64, False)],
    "Device": [(1, "ID", S, False), (2, "health", S, False), (3, "topology", MSG, False)],
    "PreStartContainerRequest": [(1, "devices_ids", S, True)],
    "PreStartContainerResponse": [],
    "PreferredAllocationRequest": [(1, "container_requests", MSG, True)],
    "ContainerPreferredAllocationRequest": [
        (1, "available_deviceIDs", S, True),
        (2, "must_include_deviceIDs", S, True),
        (3, "allocation_size", I32, False),
    ],
    "PreferredAllocationResponse": [(1, "container_responses", MSG, True)],
    "ContainerPreferredAllocationResponse": [(1, "deviceIDs", S, True)],
    "AllocateRequest": [(1, "container_requests", MSG, True)],
    "ContainerAllocateRequest": [(1, "devices_ids", S, True)],
    "CDIDevice": [(1, "name", S, False)],
    "AllocateResponse": [(1, "container_responses", MSG, True)],
    "ContainerAllocateResponse": [
        (1, "envs", MSG, True),
        (2, "mounts", MSG, True),
        (3, "devices", MSG, True),
        (4, "annotations", MSG, True),
        (5, "cdi_devices", MSG, True),
    ],
    "Mount": [
        (1, "container_path", S, False),
        (2, "host_path", S, False),
        (3, "read_only", B, False),
    ],
    "DeviceSpec": [
        (1, "container_path", S, False),
        (2, "host_path", S, False),
        (3, "permissions", S, False),
    ],
}

METHOD_PATHS = [
    "/v1beta1.Registration/Register",
    "/v1beta1.DevicePlugin/GetDevicePluginOptions",
    "/v1beta1.DevicePlugin/ListAndWatch",
    "/v1beta1.DevicePlugin/GetPreferredAllocation",
    "/v1beta1.DevicePlugin/Allocate",
    "/v1beta1.DevicePlugin/PreStartContainer",
]

TYPE_NAMES = {
    FieldDescriptor.TYPE_STRING: S,
    FieldDescriptor.TYPE_BOOL: B,
    FieldDescriptor.TYPE_INT32: I32,
    FieldDescriptor.TYPE_INT64: I64,
    FieldDescriptor.TYPE_MESSAGE: MSG,
}


def test_generated_code_matches_proto(tmp_path: Path) -> None:
    """Regenerate with grpcio-tools and compare byte for byte with the committed files."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copytree(REPO / PROTO_DIR, tmp_path / PROTO_DIR, ignore=shutil.ignore_patterns("*.py*"))
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", f"--python_out={out}",
         f"--pyi_out={out}", f"--grpc_python_out={out}", str(tmp_path / PROTO_DIR / "api.proto")],
        check=True,
    )  # fmt: skip
    for name in GENERATED:
        fresh = (out / PROTO_DIR / name).read_text()
        committed = (REPO / PROTO_DIR / name).read_text()
        assert fresh == committed, (
            f"{name} is stale; regenerate it (see tests/plugin/test_proto.py)"
        )


def test_package_is_v1beta1() -> None:
    assert api_pb2.DESCRIPTOR.package == "v1beta1"


def test_method_paths() -> None:
    paths = [
        f"/{service.full_name}/{method.name}"
        for service in api_pb2.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]
    assert paths == METHOD_PATHS
    source = Path(api_pb2_grpc.__file__).read_text()
    for path in METHOD_PATHS:
        assert f"'{path}'" in source


def test_list_and_watch_is_server_streaming() -> None:
    method = api_pb2.DESCRIPTOR.services_by_name["DevicePlugin"].methods_by_name["ListAndWatch"]
    assert method.server_streaming and not method.client_streaming


def test_no_unexpected_messages() -> None:
    names = {n for n in api_pb2.DESCRIPTOR.message_types_by_name}
    assert names == set(MESSAGES)


@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_message_fields(message: str) -> None:
    descriptor = api_pb2.DESCRIPTOR.message_types_by_name[message]
    actual = [
        (f.number, f.name, TYPE_NAMES[f.type], f.is_repeated)
        for f in sorted(descriptor.fields, key=lambda f: f.number)
    ]
    assert actual == MESSAGES[message]


@pytest.mark.parametrize("field", ["envs", "annotations"])
def test_allocate_response_maps_are_string_maps(field: str) -> None:
    entry = api_pb2.ContainerAllocateResponse.DESCRIPTOR.fields_by_name[field].message_type
    assert entry is not None
    assert entry.GetOptions().map_entry
    assert [f.type for f in entry.fields] == [FieldDescriptor.TYPE_STRING] * 2


def test_the_generator_is_pinned_to_the_version_that_made_the_stubs() -> None:
    """The stubs are compared byte for byte with grpcio-tools' output, and the output names the
    generator's version: a range in the dev extra lets a fresh machine install a newer one and
    fail the comparison (grpcio-tools 1.85.4 did), so the extra pins the exact version."""
    dev = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    tools = [r for r in dev["optional-dependencies"]["dev"] if r.startswith("grpcio-tools")]
    assert tools == [f"grpcio-tools=={api_pb2_grpc.GRPC_GENERATED_VERSION}"], tools
