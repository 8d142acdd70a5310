"""Shell scripts that go into the components' ConfigMaps, rendered with jinja2.

gpustack has no validator pod (the operator's ``nvidia-validator``), so these scripts produce the
readiness files that order the stack on each node:

- ``driver-ready`` (written by the driver's startupProbe, or by the toolkit's init container when
  the driver is preinstalled) holds ``KEY=value`` lines the toolkit sources: IS_HOST_DRIVER,
  NVIDIA_DRIVER_ROOT, DRIVER_ROOT_CTR_PATH, NVIDIA_DEV_ROOT, DEV_ROOT_CTR_PATH.
- ``.driver-ctr-ready`` (written by the driver's startupProbe) says the driver container is up;
  with GPUDirect RDMA it holds ``GPU_DIRECT_RDMA_ENABLED=true``, as the operator's does.
- ``toolkit-configured`` (written by the toolkit's startupProbe) says the installer configured
  the runtime and the ``/dev/char`` links exist; the device plugin's pod then starts through the
  ``nvidia`` runtime and writes
- ``toolkit-ready`` only after ``nvidia-smi`` ran inside it (:data:`RUNTIME_CHECK`): proof that
  the runtime injects the GPUs, as NVIDIA's validator proves it before writing the same file.

Files are written to a temporary name and renamed so a reader never sources half a file.
"""

from __future__ import annotations

from typing import Final

import jinja2

from gpustack.profile import readiness

#: Where every consumer mounts the driver root (host ``/`` for a preinstalled driver).
DRIVER_ROOT_CTR_PATH: Final = "/driver-root"
#: Where the toolkit mounts the host's ``/``.
HOST_ROOT_CTR_PATH: Final = "/host"
#: Where scripts ConfigMaps are mounted in the containers.
SCRIPTS_DIR: Final = "/usr/local/lib/gpustack"
#: Readiness files under the validations folder: named in :mod:`gpustack.profile.readiness`,
#: which also decides who waits for them.
TOOLKIT_CONFIGURED: Final = readiness.TOOLKIT_CONFIGURED
TOOLKIT_READY: Final = readiness.TOOLKIT_READY

#: How every script and Python program gpustack puts into a ConfigMap is rendered: an unknown
#: name fails the synthesis instead of leaving a blank, and block tags leave no blank lines.
TEMPLATES = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)

_WRITE_DRIVER_READY = """\
write_driver_ready() {  # is_host driver_root dev_root dev_root_ctr
  tmp="{{ validations }}/.driver-ready.tmp"
  printf '%s\\n' "IS_HOST_DRIVER=$1" "NVIDIA_DRIVER_ROOT=$2" \\
    "DRIVER_ROOT_CTR_PATH={{ driver_root_ctr }}" "NVIDIA_DEV_ROOT=$3" \\
    "DEV_ROOT_CTR_PATH=$4" > "$tmp"
  mv -f "$tmp" "{{ validations }}/driver-ready"
}
"""

DRIVER_STARTUP_PROBE = TEMPLATES.from_string(
    """\
#!/bin/sh
# startupProbe of nvidia-driver-ctr. Succeeds once the kernel module is loaded and nvidia-smi
# answers, then publishes driver readiness for the container toolkit on this node.
set -eu
if [ ! -e "{{ sys_module }}/nvidia/refcnt" ]; then
  echo "nvidia kernel module is not loaded yet" >&2
  exit 1
fi
status="{{ validations }}/.driver-daemons-status"
if [ -f "$status" ] && [ "$(cat "$status")" != "Ready" ]; then
  echo "driver daemons are not ready yet" >&2
  exit 1
fi
nvidia-smi > /dev/null
mkdir -p "{{ validations }}"
"""
    + _WRITE_DRIVER_READY
    + """\
tmp="{{ validations }}/.driver-ctr-ready.tmp"
{% if rdma %}
# The optional driver features this pod enables, listed as the operator lists them.
printf '%s\\n' "GPU_DIRECT_RDMA_ENABLED=true" > "$tmp"
{% else %}
: > "$tmp"
{% endif %}
mv -f "$tmp" "{{ validations }}/.driver-ctr-ready"
# Device nodes live in the driver container's /dev when it created them, else on the host.
if [ -e "{{ driver_root }}/dev/nvidiactl" ]; then
  write_driver_ready false "{{ driver_root }}" "{{ driver_root }}" "{{ driver_root_ctr }}"
else
  write_driver_ready false "{{ driver_root }}" / "{{ host_root_ctr }}"
fi
"""
)

TOOLKIT_WAIT_FOR_DRIVER = TEMPLATES.from_string(
    """\
#!/bin/sh
# Init container of the toolkit: block until the driver on this node works.
set -eu
{% if host_driver %}
mkdir -p "{{ validations }}"
# The driver is preinstalled on the host: check it there and publish driver-ready ourselves.
"""
    + _WRITE_DRIVER_READY
    + """\
{% if host_driver_root == "/" %}
until chroot "{{ host_root_ctr }}" nvidia-smi > /dev/null; do
  echo "waiting for the host driver: 'nvidia-smi' fails on the host" >&2
  sleep 10
done
write_driver_ready true / / "{{ driver_root_ctr }}"
{% else %}
# The driver lives under {{ host_driver_root }} (not a root filesystem of its own): run its
# nvidia-smi with the host's loader and the driver's libraries. Device nodes are the host's.
until chroot "{{ host_root_ctr }}" env \\
    LD_LIBRARY_PATH="{{ host_driver_root }}/lib64:{{ host_driver_root }}/lib" \\
    "{{ host_driver_root }}/bin/nvidia-smi" > /dev/null; do
  echo "waiting for the host driver: '{{ host_driver_root }}/bin/nvidia-smi' fails" >&2
  sleep 10
done
write_driver_ready true "{{ host_driver_root }}" / "{{ host_root_ctr }}"
{% endif %}
{% else %}
until [ -f "{{ validations }}/driver-ready" ]; do
  echo "waiting for the driver container ({{ validations }}/driver-ready)"
  sleep 5
done
{% endif %}
echo "driver ready:"
cat "{{ validations }}/driver-ready"
"""
)

TOOLKIT_ENTRYPOINT = TEMPLATES.from_string(
    """\
#!/bin/sh
# Main container of the toolkit: take the driver paths from driver-ready, then run the installer.
set -eu
until [ -f "{{ validations }}/driver-ready" ]; do
  echo "waiting for {{ validations }}/driver-ready"
  sleep 5
done
set -a
. "{{ validations }}/driver-ready"
set +a
# Device nodes made after the start-up probe linked them (MIG devices after a reconfiguration,
# nodes the driver recreates) need /dev/char links too, or systemd's next daemon-reload cuts
# them off: relink while the toolkit runs (NVIDIA's validator makes every possible node and
# link once instead).
(
  while sleep {{ relink_seconds }}; do
    sh "{{ scripts_dir }}/dev-char-symlinks.sh" "$DEV_ROOT_CTR_PATH" "$NVIDIA_DEV_ROOT" \
      "{{ dev_char }}" > /dev/null 2>&1 || true
  done
) &
# containerd >= 1.6.9 may still be restarting from a previous configuration; signalling it too
# early kills the installer (NVIDIA gpu-operator #456).
sleep 5
exec nvidia-toolkit
"""
)
#: Seconds between two passes of the toolkit's /dev/char relinking loop.
DEV_CHAR_RELINK_SECONDS: Final = 30

TOOLKIT_READY_PROBE = TEMPLATES.from_string(
    """\
#!/bin/sh
# startupProbe of the toolkit: succeeds once the installer has installed the runtime and
# configured the node's container runtime and every NVIDIA device node is linked under
# /dev/char; then tells the device plugin ({{ configured }}), whose pod proves the runtime.
set -eu
test -f "$TOOLKIT_PID_FILE"
test -x "{{ install_dir }}/toolkit/nvidia-container-runtime"
{% if hook_dir %}
ls "{{ hook_dir }}"/*nvidia*.json > /dev/null
{% else %}
# The handler the installer wrote names our runtime by its full path: a stock config may
# mention nvidia-container-runtime without it (MicroK8s's template does).
grep -qF '"{{ install_dir }}/toolkit/nvidia-container-runtime"' "{{ runtime_config }}"
{% if drop_in_import %}
# ... and the top-level config imports the drop-in's folder: NVIDIA's installer adds the
# folder's glob to `imports`, never the drop-in file itself.
grep -qF '"{{ drop_in_import }}"' "{{ top_level_config }}"
{% endif %}
{% endif %}
{% if cdi %}
ls "{{ cdi_root }}"/*nvidia.com-gpu* > /dev/null
{% endif %}
set -a
. "{{ validations }}/driver-ready"
set +a
sh "{{ scripts_dir }}/dev-char-symlinks.sh" "$DEV_ROOT_CTR_PATH" "$NVIDIA_DEV_ROOT" \\
  "{{ dev_char }}"
touch "{{ validations }}/{{ configured }}"
"""
)

#: Links ``/dev/char/<major>:<minor>`` to every NVIDIA device node, as ``nvidia-ctk system
#: create-dev-char-symlinks`` does for NVIDIA's validator: on systemd-cgroup nodes,
#: ``systemctl daemon-reload`` rebuilds a container's device rules from ``/dev/char``, and a GPU
#: with no link there is cut off from running containers ("Failed to initialize NVML: Unknown
#: Error"). Device numbers come from ``stat`` (``%t``/``%T``: major and minor, in hex); the link
#: names the node's *host* path (inside the driver container's root when it made the nodes).
#: Like NVIDIA's command it skips GPUDirect Storage, NVSwitch and NVLink nodes (``nodeIsBlocked``
#: in nvidia-container-toolkit ``cmd/nvidia-ctk/system/create-dev-char-symlinks/existing.go``,
#: at both pinned tags); unlike it, it also links IMEX channels, which ComputeDomain pods get.
#: ``tests/node/test_nvidia_ctk.py`` (``nvidia_code``) holds it equal to NVIDIA's command.
DEV_CHAR_SYMLINKS: Final = """\
#!/bin/sh
# usage: dev-char-symlinks.sh DEV_ROOT_HERE DEV_ROOT_ON_HOST CHAR_DIR_HERE
# Links CHAR_DIR/<major>:<minor> -> <DEV_ROOT_ON_HOST>/dev/<node> for every NVIDIA device node
# under DEV_ROOT_HERE/dev; fails while there is none (the driver has not made them yet).
set -eu
here=$1
host=${2%/}
chars=$3
mkdir -p "$chars"
count=0
for node in "$here"/dev/nvidia* "$here"/dev/nvidia-caps/* \\
    "$here"/dev/nvidia-caps-imex-channels/*; do
  [ -e "$node" ] && [ ! -d "$node" ] || continue
  case ${node##*/} in nvidia-fs* | nvidia-nvswitch* | nvidia-nvlink*) continue ;; esac
  numbers=$(stat -L -c '%t %T' "$node")
  major=$(printf '%d' "0x${numbers% *}")
  minor=$(printf '%d' "0x${numbers#* }")
  [ "$major" -ne 0 ] || continue  # not a device node
  ln -sfn "$host${node#"$here"}" "$chars/$major:$minor"
  count=$((count + 1))
done
if [ "$count" -eq 0 ]; then
  echo "no NVIDIA device nodes under $here/dev yet" >&2
  exit 1
fi
echo "linked $count NVIDIA device nodes under /dev/char"
"""

#: The device plugin pod's proof that the runtime works: it runs with the ``nvidia``
#: RuntimeClass (or CRI-O's hook), so ``nvidia-smi`` exists and sees the GPUs only if the
#: runtime injected them; only then is ``toolkit-ready`` written (``{validations}``).
RUNTIME_CHECK: Final = (
    "nvidia-smi -L"
    ' && tmp="{validations}/.toolkit-ready.tmp"'
    ' && : > "$tmp" && mv -f "$tmp" "{validations}/toolkit-ready"'
)

#: One all_reduce across every process torchrun starts (one per GPU): NCCL on GPUs, gloo on a
#: machine without CUDA. Each rank contributes rank + 1, so the sum proves every GPU took part.
ALL_REDUCE_WORKER = """\
import os
import sys

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
cuda = torch.cuda.is_available()
if cuda:
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
backend = "nccl" if cuda else "gloo"
dist.init_process_group(backend)
t = torch.full((1 << 20,), float(rank + 1), device="cuda" if cuda else "cpu")
dist.all_reduce(t)
ok = bool(torch.all(t == world * (world + 1) / 2))
dist.destroy_process_group()
if rank == 0:
    print("all_reduce", backend, world, "ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
"""

#: The example Job's check: CUDA visible, device names, one matmul on every visible GPU and,
#: with more than one GPU, an all_reduce across them all (ALL_REDUCE_WORKER under torchrun), which
#: multi-GPU training needs: NVLink, NVSwitch with the fabric manager, or PCIe peer access.
EXAMPLE_CHECK = (
    """\
import os
import subprocess
import sys
import tempfile

import torch

available = torch.cuda.is_available()
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", available)
if not available:
    if os.environ.get("GPUSTACK_SIMULATED") == "true":
        # Simulated GPUs cannot run CUDA; proving the plugin allocated devices is the check:
        # NVIDIA_VISIBLE_DEVICES (envvar strategy) or the simulated CDI devices' variables.
        allocated = [os.environ.get("NVIDIA_VISIBLE_DEVICES", "")]
        allocated = [v for v in allocated if v not in ("", "all", "void", "none")]
        allocated += [
            v for k, v in sorted(os.environ.items()) if k.startswith("GPUSTACK_SIMULATED_DEVICE_")
        ]
        print("simulated backend, allocated:", ",".join(allocated))
        sys.exit(0 if allocated else 1)
    sys.exit("CUDA is not available: check the runtime class and the device plugin")
torch.manual_seed(0)
a = torch.randn(256, 256)
expected = a @ a
count = torch.cuda.device_count()
for i in range(count):
    on_gpu = a.to(f"cuda:{i}")
    ok = torch.allclose((on_gpu @ on_gpu).cpu(), expected, rtol=1e-3, atol=1e-2)
    print(f"cuda:{i}", torch.cuda.get_device_name(i), "matmul", "ok" if ok else "WRONG")
    if not ok:
        sys.exit(f"cuda:{i} computed a wrong matmul result")
if count > 1:
    WORKER = '''\\
"""
    + ALL_REDUCE_WORKER
    + """'''
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as worker:
        worker.write(WORKER)
    run = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={count}", worker.name]
    # every rank is in this pod: bootstrap over loopback, whatever the pod network allows
    env = {"NCCL_SOCKET_IFNAME": "lo", "GLOO_SOCKET_IFNAME": "lo", **os.environ}
    if subprocess.run(run, env=env).returncode != 0:
        sys.exit(f"all_reduce across {count} GPUs failed: check NVLink, the fabric manager"
                 " (NVSwitch systems) and that the pod got every GPU it asked for")
"""
)
