"""A data table, and reads as one: the registry's rows for ``cluster`` (its runtime, toolkit and
environment too), each the whole declaration of one rule."""

from __future__ import annotations

from gpustack.profile.rules import (
    cluster,
    env,
    gke,
    k0s,
    mirror,
    node_labels,
    readiness,
    selector_labels,
    taints,
)
from gpustack.profile.rules.rule import Rule

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
)
