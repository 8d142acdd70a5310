"""The DRA protos: committed generated code matches them, and they match the kubelet's APIs.

Field tables from k8s.io/kubelet v1.36 (vendored by openshift/microshift):
pkg/apis/dra/v1/api.proto and pkg/apis/pluginregistration/v1/api.proto.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf.descriptor import FieldDescriptor

from gpustack import dra_upstream as upstream
from gpustack.plugin.dra.pluginregistration import api_pb2 as reg_pb2
from gpustack.plugin.dra.v1 import api_pb2 as dra_pb2

from .conftest import REPO

PROTO_DIRS = (Path("gpustack/plugin/dra/v1"), Path("gpustack/plugin/dra/pluginregistration"))
GENERATED = ("api_pb2.py", "api_pb2.pyi", "api_pb2_grpc.py")

S, B, MSG = "string", "bool", "message"
#: message -> [(number, name, type, repeated)]; maps show as repeated entry messages.
DRA_MESSAGES: dict[str, list[tuple[int, str, str, bool]]] = {
    "NodePrepareResourcesRequest": [(1, "claims", MSG, True)],
    "NodePrepareResourcesResponse": [(1, "claims", MSG, True)],
    "NodePrepareResourceResponse": [(1, "devices", MSG, True), (2, "error", S, False)],
    "Device": [
        (1, "request_names", S, True),
        (2, "pool_name", S, False),
        (3, "device_name", S, False),
        (4, "cdi_device_ids", S, True),
        (5, "share_id", S, False),
    ],
    "NodeUnprepareResourcesRequest": [(1, "claims", MSG, True)],
    "NodeUnprepareResourcesResponse": [(1, "claims", MSG, True)],
    "NodeUnprepareResourceResponse": [(1, "error", S, False)],
    "Claim": [(1, "namespace", S, False), (2, "uid", S, False), (3, "name", S, False)],
}
REG_MESSAGES: dict[str, list[tuple[int, str, str, bool]]] = {
    "PluginInfo": [
        (1, "type", S, False),
        (2, "name", S, False),
        (3, "endpoint", S, False),
        (4, "supported_versions", S, True),
    ],
    "RegistrationStatus": [(1, "plugin_registered", B, False), (2, "error", S, False)],
    "RegistrationStatusResponse": [],
    "InfoRequest": [],
}
TYPE_NAMES = {
    FieldDescriptor.TYPE_STRING: S,
    FieldDescriptor.TYPE_BOOL: B,
    FieldDescriptor.TYPE_MESSAGE: MSG,
}


@pytest.mark.parametrize("proto_dir", PROTO_DIRS, ids=lambda p: p.name)
def test_generated_code_matches_proto(proto_dir: Path, tmp_path: Path) -> None:
    """Regenerate with grpcio-tools and compare byte for byte with the committed files."""
    out = tmp_path / "out"
    out.mkdir()
    shutil.copytree(REPO / proto_dir, tmp_path / proto_dir, ignore=shutil.ignore_patterns("*.py*"))
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", f"--python_out={out}",
         f"--pyi_out={out}", f"--grpc_python_out={out}", str(tmp_path / proto_dir / "api.proto")],
        check=True,
    )  # fmt: skip
    for name in GENERATED:
        fresh = (out / proto_dir / name).read_text()
        committed = (REPO / proto_dir / name).read_text()
        assert fresh == committed, (
            f"{proto_dir / name} is stale; regenerate it (see tests/plugin/test_dra_proto.py)"
        )


@pytest.mark.parametrize(
    ("module", "package", "methods"),
    [
        (dra_pb2, "k8s.io.kubelet.pkg.apis.dra.v1", upstream.DRA_METHODS),
        (reg_pb2, "pluginregistration", upstream.REGISTRATION_METHODS),
    ],
    ids=["dra-v1", "pluginregistration"],
)
def test_package_and_method_paths(
    module: ModuleType, package: str, methods: tuple[str, ...]
) -> None:
    assert module.DESCRIPTOR.package == package
    paths = tuple(
        f"/{service.full_name}/{method.name}"
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    )
    assert paths == methods


@pytest.mark.parametrize(
    ("module", "table"), [(dra_pb2, DRA_MESSAGES), (reg_pb2, REG_MESSAGES)], ids=["dra", "reg"]
)
def test_messages_match_the_kubelet_api(
    module: ModuleType, table: dict[str, list[tuple[int, str, str, bool]]]
) -> None:
    assert set(module.DESCRIPTOR.message_types_by_name) == set(table)
    for name, fields in table.items():
        descriptor = module.DESCRIPTOR.message_types_by_name[name]
        got = [
            (f.number, f.name, TYPE_NAMES[f.type], f.is_repeated)
            for f in sorted(descriptor.fields, key=lambda f: f.number)
        ]
        assert got == fields, name


def test_claim_maps_are_keyed_by_string() -> None:
    for name in ("NodePrepareResourcesResponse", "NodeUnprepareResourcesResponse"):
        entry = dra_pb2.DESCRIPTOR.message_types_by_name[name].fields_by_name["claims"].message_type
        assert entry.GetOptions().map_entry
        assert entry.fields_by_name["key"].type == FieldDescriptor.TYPE_STRING


def test_share_id_is_optional() -> None:
    device = dra_pb2.Device()
    assert not device.HasField("share_id")
    device.share_id = ""
    assert device.HasField("share_id")
