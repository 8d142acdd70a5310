"""The ``torchrun`` command line, written once for everything that starts distributed PyTorch.

The training examples (:mod:`gpustack.constructs.training`) and the acceptance run's all_reduce
(:mod:`gpustack.accept.manifests`) start their processes the same way; neither may import the
other (constructs write cdk8s objects, accept writes plain dicts), so the line lives here, below
both, as a pure function of the pod's GPUs, the pods and the script. It imports nothing of
gpustack (``tests/test_imports.py``).

One pod runs ``torchrun --standalone``. Across pods (an Indexed Job) each pod reads its rank and
rank 0's address and port from its environment, which Kubernetes expands in the command
(``$(VAR)``): the pods' objects set ``NODE_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``, the last
to :data:`RENDEZVOUS_PORT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

#: torchrun's rendezvous port on rank 0 (``MASTER_PORT`` of a job across pods).
RENDEZVOUS_PORT: Final = 29500


def torchrun(script: Sequence[str], *, gpus: int, nodes: int = 1) -> list[str]:
    """``torchrun`` starting one process per GPU (``gpus``) of each of ``nodes`` pods, each
    running ``script`` (the script's path, then its arguments)."""
    if nodes == 1:
        return ["torchrun", "--standalone", f"--nproc-per-node={gpus}", *script]
    return [
        "torchrun",
        f"--nnodes={nodes}",
        f"--nproc-per-node={gpus}",
        "--node-rank=$(NODE_RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
        *script,
    ]
