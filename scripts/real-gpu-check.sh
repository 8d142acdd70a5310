#!/usr/bin/env bash
# Real-GPU check of gpustack's device plugin, for a machine with an NVIDIA GPU and driver.
#
# Starts `gpustack-device-plugin --backend nvml` against the stand-in kubelet
# (python -m gpustack.plugin.testkubelet), prints what the plugin advertises (real UUIDs) and
# its Allocate response, then runs PyTorch with the environment that response gives a container:
# without an NVIDIA container runtime, NVIDIA_VISIBLE_DEVICES is mapped to CUDA_VISIBLE_DEVICES.
# A small matmul on CUDA must match the CPU result. Exits non-zero on any failure.
#
# Environment: PYTHON (default .venv/bin/python, or any python on PATH such as python3; it needs
# gpustack installed with `pip install -e .` and torch with CUDA), PLUGIN (default: the
# gpustack-device-plugin next to PYTHON, else `PYTHON -m gpustack.plugin.main`), RESOURCE
# (default nvidia.com/gpu; for MIG devices also set MIG_STRATEGY, e.g. MIG_STRATEGY=mixed
# RESOURCE=nvidia.com/mig-1g.10gb), COUNT (devices to allocate, default 1), TIMEOUT (seconds
# to wait for the plugin, default 60), TORCH_TIMEOUT (seconds for the PyTorch step, default 300).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
RESOURCE=${RESOURCE:-nvidia.com/gpu}
COUNT=${COUNT:-1}
TIMEOUT=${TIMEOUT:-60}
TORCH_TIMEOUT=${TORCH_TIMEOUT:-300}

fail() {
    echo "real-gpu-check: FAIL: $*" >&2
    exit 1
}

python_path=$(command -v "$PYTHON") || fail "no Python at $PYTHON (set PYTHON)"
PYTHON=$python_path
if [[ -n ${PLUGIN:-} ]]; then
    [[ -x $PLUGIN ]] || fail "PLUGIN=$PLUGIN is not an executable"
    plugin_cmd=("$PLUGIN")
elif [[ -x $(dirname "$PYTHON")/gpustack-device-plugin ]]; then
    plugin_cmd=("$(dirname "$PYTHON")/gpustack-device-plugin")
else
    plugin_cmd=("$PYTHON" -m gpustack.plugin.main)
fi
if ! err=$("$PYTHON" -c 'import grpc, pynvml, yaml, gpustack.plugin.main, gpustack.plugin.testkubelet' 2>&1); then
    fail "$PYTHON cannot import the plugin (pip install -e . first): ${err##*$'\n'}"
fi
if ! err=$("$PYTHON" -c 'import torch' 2>&1); then
    fail "PyTorch is not importable by $PYTHON: ${err##*$'\n'}"
fi
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

"${plugin_cmd[@]}" --backend nvml --socket-dir "$work/dp" 2>"$work/plugin.log" &
plugin_pid=$!

"$PYTHON" -m gpustack.plugin.testkubelet --socket-dir "$work/dp" --resource "$RESOURCE" \
    --allocate "$COUNT" --timeout "$TIMEOUT" >"$work/result.json" 2>"$work/kubelet.log" &
kubelet_pid=$!
# A plugin that exits (no driver, bad setting) fails the check at once, not after TIMEOUT.
while kill -0 "$kubelet_pid" 2>/dev/null && kill -0 "$plugin_pid" 2>/dev/null; do
    sleep 0.2
done
if ! kill -0 "$plugin_pid" 2>/dev/null; then
    kill -TERM "$kubelet_pid" 2>/dev/null || true
    wait "$kubelet_pid" 2>/dev/null || true
    rc=0
    wait "$plugin_pid" || rc=$?
    plugin_pid=""
    echo "== plugin log" >&2
    cat "$work/plugin.log" >&2
    fail "the plugin exited (status $rc) before the test kubelet was done"
fi
if ! wait "$kubelet_pid"; then
    echo "== plugin log" >&2
    cat "$work/plugin.log" >&2
    cat "$work/kubelet.log" >&2
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
if ! NVIDIA_VISIBLE_DEVICES=$visible CUDA_VISIBLE_DEVICES=$visible CUDA_DEVICE_ORDER=PCI_BUS_ID \
    EXPECTED_COUNT=$COUNT timeout "$TORCH_TIMEOUT" "$PYTHON" - <<'PY'
import os
import sys

import torch

if not torch.cuda.is_available():
    sys.exit("torch.cuda.is_available() is False")
count = torch.cuda.device_count()
expected = int(os.environ["EXPECTED_COUNT"])
wanted = os.environ["CUDA_VISIBLE_DEVICES"].split(",")
if all(w.startswith("MIG-") for w in wanted):
    expected = 1  # a CUDA process enumerates at most one MIG device
if count != expected:
    sys.exit(f"{count} CUDA devices visible, {expected} expected")
for n in range(count):
    props = torch.cuda.get_device_properties(n)
    uuid = getattr(props, "uuid", None)
    print(f"cuda:{n} {props.name} {props.total_memory // 2**20} MiB uuid={uuid}")
    # Compare hex digits only: how torch formats a device UUID differs between versions.
    def digits(text):
        return "".join(c for c in str(text).lower() if c in "0123456789abcdef")

    if uuid is not None and wanted[n].startswith("GPU-") and digits(uuid) != digits(wanted[n][4:]):
        sys.exit(f"cuda:{n} has UUID {uuid}, expected {wanted[n]}")
a = torch.randn(1024, 1024)
b = torch.randn(1024, 1024)
on_gpu = (a.cuda() @ b.cuda()).cpu()
if not torch.allclose(on_gpu, a @ b, rtol=1e-3, atol=1e-2):
    sys.exit("matmul on CUDA differs from the CPU result")
print(f"matmul 1024x1024 on {torch.cuda.get_device_name(0)}: OK")
PY
then
    fail "the allocated GPU is not usable from PyTorch (or it took over ${TORCH_TIMEOUT}s)"
fi

kill -TERM "$plugin_pid"
wait "$plugin_pid" || fail "the plugin did not exit cleanly on SIGTERM"
plugin_pid=""
if compgen -G "$work/dp/nvidia-*.sock" >/dev/null; then
    fail "the plugin left its sockets behind"
fi
echo "real-gpu-check: OK"
