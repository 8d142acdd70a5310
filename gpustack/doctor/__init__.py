"""``gpustack doctor``: why a cluster shows no GPUs, or why a GPU pod is Pending.

Pure functions over the cluster's state as ``kubectl get nodes,pods,daemonsets,events,
resourceclaims,resourceslices,deviceclasses,devicetaintrules -A -o json`` prints it
(:mod:`~gpustack.kube.state`), compared with what the profile says the stack should do
(:mod:`~gpustack.doctor.nodes` per node, :mod:`~gpustack.doctor.device_taints` per ResourceSlice
whose devices are all tainted and per DeviceTaintRule, :mod:`~gpustack.doctor.pending` per
Pending GPU pod, :mod:`~gpustack.doctor.claims` per Pending
pod whose ResourceClaim is not allocated). Only :mod:`~gpustack.kube.kubectl` talks to a
cluster, and only when asked, so every diagnosis is tested on recorded state.
"""
