"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
DCGM exporter, the file it was read from, and the check that holds gpustack's output to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CONTROLS,
    DCGM,
    DCGM_DS,
    DCGM_EXPORTER,
    Fact,
    gpu_class,
    has_gpu_class,
    kubelet_dir,
    src,
)

FACTS: Final[tuple[Fact, ...]] = (
    # --- DCGM exporter --------------------------------------------------------------------
    Fact(DCGM_EXPORTER, "runtime class", "runs with the GPU runtime class", src(CONTROLS),
         c.runtime_class(gpu_class), when=has_gpu_class),
    Fact(DCGM_EXPORTER, "host paths", "the kubelet's pod-resources socket directory,"
         " read-only (GPU to pod mapping)", DCGM_DS,
         c.host_path(DCGM, kubelet_dir("pod-resources"))),
    Fact(DCGM_EXPORTER, "env", "DCGM_EXPORTER_LISTEN :9400 and DCGM_EXPORTER_KUBERNETES",
         DCGM_DS, c.env(DCGM, "DCGM_EXPORTER_KUBERNETES", "true")),
    Fact(DCGM_EXPORTER, "probes", "liveness and readiness on /health (new in v26.x)", DCGM_DS,
         c.probe(DCGM, "readinessProbe", path="/health")),
    Fact(DCGM_EXPORTER, "privileges", "DCGM's profiling metrics need CAP_SYS_ADMIN (NVIDIA:"
         " privileged)", DCGM_DS, c.capability(DCGM, "SYS_ADMIN")),
    Fact(DCGM_EXPORTER, "RBAC", "no API token without pod-label metadata", DCGM_DS,
         c.pod_field("automountServiceAccountToken", False)),
)  # fmt: skip
