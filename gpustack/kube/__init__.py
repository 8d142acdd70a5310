"""The floor for reading Kubernetes objects, below every feature that reads them.

``lint`` reads a team's manifests, ``doctor`` and ``nodestate`` read a cluster's state,
``accept`` reads both: each needs the same vocabulary, and when it lived inside one feature
the others imported that feature's internals (lint under doctor under nodestate under accept).
Here, pure and typed: :mod:`~gpustack.kube.manifests` (multi-document YAML with the position of
every value), :mod:`~gpustack.kube.pods` (the pod templates of every workload kind, containers
and what they ask for), :mod:`~gpustack.kube.quantity` (Kubernetes quantities),
:mod:`~gpustack.kube.claims` and :mod:`~gpustack.kube.cel` (Dynamic Resource Allocation claims
and their CEL selectors), :mod:`~gpustack.kube.state` (the cluster's state, read once) and
:mod:`~gpustack.kube.kubectl` (the only module that talks to a cluster),
:mod:`~gpustack.kube.nodes` (the profile's nodes, GPU evidence, the stack's pods on a node) and
:mod:`~gpustack.kube.labels` (the label and annotation keys gpustack writes and reads: the one
module the constructs import from here), with :mod:`~gpustack.kube.suggest` for the
did-you-mean they share.

It imports nothing from the features (lint, doctor, nodestate, accept, conformance), nor from
constructs, synth, gitops or the CLI: ``tests/test_imports.py`` holds it to that. The profile's
loader and derivations, and NVIDIA's published DRA facts (:mod:`gpustack.dra_upstream`), are
below it and may be read.
"""
