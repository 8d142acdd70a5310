"""``dev-shm``: a PyTorch or NCCL container has a memory-backed ``/dev/shm``.

Container runtimes give ``/dev/shm`` 64 MiB. PyTorch's DataLoader workers pass batches through
it and NCCL uses it between GPUs without peer access; both crash once it is full ("bus error",
"unable to write to file </torch_...>", "NCCL WARN Error while creating shared memory
segment"). An ``emptyDir`` with ``medium: Memory`` mounted at ``/dev/shm`` (or ``hostIPC``)
fixes it. PyTorch is told by the image (pytorch, torch, NeMo, DeepSpeed) or the command
(``torchrun``, ``torch.distributed``, ``NCCL_*`` variables).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpustack.kube.pods import Container, PodSite, listed
from gpustack.lint.context import LintContext
from gpustack.profile.finding import Finding

SHM = "/dev/shm"
_IMAGE = re.compile(r"pytorch|torch|nemo|deepspeed|megatron", re.IGNORECASE)
_WORDS = re.compile(r"torchrun|torch\.distributed|deepspeed|accelerate launch|^NCCL_")


def is_torch(c: Container) -> bool:
    """A container that runs PyTorch or NCCL, by its image or its command."""
    return bool(_IMAGE.search(c.image.rpartition("/")[2].split(":")[0])) or any(
        _WORDS.search(w) for w in c.words()
    )


def memory_volumes(site: PodSite) -> set[str]:
    out = set()
    for v in listed(site.spec.get("volumes")):
        if isinstance(v, dict):
            empty, host = v.get("emptyDir"), v.get("hostPath")
            in_memory = isinstance(empty, dict) and empty.get("medium") == "Memory"
            if in_memory or (isinstance(host, dict) and host.get("path") == SHM):
                out.add(str(v.get("name")))  # a name of the wrong type matches no mount
    return out


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    if site.spec.get("hostIPC") is True:
        return
    memory = memory_volumes(site)
    for c in site.containers():
        if not is_torch(c):
            continue
        mounts = [m for m in listed(c.data.get("volumeMounts")) if isinstance(m, dict)]
        if any(m.get("mountPath") == SHM and str(m.get("name")) in memory for m in mounts):
            continue
        yield Finding(
            (*c.path, "volumeMounts") if mounts else c.path,
            f"PyTorch container {c.name} has no memory-backed {SHM}: the runtime's 64 MiB "
            "crashes DataLoader workers and NCCL (bus error)",
            "add a volume {name: dshm, emptyDir: {medium: Memory, sizeLimit: 1Gi}} and mount "
            f"it at {SHM}",
        )
