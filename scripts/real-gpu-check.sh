#!/usr/bin/env bash
# Real-GPU check of gpustack's device plugin, for a machine with an NVIDIA GPU and driver.
#
# Starts `gpustack-device-plugin --backend nvml` against the stand-in kubelet
# (python -m gpustack.plugin.testkubelet), prints what the plugin advertises (real UUIDs) and
# its Allocate response, then runs PyTorch with the environment that response gives a container:
# without an NVIDIA container runtime, NVIDIA_VISIBLE_DEVICES is mapped to CUDA_VISIBLE_DEVICES.
# A small matmul on CUDA must match the CPU result. Exits non-zero on any failure.
#
# Environment: PYTHON (default .venv/bin/python; needs torch with CUDA), RESOURCE
# (default nvidia.com/gpu), COUNT (devices to allocate, default 1), TIMEOUT (seconds, default 60).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
PLUGIN=${PLUGIN:-$(dirname "$PYTHON")/gpustack-device-plugin}
RESOURCE=${RESOURCE:-nvidia.com/gpu}
COUNT=${COUNT:-1}
TIMEOUT=${TIMEOUT:-60}

fail() {
    echo "real-gpu-check: FAIL: $*" >&2
    exit 1
}

[[ -x $PYTHON ]] || fail "no Python at $PYTHON (set PYTHON)"
[[ -x $PLUGIN ]] || fail "no gpustack-device-plugin at $PLUGIN (pip install -e . first)"
"$PYTHON" -c 'import torch' 2>/dev/null || fail "PyTorch is not importable by $PYTHON"
if command -v nvidia-smi >/dev/null 2>&1; then
    echo "== nvidia-smi -L"
    nvidia-smi -L
fi

work=$(mktemp -d /tmp/gs-gpu-check.XXXXXX)
plugin_pid=""
cleanup() {
    if [[ -n $plugin_pid ]] && kill -0 "$plugin_pid" 2>/dev/null; then
        kill -TERM "$plugin_pid"
        wait "$plugin_pid" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$PLUGIN" --backend nvml --socket-dir "$work/dp" 2>"$work/plugin.log" &
plugin_pid=$!

if ! "$PYTHON" -m gpustack.plugin.testkubelet --socket-dir "$work/dp" --resource "$RESOURCE" \
    --allocate "$COUNT" --timeout "$TIMEOUT" >"$work/result.json"; then
    echo "== plugin log" >&2
    cat "$work/plugin.log" >&2
    fail "the plugin did not register, list or allocate $COUNT x $RESOURCE"
fi

echo "== plugin log"
cat "$work/plugin.log"
# Prints the advertised devices and the Allocate response, then the visible-devices value.
visible=$("$PYTHON" - "$work/result.json" <<'PY'
import json
import sys

result = json.load(open(sys.argv[1]))
reg = result["registered"]
print(f"== registered {reg['resource']} on {reg['endpoint']} ({reg['version']})", file=sys.stderr)
print("== advertised devices", file=sys.stderr)
for device in result["devices"]:
    print(f"   {device['id']}  {device['health']}  numa={device['numa_nodes']}", file=sys.stderr)
print("== Allocate response", file=sys.stderr)
print(json.dumps(result["allocate_response"], indent=2), file=sys.stderr)
ids = [d["id"] for d in result["devices"]]
if not all(i.startswith(("GPU-", "MIG-")) for i in ids):
    sys.exit(f"advertised IDs are not NVIDIA UUIDs: {ids}")
envs = (result["allocate_response"] or {}).get("envs", {})
if "NVIDIA_VISIBLE_DEVICES" not in envs:
    sys.exit("Allocate response has no NVIDIA_VISIBLE_DEVICES")
print(envs["NVIDIA_VISIBLE_DEVICES"])
PY
) || fail "unexpected plugin output"

echo "== running PyTorch with CUDA_VISIBLE_DEVICES=$visible (from NVIDIA_VISIBLE_DEVICES)"
NVIDIA_VISIBLE_DEVICES=$visible CUDA_VISIBLE_DEVICES=$visible CUDA_DEVICE_ORDER=PCI_BUS_ID \
    EXPECTED_COUNT=$COUNT "$PYTHON" - <<'PY' || fail "the allocated GPU is not usable from PyTorch"
import os
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch.cuda.is_available() is False")
count = torch.cuda.device_count()
expected = int(os.environ["EXPECTED_COUNT"])
if count != expected:
    sys.exit(f"{count} CUDA devices visible, {expected} allocated")
wanted = os.environ["CUDA_VISIBLE_DEVICES"].split(",")
for n in range(count):
    props = torch.cuda.get_device_properties(n)
    uuid = getattr(props, "uuid", None)
    print(f"cuda:{n} {props.name} {props.total_memory // 2**20} MiB uuid={uuid}")
    if uuid is not None and wanted[n].startswith("GPU-") and f"GPU-{uuid}" != wanted[n]:
        sys.exit(f"cuda:{n} is GPU-{uuid}, expected {wanted[n]}")
a = torch.randn(1024, 1024)
b = torch.randn(1024, 1024)
on_gpu = (a.cuda() @ b.cuda()).cpu()
if not torch.allclose(on_gpu, a @ b, rtol=1e-3, atol=1e-2):
    sys.exit("matmul on CUDA differs from the CPU result")
print(f"matmul 1024x1024 on {torch.cuda.get_device_name(0)}: OK")
PY

kill -TERM "$plugin_pid"
wait "$plugin_pid" || fail "the plugin did not exit cleanly on SIGTERM"
plugin_pid=""
if compgen -G "$work/dp/nvidia-*.sock" >/dev/null; then
    fail "the plugin left its sockets behind"
fi
echo "real-gpu-check: OK"
