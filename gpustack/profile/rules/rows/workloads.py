"""A data table, and reads as one: the registry's rows for ``workloads``, ``dra`` and ``gitops``,
each the whole declaration of one rule."""

from __future__ import annotations

from gpustack.profile.rules import (
    dra,
    dra_pools,
    gitops,
    workloads,
)
from gpustack.profile.rules.rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="workload-names-unique",
        check=workloads.workload_names_unique,
        section="workloads",
        summary="example names are unique (each is a Job's name)",
        fix="give each example its own name",
    ),
    Rule(
        id="workload-cuda-fits-driver",
        check=workloads.workload_cuda_fits_driver,
        section="workloads",
        summary="the example's CUDA release is known and runs on `driver.version`",
        fix="set `cudaVersion`, raise `driver.version`, or use an older CUDA image; accept it"
        " with CUDA forward compatibility",
        acceptable=True,
    ),
    Rule(
        id="workload-cuda-fits-gpu",
        check=workloads.workload_cuda_fits_gpu,
        section="workloads",
        summary="the example's CUDA release still supports the GPU architecture",
        fix="use an image built for the last CUDA release shown",
        acceptable=True,
    ),
    Rule(
        id="workload-cuda-knows-gpu",
        check=workloads.workload_cuda_knows_gpu,
        section="workloads",
        summary="the example's CUDA release is new enough to know the GPU architecture",
        fix="use an image built for the CUDA release shown or newer",
        acceptable=True,
    ),
    Rule(
        id="workload-resource-advertised",
        check=workloads.workload_resource_advertised,
        section="workloads",
        summary="the example requests a resource some plugin config advertises",
        fix="request one of the resources listed",
    ),
    Rule(
        id="workload-fits-sharing",
        check=workloads.workload_fits_sharing,
        section="workloads",
        summary="no request for more than one shared GPU where `failRequestsGreaterThanOne`"
        " refuses it",
        fix="set `gpus: 1`, or `failRequestsGreaterThanOne: false`",
    ),
    Rule(
        id="workload-fits-node",
        check=workloads.workload_fits_node,
        section="workloads",
        summary="the example requests no more than one node offers",
        fix="request fewer, or set `gpus.perNode` to what the nodes have",
    ),
    Rule(
        id="dra-needs-resource-api",
        check=dra.dra_needs_resource_api,
        section="dra",
        summary="NVIDIA's DRA driver only on Kubernetes 1.34 or later (`resource.k8s.io/v1`;"
        " NVIDIA asks for 1.34.2)",
        fix='set `cluster.kubernetesVersion: "1.34"` or later, or `dra.enabled: false`',
    ),
    Rule(
        id="dra-driver-branch",
        check=dra.dra_driver_branch,
        section="dra",
        summary="the driver is 565 or later for DRA GPU allocation, 570.158.01 or later for"
        " ComputeDomains",
        fix="raise `driver.version`",
    ),
    Rule(
        id="dra-needs-cdi",
        check=dra.dra_needs_cdi,
        section="dra",
        summary="with NVIDIA's DRA driver, gpustack's toolkit turns CDI on (the driver injects"
        " devices only by CDI)",
        fix="set `toolkit.cdi.enabled: true`",
    ),
    Rule(
        id="dra-compute-domains-need-cliques",
        check=dra.dra_compute_domains_need_cliques,
        section="dra",
        summary="ComputeDomains come with GPU feature discovery, whose `nvidia.com/gpu.clique`"
        " labels group the nodes",
        fix="set `gpuFeatureDiscovery.enabled: true`, or accept it where the cluster runs GFD",
        acceptable=True,
    ),
    Rule(
        id="dra-device-plugin-same-gpus",
        check=dra.dra_device_plugin_same_gpus,
        section="dra",
        summary="the device plugin and DRA GPU allocation never hand out the same GPUs:"
        " `dra.nodeSelector` names DRA's node pool, or one of the two is off",
        fix="set `dra.nodeSelector`, or `devicePlugin.enabled: false`, or `dra.gpus: false`",
    ),
    Rule(
        id="dra-pools-overlap",
        check=dra_pools.dra_pools_overlap,
        section="dra",
        summary="no device plugin pool (`cluster.nodeSelector`, a node config) selects a label"
        " of `dra.nodeSelector`: the device plugin is kept off the DRA pool's labels, so such a"
        " pool would run no device plugin",
        fix="give the DRA pool a label of its own (`nvidia.com/gpu.allocation: dra`) and select"
        " that in `dra.nodeSelector`",
    ),
    Rule(
        id="dra-extended-resource-same-nodes",
        check=dra_pools.dra_extended_resource_same_nodes,
        section="dra",
        summary="`dra.extendedResourceName` only where the device plugin does not advertise"
        " `nvidia.com/gpu` on the DRA pool's nodes (the scheduler prefers the device plugin"
        " there)",
        fix="set `dra.nodeSelector`, or `devicePlugin.enabled: false`",
    ),
    Rule(
        id="dra-extended-resource-gate",
        check=dra.dra_extended_resource_gate,
        section="dra",
        summary="`dra.extendedResourceName` only where the DRAExtendedResource gate is on by"
        " default (Kubernetes 1.36, beta) or the feature is GA (1.37 and later, no gate)",
        fix="set `dra.extendedResourceName: false`, or accept it where the gate is turned on",
        acceptable=True,
    ),
    Rule(
        id="dra-examples-supported",
        check=dra.dra_examples_supported,
        section="workloads",
        summary="an example's `dra` claims only what the profile's DRA driver serves (GPU"
        " claims with `dra.gpus`, a ComputeDomain with `dra.computeDomains` and a"
        " `multinode-ddp` job)",
        fix="turn the DRA driver part on, or change the example's `dra`",
    ),
    Rule(
        id="gitops-source-set",
        check=gitops.gitops_source_set,
        section="gitops",
        summary="an enabled Argo CD or Flux has its source: `repoURL` (Flux OCI: `ociURL`)",
        fix="set `gitops.repoURL`, or `gitops.flux.ociURL` for `source: oci`",
    ),
)
