"""Conformance tables: what NVIDIA's own rendering of each operand does that decides whether it
works on a node, and where gpustack deliberately does otherwise.

Why: gpustack synthesizes the operands the GPU Operator would run, without the operator. The
operator's repository holds its rendering at the tag gpustack's defaults come from (GPU Operator
:data:`~gpustack.profile.model.upstream.GPU_OPERATOR`): golden DaemonSets
(``internal/state/testdata/golden/*.yaml``), the per-operand assets (``assets/state-*``) and the
transforms that complete them (``controllers/object_controls.go``, ``Transform<Operand>``). Each
:class:`Fact` states one property of that rendering in gpustack's own words, cites the file, and
names the check that holds gpustack's output to it; ``when`` says for which profiles it applies.
Each :class:`Divergence` is a property gpustack renders differently on purpose, with the reason,
and its own check of what gpustack does instead. ``tests/test_conformance.py`` runs every row over
every example profile's DaemonSets; the site page section "Where gpustack differs from the GPU
Operator, and why" is rendered from :data:`DIVERGENCES` (``python -m gpustack.conformance.readme``).

The rows are data modules, one per operand (:mod:`gpustack.conformance.facts`), and
:mod:`gpustack.conformance.divergences`, on what they share (:mod:`gpustack.conformance.row`);
this module joins them. Operands are named by the ``app.kubernetes.io/component`` gpustack gives
their objects; the driver manager is the driver pod's ``k8s-driver-manager`` init container.
"""

from __future__ import annotations

from typing import Final

from gpustack.conformance.divergences import DIVERGENCES
from gpustack.conformance.facts import (
    dcgm_exporter,
    device_plugin,
    dra_controller,
    dra_driver,
    driver,
    mig_manager,
    nfd,
    toolkit,
)
from gpustack.conformance.row import CARRIER, OPERANDS, TAG, WORKLOADS, Divergence, Fact

#: Every fact, operand by operand in the order the stack comes up.
FACTS: Final[tuple[Fact, ...]] = (
    *driver.FACTS,
    *toolkit.FACTS,
    *device_plugin.FACTS,
    *nfd.FACTS,
    *mig_manager.FACTS,
    *dcgm_exporter.FACTS,
    *dra_driver.FACTS,
    *dra_controller.FACTS,
)

__all__ = ["CARRIER", "DIVERGENCES", "FACTS", "OPERANDS", "TAG", "WORKLOADS", "Divergence", "Fact"]
