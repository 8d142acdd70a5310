"""gpustack acceptance: all-reduce bus bandwidth, as NCCL's nccl-tests report it.

Runs under ``torchrun`` in the acceptance pods (shipped in a ConfigMap; needs PyTorch). Each
rank all-reduces a ``--size-mb`` float32 tensor ``--iters`` times after ``--warmup`` rounds;
the slowest rank's mean time gives the algorithm bandwidth (bytes / time) and the bus
bandwidth ``algbw * 2 (n - 1) / n``, the figure that does not depend on the number of ranks
(nccl-tests, doc/PERFORMANCE.md). A first all-reduce of known values checks the sum. Rank 0
prints one ``GPUSTACK-ACCEPT {json}`` line; every rank exits 1 when the bus bandwidth is below
``--min-busbw`` GB/s or the sum is wrong.

NCCL on GPUs; without CUDA it refuses to run unless ``GPUSTACK_ALLOW_CPU=true`` (then gloo,
as the test suite runs it): on a cluster a CPU run would hide a broken stack.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

MARK = "GPUSTACK-ACCEPT"


def bus_bandwidth(size_bytes: int, seconds: float, world: int) -> tuple[float, float]:
    """``(algbw, busbw)`` in GB/s of an all-reduce of ``size_bytes`` taking ``seconds``."""
    algbw = size_bytes / seconds / 1e9
    return algbw, algbw * 2 * (world - 1) / world


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-busbw", type=float, required=True, help="GB/s")
    parser.add_argument("--size-mb", type=float, default=256)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--check", default="allreduce-node", help="the result's name")
    return parser.parse_args(argv)


def _sum_is_right(dist: Any, torch: Any, device: Any, rank: int, world: int) -> bool:
    """All-reduce each rank's ``rank + 1``: every element must be the sum over the ranks."""
    probe = torch.full((1024,), float(rank + 1), device=device)
    dist.all_reduce(probe)
    return bool(torch.all(probe == world * (world + 1) / 2))


def _seconds(dist: Any, torch: Any, device: Any, args: argparse.Namespace) -> tuple[int, float]:
    """``(bytes, seconds)``: the tensor's size and the slowest rank's mean all-reduce time."""
    cuda = device.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    count = max(1, int(args.size_mb * 1024 * 1024) // 4)
    data = torch.ones(count, dtype=torch.float32, device=device)
    for _ in range(args.warmup):
        dist.all_reduce(data)
    sync()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.iters):
        dist.all_reduce(data)
    sync()
    took = torch.tensor([(time.perf_counter() - start) / args.iters], device=device)
    dist.all_reduce(took, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
    return count * 4, float(took.item())


def main(argv: list[str] | None = None) -> int:
    import torch
    import torch.distributed as dist

    args = _arguments(argv)
    cuda = torch.cuda.is_available()
    if not cuda and os.environ.get("GPUSTACK_ALLOW_CPU") != "true":
        print("CUDA is not available: check the runtime class and the device plugin")
        return 1
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    backend = "nccl" if cuda else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    correct = _sum_is_right(dist, torch, device, rank, world)
    size, seconds = _seconds(dist, torch, device, args)
    algbw, busbw = bus_bandwidth(size, seconds, world)
    ok = correct and busbw >= args.min_busbw
    problems = [] if correct else ["all-reduce returned a wrong sum"]
    if busbw < args.min_busbw:
        problems.append(f"bus bandwidth {busbw:.2f} GB/s is below {args.min_busbw:.2f} GB/s")
    if rank == 0:
        result = {
            "check": args.check,
            "node": os.environ.get("NODE_NAME", "unknown"),
            "pod": os.environ.get("POD_NAME", "unknown"),
            "ok": ok,
            "problems": problems,
            "backend": backend,
            "world": world,
            "bytes": size,
            "algbw": round(algbw, 3),
            "busbw": round(busbw, 3),
            "threshold": args.min_busbw,
        }
        print(MARK, json.dumps(result, sort_keys=True), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
