"""gpustack's simulated DRA driver for GPUs (``gpustack-dra-plugin``).

A kubelet plugin that speaks the kubelet's DRA gRPC API (``v1.DRAPlugin``) and plugin
registration, and publishes the node's simulated GPUs as a ``resource.k8s.io/v1`` ResourceSlice
in exactly the shape NVIDIA's DRA driver publishes real ones (:mod:`.upstream` holds the facts,
read in NVIDIA's code). It lets the real scheduler allocate DRA claims on clusters without GPUs.

Modules: ``upstream`` (facts), ``slices`` (GPUs → devices and slice bodies), ``kubeapi``
(standard-library API client and its RBAC), ``publisher`` (slice reconcile), ``claims``
(NodePrepareResources: claim → CDI spec and IDs), ``driver`` (gRPC servers), ``main`` (CLI),
``testkubelet`` (a stand-in kubelet for tests), ``v1`` and ``pluginregistration`` (protos).
"""
