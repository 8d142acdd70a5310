"""The rule registry: one row per rule, the only place a rule's ID, check and meaning are given.

Why one table: the ID a finding prints, the function that finds it, the section it belongs to,
what the reference says it checks and how to fix it, whether it also runs on each node config
and whether a profile may accept its finding are facts about one rule. Stated side by side (as
pre-commit's hook tables do), none can be added, renamed or documented without the others;
``docs/rules.md`` is rendered from this table and a test keeps it current. That is also why
the module runs past the project's ~400 lines: it is one table of ~45 rows, and splitting it
by section would scatter the one place a reviewer reads to see every rule.

Findings that no rule function makes get an ID here too, so every line ``gpustack validate``
prints names its source: ``load`` (the file is no profile document), ``schema`` (the JSON
Schema), ``profile-names-unique`` (across profiles) and ``accept`` (a broken accept comment).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules import (
    cluster,
    device_plugin,
    dra,
    driver,
    env,
    gitops,
    gke,
    gpus,
    k0s,
    mirror,
    node_configs,
    node_labels,
    profiles,
    readiness,
    selector_labels,
    sharing,
    taints,
    workloads,
)

Check = Callable[[Profile], Iterator[Finding]]

#: A rule ID: lowercase words joined by single hyphens.
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class Described:
    """A kind of finding as the reference documents it.

    ``acceptable``: a profile may accept the finding with a ``# gpustack: accept`` comment. Only
    rules about facts gpustack's tables may not know yet (a new Kubernetes release, a driver or
    CUDA combination NVIDIA supports by other means) are; rules that keep the synthesized
    manifests consistent (names, resources, MIG layouts) never are.
    """

    id: str
    section: str
    summary: str
    fix: str
    acceptable: bool = False


@dataclass(frozen=True, kw_only=True)
class Rule(Described):
    """A semantic rule: ``check`` finds its problems in one schema-valid profile.

    ``per_node_config``: a device plugin rule that must also hold for each node config's view
    (see :func:`~gpustack.profile.rules.node_configs.per_node_config`). Calling the rule runs it
    that way and stamps its ID on every finding.
    """

    check: Check
    per_node_config: bool = False
    _run: Check = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        run = node_configs.per_node_config(self.check) if self.per_node_config else self.check
        object.__setattr__(self, "_run", run)

    def __call__(self, profile: Profile) -> Iterator[Finding]:
        for finding in self._run(profile):
            yield replace(finding, rule=self.id)


LOAD = Described(
    id="load",
    section="file",
    summary="the file reads as one YAML mapping (UTF-8, no duplicate keys, no tabs, no merge keys"
    " or custom tags) and its `extends` chain resolves inside the profiles root",
    fix="fix the YAML at the line shown, or the `extends` path",
)
SCHEMA = Described(
    id="schema",
    section="any",
    summary="every key and value is one the profile schema allows (types, enums, patterns,"
    " required keys)",
    fix="follow the hint; the [field reference](reference/profile-fields.md) documents each field",
)
PROFILE_NAMES_UNIQUE = Described(
    id=profiles.PROFILE_NAMES_UNIQUE,
    section="metadata",
    summary="no two profiles checked together share `metadata.name` (each writes"
    " dist/clusters/<name>/)",
    fix="give every profile its own name",
)
ACCEPT = Described(
    id="accept",
    section="comments",
    summary="each `# gpustack: accept <rule> -- <reason>` comment names an acceptable rule, gives"
    " a reason, and matches a finding of that rule on its line",
    fix="fix the comment, or remove it once the finding is gone",
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="kubernetes-version-supported",
        check=cluster.kubernetes_version_supported,
        section="cluster",
        summary="`kubernetesVersion` is one gpustack supports",
        fix="use a supported version, or accept it for a release gpustack does not know yet",
        acceptable=True,
    ),
    Rule(
        id="runtime-matches-distribution",
        check=cluster.runtime_matches_distribution,
        section="cluster",
        summary="CRI-O only with distribution `generic` or `openshift` (k3s, RKE2, MicroK8s and"
        " k0s ship containerd; OpenShift runs CRI-O)",
        fix="set `runtime.name` to the runtime the distribution ships",
    ),
    Rule(
        id="default-images-outside-mirror",
        check=mirror.default_images_outside_mirror,
        section="cluster",
        summary="a profile that pulls images from a mirror (without `cluster.imageRegistry`)"
        " leaves no rendered image at its public default (NFD, GFD and the driver manager are"
        " on by default)",
        fix="set `cluster.imageRegistry` to the mirror, or each image named; accept it where the"
        " nodes reach the public registry",
        acceptable=True,
    ),
    Rule(
        id="gke-toolkit-in-driver-folder",
        check=gke.gke_toolkit_in_driver_folder,
        section="toolkit",
        summary="with GKE's driver (`hostDriverRoot: /home/kubernetes/bin/nvidia`) the toolkit"
        " installs to that writable folder, not `/usr/local/nvidia` (read-only on COS)",
        fix="set `toolkit.installDir: /home/kubernetes/bin/nvidia`",
    ),
    Rule(
        id="gke-runtime-config-from-file",
        check=gke.gke_runtime_config_from_file,
        section="cluster",
        summary="on GKE 1.33+ the toolkit reads containerd's config from the file, not its dump"
        " (NVIDIA's GKE known issue)",
        fix="set `cluster.runtime.configSource: [file]`",
    ),
    Rule(
        id="k0s-containerd-matches-release",
        check=k0s.k0s_containerd_matches_release,
        section="cluster",
        summary="on k0s `runtime.version` agrees with the release's own containerd (1.7 up to"
        " 1.35; 2.3, taking only version-3 config snippets, from 1.36)",
        fix="remove `cluster.runtime.version`, or set `kubernetesVersion` to the k0s release",
    ),
    Rule(
        id="k3s-keeps-only-its-nvidia-handler",
        check=cluster.k3s_keeps_only_its_nvidia_handler,
        section="cluster",
        summary="on k3s/RKE2 the toolkit keeps runtimeClass `nvidia`, installDir"
        " `/usr/local/nvidia` and no setAsDefault: k3s renders containerd's config itself and"
        " registers only the `nvidia` handler it finds there",
        fix="remove `toolkit.runtimeClass`, `installDir` and `setAsDefault`",
    ),
    Rule(
        id="k3s-cdi-needs-containerd-2",
        check=cluster.k3s_cdi_needs_containerd_2,
        section="cluster",
        summary="`cdi-*` device list strategies on k3s/RKE2 only with containerd 2.x, which has"
        " CDI on (k3s renders 1.7's config without it)",
        fix="use strategy `envvar`, or set `cluster.runtime.version` to 2.x",
    ),
    Rule(
        id="crio-restart-not-signal",
        check=cluster.crio_restart_not_signal,
        section="cluster",
        summary="CRI-O with the toolkit's CDI is not restarted by a signal (only systemd works)",
        fix="remove `restartMode`, or set `none`",
    ),
    Rule(
        id="cdi-strategy-needs-runtime-cdi",
        check=cluster.cdi_strategy_needs_runtime_cdi,
        section="cluster",
        summary="a `cdi-*` device list strategy only where containerd resolves CDI devices"
        " (toolkit CDI on, or containerd 2.x)",
        fix="set `toolkit.cdi.enabled: true`, `cluster.runtime.version`, or strategy `envvar`",
        acceptable=True,
    ),
    Rule(
        id="tolerations-valid",
        check=cluster.tolerations_valid,
        section="cluster",
        summary="each toleration is one the API server accepts: no value with `Exists`, a key"
        " with `Equal`, `tolerationSeconds` only with effect `NoExecute`",
        fix="remove the value (or use `Equal`), give a key, or set `effect: NoExecute`",
    ),
    Rule(
        id="env-names-unique",
        check=env.env_names_unique,
        section="env",
        summary="each `env` list names a variable once",
        fix="keep one of the two entries",
    ),
    Rule(
        id="image-digests-required",
        check=cluster.image_digests_required,
        section="cluster",
        summary="with `cluster.requireImageDigests`, every image gpustack renders is pinned by"
        " digest (driver, toolkit, device plugin and MPS daemon, example jobs)",
        fix="set each section's `digest`, and write example images as `<image>@sha256:...`",
    ),
    Rule(
        id="env-not-managed",
        check=env.env_not_managed,
        section="env",
        summary="`driver.env`, `toolkit.env` and `devicePlugin.env` do not replace a variable"
        " gpustack sets itself (`CONTAINERD_CONFIG`, `RUNTIME_SOCKET`, ...)",
        fix="change the profile setting the variable comes from, or remove the entry",
    ),
    Rule(
        id="node-selector-labels-deployed",
        check=node_labels.node_selector_labels_deployed,
        section="cluster",
        summary="every node selector label gpustack knows a labeller for is set by one it"
        " deploys (`nvidia.com/gpu.present`: the GPU node rule; GPU feature discovery's labels)",
        fix="enable the labeller the hint names, select another label, or accept it when the"
        " nodes are labelled otherwise",
        acceptable=True,
    ),
    Rule(
        id="node-selector-label-known",
        check=selector_labels.node_selector_label_known,
        section="cluster",
        summary="every `cluster.nodeSelector` key is a label some labeller writes: Node Feature"
        " Discovery, gpustack's GPU node rule, GPU feature discovery, the deploy and MIG labels,"
        " the kubelet's well-known labels, a managed cloud's node pool labels, or a label"
        " NVIDIA's platform guides tell users to set (a typo moves the stack onto no node)",
        fix="correct the key (the finding names the closest known label), or accept the finding"
        " for a label your team puts on its nodes",
        acceptable=True,
    ),
    Rule(
        id="node-selector-label-value",
        check=selector_labels.node_selector_label_value,
        section="cluster",
        summary="a `cluster.nodeSelector` label whose labeller writes only certain values (such"
        ' as `nvidia.com/gpu.present: "true"`) selects one of them',
        fix="use the value the finding names",
    ),
    Rule(
        id="tolerations-cover-node-taints",
        check=taints.tolerations_cover_node_taints,
        section="cluster",
        summary="`cluster.tolerations` tolerate every blocking taint in `cluster.nodeTaints`,"
        " so the stack's pods can land on the GPU nodes",
        fix="add a toleration for the taint to `cluster.tolerations` (or remove the taint from"
        " `cluster.nodeTaints` if the nodes do not carry it)",
    ),
    Rule(
        id="node-selector-not-self-labelled",
        check=node_labels.node_selector_not_self_labelled,
        section="cluster",
        summary="no node selector label is one only pods placed by that selector write (GPU"
        " feature discovery's): those pods would never reach a node without it (the placement"
        " graph)",
        fix='select `nvidia.com/gpu.present: "true"` or a label the cloud or node pool sets, or'
        " accept it when the nodes are labelled otherwise",
        acceptable=True,
    ),
    Rule(
        id="readiness-files-written",
        check=readiness.readiness_files_written,
        section="any",
        summary="every readiness file a pod waits for (`driver-ready`, `toolkit-configured`,"
        " `toolkit-ready` under `/run/nvidia/validations`) is written by a pod this profile"
        " places on the same nodes; the MOFED driver's file is a stated external prerequisite",
        fix="turn on the component the finding names (the driver or the toolkit writes"
        " `driver-ready`), or turn off the one that waits",
    ),
    Rule(
        id="gke-platform-stated",
        check=cluster.gke_platform_stated,
        section="cluster",
        summary="a profile that names what only GKE has (a `cloud.google.com/gke-*` node"
        " label or taint, the toolkit or host driver under `/home/kubernetes/bin/nvidia`) is not"
        " `cluster.platform: generic`: GKE admits the stack's critical pods only with the"
        " ResourceQuota `gke` adds (unset, the platform follows those signals)",
        fix="set `cluster.platform: gke`, or remove `cluster.platform`",
    ),
    Rule(
        id="precompiled-needs-kernel",
        check=driver.precompiled_needs_kernel,
        section="driver",
        summary="precompiled driver images name the kernel they are built for",
        fix="set `driver.kernelVersion`",
    ),
    Rule(
        id="host-driver-root-needs-host-driver",
        check=driver.host_driver_root_needs_host_driver,
        section="driver",
        summary="`hostDriverRoot` only for a preinstalled driver (`enabled: false`)",
        fix="remove `driver.hostDriverRoot`, or set `driver.enabled: false`",
    ),
    Rule(
        id="driver-config-maps-known-os",
        check=driver.driver_config_maps_known_os,
        section="driver",
        summary="repository and certificate ConfigMaps only for a driver container gpustack"
        " knows where to mount them in",
        fix="remove the ConfigMap, or use a driver image for a known OS",
    ),
    Rule(
        id="rdma-needs-driver-container",
        check=driver.rdma_needs_driver_container,
        section="driver",
        summary="GPUDirect RDMA only with gpustack's driver pod (it loads nvidia-peermem)",
        fix="set `driver.enabled: true`, or load nvidia-peermem on the host",
    ),
    Rule(
        id="rhcos-driver-needs-openshift",
        check=driver.rhcos_driver_needs_openshift,
        section="driver",
        summary="a driver image for Red Hat CoreOS (`osTag: rhcos*`) only with distribution"
        " `openshift` (RHCOS's /usr is read-only; only OpenShift's layout has the writable hook"
        " folder)",
        fix="set `cluster.runtime.distribution: openshift`, or the nodes' real OS tag",
    ),
    Rule(
        id="openshift-driver-needs-driver-toolkit",
        check=driver.openshift_driver_needs_driver_toolkit,
        section="driver",
        summary="on OpenShift the driver container names the Driver Toolkit image, RHCOS build and"
        " OpenShift release its build side-car needs",
        fix="set `driver.driverToolkit.image`, `rhcosVersion` and `openshiftVersion`",
    ),
    Rule(
        id="driver-toolkit-builds-distinct",
        check=driver.driver_toolkit_builds_distinct,
        section="driver",
        summary="each RHCOS build in `driver.driverToolkit` (`rhcosVersion`, then `builds`) is"
        " named once, and `builds` only with a first `rhcosVersion` (one driver DaemonSet per"
        " build)",
        fix="name each build once; set `rhcosVersion` and `image` for the first build",
    ),
    Rule(
        id="host-mofed-needs-rdma",
        check=driver.host_mofed_needs_rdma,
        section="driver",
        summary="`rdma.useHostMofed` only with RDMA enabled",
        fix="set `driver.rdma.enabled: true`, or remove `useHostMofed`",
    ),
    Rule(
        id="product-matches-architecture",
        check=gpus.product_matches_architecture,
        section="gpus",
        summary="`gpus.architecture` agrees with the product's",
        fix="remove `gpus.architecture`, or set the product's",
    ),
    Rule(
        id="driver-supports-gpu",
        check=driver.driver_supports_gpu,
        section="driver",
        summary="the driver is new enough for the GPU product or architecture",
        fix="raise `driver.version` to the minimum shown",
        acceptable=True,
    ),
    Rule(
        id="driver-still-supports-gpu",
        check=driver.driver_still_supports_gpu,
        section="driver",
        summary="the driver branch still supports the architecture (legacy GPUs stay on their"
        " last branch)",
        fix="use a release of the last branch shown",
        acceptable=True,
    ),
    Rule(
        id="kernel-modules-fit-gpu",
        check=driver.kernel_modules_fit_gpu,
        section="driver",
        summary="open kernel modules where the GPU needs them, proprietary where it lacks a GSP",
        fix="set `driver.kernelModuleType` as the hint says, or `auto`",
    ),
    Rule(
        id="open-modules-need-r515",
        check=driver.open_modules_need_r515,
        section="driver",
        summary="open kernel modules only with a driver that ships them",
        fix="raise `driver.version`, or use proprietary modules",
    ),
    Rule(
        id="simulated-needs-gpustack",
        check=device_plugin.simulated_needs_gpustack,
        section="devicePlugin",
        summary="the simulated backend only with gpustack's device plugin",
        fix="set `implementation: gpustack`, or `backend: nvml`",
    ),
    Rule(
        id="nvidia-plugin-resource-name",
        check=device_plugin.nvidia_plugin_resource_name,
        section="devicePlugin",
        summary="NVIDIA's plugin only with `resourceName: nvidia.com/gpu`",
        fix="remove `resourceName`, or use `implementation: gpustack`",
    ),
    Rule(
        id="nvidia-plugin-ignores-rename",
        check=sharing.nvidia_plugin_ignores_rename,
        section="devicePlugin.sharing",
        summary="no sharing `rename` with NVIDIA's plugin, which drops it",
        fix="remove `rename`, or use `implementation: gpustack`",
        per_node_config=True,
    ),
    Rule(
        id="resource-names-well-formed",
        check=device_plugin.resource_names_well_formed,
        section="devicePlugin",
        summary="every resource name is `nvidia.com/<name>`, at most 63 characters",
        fix="use lowercase letters, digits, `-` and `.` after `nvidia.com/`",
        per_node_config=True,
    ),
    Rule(
        id="resource-name-near-miss",
        check=device_plugin.resource_name_near_miss,
        section="devicePlugin",
        summary="`resourceName` is no slip of `nvidia.com/gpu` or `nvidia.com/gpu.shared` "
        "(e.g. `nvidia.com/gpus`), which no workload would request",
        fix="use the well-known name it misspells, or a name of your own that differs by more",
        per_node_config=True,
    ),
    Rule(
        id="sharing-needs-two-replicas",
        check=sharing.sharing_needs_two_replicas,
        section="devicePlugin.sharing",
        summary="time-slicing and MPS replicas are 2 or more",
        fix="set `replicas` to 2 or more, or remove the sharing",
        per_node_config=True,
    ),
    Rule(
        id="time-slicing-resources-unique",
        check=sharing.time_slicing_resources_unique,
        section="devicePlugin.sharing",
        summary="each resource is time-sliced once, and no rename is advertised twice",
        fix="keep one entry per resource, and a rename of its own",
        per_node_config=True,
    ),
    Rule(
        id="time-slicing-resources-exist",
        check=sharing.time_slicing_resources_exist,
        section="devicePlugin.sharing",
        summary="time-slicing shares only resources the plugin has",
        fix="share one of the resources listed",
        per_node_config=True,
    ),
    Rule(
        id="mps-needs-nvidia-plugin",
        check=sharing.mps_needs_nvidia_plugin,
        section="devicePlugin.sharing",
        summary="MPS only with NVIDIA's plugin",
        fix="set `implementation: nvidia`, or share with `timeSlicing`",
        per_node_config=True,
    ),
    Rule(
        id="mps-excludes-time-slicing",
        check=sharing.mps_excludes_time_slicing,
        section="devicePlugin.sharing",
        summary="MPS and time-slicing are not both given",
        fix="keep either `sharing.mps` or `sharing.timeSlicing`",
        per_node_config=True,
    ),
    Rule(
        id="mps-not-with-mig-devices",
        check=sharing.mps_not_with_mig_devices,
        section="devicePlugin.sharing",
        summary="MPS shares whole GPUs, never MIG devices",
        fix="set `migStrategy: none`, or remove `sharing.mps`",
        per_node_config=True,
    ),
    Rule(
        id="mps-shares-whole-gpus",
        check=sharing.mps_shares_whole_gpus,
        section="devicePlugin.sharing",
        summary="MPS shares the plugin's whole-GPU resource, once",
        fix="set `name` to the plugin's `resourceName`; one entry",
        per_node_config=True,
    ),
    Rule(
        id="mig-needs-capable-gpu",
        check=gpus.mig_needs_capable_gpu,
        section="gpus",
        summary="MIG only on a MIG-capable product, and a MIG layout only with `gpus.product`",
        fix="remove the MIG settings, or set a MIG-capable product",
        per_node_config=True,
    ),
    Rule(
        id="mig-layout-fits",
        check=gpus.mig_layout_fits,
        section="gpus",
        summary="the MIG layout uses the product's MIG profiles and fits its slices",
        fix="use the product's profiles; fewer or smaller instances",
        per_node_config=True,
    ),
    Rule(
        id="mig-strategy-matches-layout",
        check=gpus.mig_strategy_matches_layout,
        section="gpus",
        summary="a MIG layout with a MIG strategy; `single` with one MIG profile only",
        fix="set `migStrategy: mixed` (or `single` for a uniform layout)",
        per_node_config=True,
    ),
    Rule(
        id="node-configs-need-plugin",
        check=node_configs.node_configs_need_plugin,
        section="devicePlugin.nodeConfigs",
        summary="node configs only with gpustack's device plugin DaemonSets enabled",
        fix="remove `nodeConfigs`, or set `devicePlugin.enabled: true`",
    ),
    Rule(
        id="node-config-names-unique",
        check=node_configs.node_config_names_unique,
        section="devicePlugin.nodeConfigs",
        summary="node config names are unique and take no other DaemonSet's name",
        fix="give each node config its own name",
    ),
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
        id="dra-extended-resource-gate",
        check=dra.dra_extended_resource_gate,
        section="dra",
        summary="`dra.extendedResourceName` only where the DRAExtendedResource gate is on by"
        " default (Kubernetes 1.36 or later)",
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

#: Every kind of finding, in the order the reference lists them.
ALL: tuple[Described, ...] = (LOAD, SCHEMA, *RULES, PROFILE_NAMES_UNIQUE, ACCEPT)

_BY_ID: dict[str, Described] = {d.id: d for d in ALL}


def get(rule_id: str) -> Described | None:
    """The registered rule (or built-in finding kind) with this ID, if any."""
    return _BY_ID.get(rule_id)


def rule_findings(profile: Profile, rules: Iterable[Rule] = RULES) -> list[Finding]:
    """Every rule's findings for one (schema-valid) profile, in rule order, each with its ID."""
    return [finding for rule in rules for finding in rule(profile)]
