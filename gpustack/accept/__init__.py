"""The acceptance run after a sync: ``gpustack accept``.

Validation (``gpustack validate``, with ``--state`` against the nodes) says the profile fits its
cluster; the acceptance run says the synced stack delivers it. :mod:`.manifests` writes, for a
profile, Jobs that run on every GPU node under the stack's runtime class: ``nvidia-smi -L``
against the devices the profile promises (GPU count and product, MIG devices, shared replicas;
:mod:`.harness.devices`), and for multi-GPU and multi-node profiles an NCCL all-reduce whose bus
bandwidth is compared with a threshold derived from the product's interconnect in the catalog
(:mod:`.harness.allreduce`, :mod:`.expect`). Each pod prints one result line; :mod:`.report`
turns the collected logs into one report (text, JSON, JUnit).
"""
