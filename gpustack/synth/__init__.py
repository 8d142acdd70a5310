"""Synthesis output: turn synthesized objects into a GitOps-ready ``dist/``.

The pipeline is split so each step can be tested alone and only one step needs Node:

* :mod:`~gpustack.synth.layout` decides file names, order and the kustomization (pure Python);
* :mod:`~gpustack.synth.serialize` renders one manifest as stable YAML bytes;
* :mod:`~gpustack.synth.index` records which cluster folders gpustack owns;
* :mod:`~gpustack.synth.plan` plans a write, :mod:`~gpustack.synth.writer` applies it atomically
  under the :mod:`~gpustack.synth.lock`, :mod:`~gpustack.synth.compare` compares (``--check``);
* :mod:`~gpustack.synth.node` makes sure Node.js is there and quiet before cdk8s is imported;
* :mod:`~gpustack.synth.pipeline` runs profiles through the constructs (the only cdk8s import).
"""

from __future__ import annotations

from gpustack.synth.errors import SynthError

__all__ = ["SynthError"]
