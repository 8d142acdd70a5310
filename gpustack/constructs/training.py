"""The training examples' script: a jinja2 template rendered per kind into a ConfigMap.

One template serves the three training kinds of ``workloads.examples[].kind``:

- ``train``: one process, a few optimizer steps of a tiny model on synthetic data.
- ``ddp``: the same under ``torchrun --nproc-per-node`` (one process per GPU of the pod),
  wrapped in DistributedDataParallel; NCCL on GPUs, gloo without CUDA.
- ``multinode-ddp``: the same across the pods of an Indexed Job; ``torchrun`` finds rank 0
  through the headless Service (see :mod:`gpustack.constructs.examples`).

Every kind checkpoints to an ``emptyDir`` (the model, the optimizer and the step) and resumes
from it: a container restarted in place continues where it stopped. It fails (exit 1) when the
loss did not fall or, with DDP, when the ranks' weights differ after training, so a Job that
completes proves the GPUs trained. Without CUDA it refuses to run unless told it may
(``GPUSTACK_SIMULATED`` or ``GPUSTACK_ALLOW_CPU``): on a real cluster a CPU run would hide a
broken stack. Tests render each kind and run it on the CPU with real PyTorch.
"""

from __future__ import annotations

from typing import Final

from gpustack.constructs.scripts import TEMPLATES
from gpustack.torchrun import RENDEZVOUS_PORT as RENDEZVOUS_PORT
from gpustack.torchrun import torchrun

#: Where the script's ConfigMap and the checkpoint volume are mounted.
SCRIPT_DIR: Final = "/opt/gpustack-example"
SCRIPT_NAME: Final = "train.py"
CHECKPOINT_DIR: Final = "/checkpoints"
#: Steps and batch size: enough for the loss to fall, a few seconds on a CPU.
STEPS: Final = 30
BATCH: Final = 64


TRAIN_TEMPLATE = TEMPLATES.from_string(
    '''\
"""gpustack example ({{ kind }}): {{ steps }} steps of a tiny model on synthetic data."""

import os
import sys
from pathlib import Path

import torch
from torch import nn
{% if distributed %}
import torch.distributed as dist
{% endif %}

STEPS = {{ steps }}
BATCH = {{ batch }}
CHECKPOINT = Path(os.environ.get("CHECKPOINT_DIR", "{{ checkpoint_dir }}")) / "model.pt"

{% if distributed %}
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local = int(os.environ["LOCAL_RANK"])
{% else %}
rank, world, local = 0, 1, 0
{% endif %}
cuda = torch.cuda.is_available()
if not cuda and "true" not in (
    os.environ.get("GPUSTACK_SIMULATED"),
    os.environ.get("GPUSTACK_ALLOW_CPU"),
):
    sys.exit("CUDA is not available: check the runtime class and the device plugin")
device = torch.device(f"cuda:{local}" if cuda else "cpu")
if cuda:
    torch.cuda.set_device(device)
{% if distributed %}
backend = "nccl" if cuda else "gloo"
dist.init_process_group(backend)
{% endif %}

torch.manual_seed(0)  # the same initial weights on every rank
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
{% if distributed %}
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
{% else %}
ddp = model
{% endif %}

start = 0
if CHECKPOINT.exists():
    state = torch.load(CHECKPOINT, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["step"]
    print(f"rank {rank}: resumed from {CHECKPOINT} at step {start}")

# The task: y = x @ w for a fixed w; each rank draws its own batches.
w_true = torch.randn(32, 1, generator=torch.Generator().manual_seed(7))
batches = torch.Generator().manual_seed(1000 + rank)
losses = []
for step in range(start, STEPS):
    x = torch.randn(BATCH, 32, generator=batches)
    x, y = x.to(device), (x @ w_true).to(device)
    loss = nn.functional.mse_loss(ddp(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

ok = not losses or losses[-1] < losses[0]
{% if distributed %}
# DDP averages gradients in every step: all ranks must end with the same weights.
flat = torch.cat([p.detach().flatten() for p in model.parameters()])
low, high = flat.clone(), flat.clone()
dist.all_reduce(low, op=dist.ReduceOp.MIN)
dist.all_reduce(high, op=dist.ReduceOp.MAX)
same = bool(torch.equal(low, high))
ok = ok and same
{% endif %}
if rank == 0:
    CHECKPOINT.parent.mkdir(parents=True, exist_ok=True)
    tmp = CHECKPOINT.with_suffix(".tmp")
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": STEPS}, tmp
    )
    tmp.replace(CHECKPOINT)
    if losses:
        print(f"trained {len(losses)} steps on {world} {'GPU' if cuda else 'CPU'} process(es):"
              f" loss {losses[0]:.4f} -> {losses[-1]:.4f}")
{% if distributed %}
    print("ranks agree" if same else "ranks DISAGREE", backend, world)
# Tear down together: a rank that destroys its group while rank 0 still writes the checkpoint
# can make gloo abort rank 0 at exit (seen as SIGABRT after a good run).
dist.barrier()
# DDP's reducer holds the process group: drop it first, so that destroying the group frees gloo's
# threads now, not while the interpreter shuts down ("terminate called without an active
# exception", SIGABRT, on both ranks of a good run).
del ddp
dist.destroy_process_group()
{% endif %}
sys.exit(0 if ok else 1)
'''
)


def render_script(kind: str) -> str:
    """The training script of one kind (``train``, ``ddp`` or ``multinode-ddp``)."""
    return TRAIN_TEMPLATE.render(
        kind=kind,
        distributed=kind != "train",
        steps=STEPS,
        batch=BATCH,
        checkpoint_dir=CHECKPOINT_DIR,
    )


def command(kind: str, gpus: int, nodes: int) -> list[str]:
    """The container command of a training example.

    ``multinode-ddp`` reads ``NODE_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` from the
    container's environment, which Kubernetes expands in the command (``$(VAR)``).
    """
    script = f"{SCRIPT_DIR}/{SCRIPT_NAME}"
    if kind == "train":
        return ["python", script]
    return torchrun([script], gpus=gpus, nodes=1 if kind == "ddp" else nodes)
