"""Every readiness file a pod waits for is written by a pod of the same stack (issue 20, item 2).

The stack orders itself on each node with files under the validations folder (see
:mod:`gpustack.constructs.scripts`). ``toolkit-ready`` is written by one pod only: the device
plugin's runtime check (``nvidia-smi`` through the ``nvidia`` runtime). With the plugin off (a
cluster that allocates GPUs with a DRA driver) or simulated, GPU feature discovery, the DCGM
exporter and the MIG manager used to wait for it forever. Checked on the synthesized manifests of
every example profile and of variants without the plugin: a file waited for with
``until [ -f "<file>" ]`` must appear as the target of a write (``mv -f "$tmp" "<file>"``, how
every readiness file is published) in some pod of the folder, or be one the driver or toolkit
publish from their scripts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.constructs.scripts import TOOLKIT_READY
from tests.constructs.conftest import Synth, profile

WAIT = re.compile(r'until \[ -f "([^"]+)" \]')
WRITE = re.compile(r'mv -f "\$tmp" "([^"]+)"')
READY = f"{VALIDATIONS_DIR}/{TOOLKIT_READY}"

VARIANTS: dict[str, dict[str, Any]] = {
    "plugin-off": profile(devicePlugin={"enabled": False}),
    "plugin-off-dcgm": profile(devicePlugin={"enabled": False}, dcgmExporter={"enabled": True}),
    "plugin-off-mig": profile(
        devicePlugin={"enabled": False},
        gpus={"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 7}},
    ),
    "plugin-on": profile(dcgmExporter={"enabled": True}),
}


def waits_and_writes(objects: list[Any]) -> tuple[set[str], set[str]]:
    text = "\n".join(json.dumps(o.manifest) for o in objects).replace('\\"', '"')
    return set(WAIT.findall(text)), set(WRITE.findall(text))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_toolkit_ready_is_waited_for_only_where_written(synth: Synth, name: str) -> None:
    waits, writes = waits_and_writes(synth(VARIANTS[name]))
    if READY in waits:
        assert READY in writes, f"{name}: pods wait for {READY}, which no pod writes"
    if name == "plugin-on":  # the check can see both sides
        assert READY in waits and READY in writes
