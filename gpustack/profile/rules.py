"""Semantic rules: what a schema cannot say about a profile.

Each rule is a small function ``Profile -> Iterator[Finding]`` with its own message, run only on
profiles that passed the schema. Every message says what is wrong and how to fix it. Facts
(drivers, architectures, MIG layouts) come from :mod:`gpustack.profile.catalog`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from gpustack.profile import catalog
from gpustack.profile.catalog import parse_driver
from gpustack.profile.finding import Finding
from gpustack.profile.loader import Document, JsonPath
from gpustack.profile.model import (
    DRIVER_OS_PATHS,
    SUPPORTED_KUBERNETES,
    Example,
    Mps,
    NodeConfig,
    Profile,
    TimeSlicing,
    TimeSlicingResource,
    node_config_profile,
)

Rule = Callable[[Profile], Iterator[Finding]]

_RESOURCE_NAME = re.compile(
    r"^nvidia\.com/([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$"
)
_DP = "devicePlugin"
_TS = (_DP, "sharing", "timeSlicing")
_MPS = (_DP, "sharing", "mps")
_NC = (_DP, "nodeConfigs")


#: NVIDIA's plugin and gpustack's cap the whole name (prefix included) at 63 characters.
MAX_RESOURCE_NAME = 63


def _well_formed(name: str) -> bool:
    return _RESOURCE_NAME.match(name) is not None and len(name) <= MAX_RESOURCE_NAME


def _example_path(i: int, *rest: str) -> tuple[str | int, ...]:
    return ("workloads", "examples", i, *rest)


def architecture_of(profile: Profile) -> catalog.Architecture | None:
    """The GPUs' architecture: from the product when given, else ``gpus.architecture``."""
    gpus = profile.gpus
    name = catalog.PRODUCTS[gpus.product].architecture if gpus.product else gpus.architecture
    return catalog.ARCHITECTURES.get(name) if name else None


def _sharing(profile: Profile) -> TimeSlicing | None:
    """The sharing the plugin applies: MPS, else time-slicing (NVIDIA's plugin picks MPS when
    both are given; ``mps_excludes_time_slicing`` reports that)."""
    dp = profile.device_plugin
    return dp.mps if dp.mps is not None else dp.time_slicing


def _sharing_kind(sharing: TimeSlicing) -> str:
    return "MPS" if isinstance(sharing, Mps) else "time-slicing"


def _sharing_sections(profile: Profile) -> Iterator[tuple[JsonPath, TimeSlicing]]:
    """Each sharing section the profile gives, with its path: timeSlicing, then mps."""
    dp = profile.device_plugin
    if dp.time_slicing is not None:
        yield _TS, dp.time_slicing
    if dp.mps is not None:
        yield _MPS, dp.mps


def _shared_name(profile: Profile, name: str) -> str:
    ts = _sharing(profile)
    if ts is None:
        return name
    for res in ts.resources:
        if res.name == name:
            if res.rename:
                return res.rename
            return f"{name}.shared" if ts.rename_by_default else name
    return name


def _unshared_resources(profile: Profile) -> list[str]:
    dp = profile.device_plugin
    names = [dp.resource_name]
    if dp.mig_strategy == "mixed":
        names += [f"nvidia.com/mig-{name}" for name, _ in profile.gpus.mig]
    return names


def advertised_resources(profile: Profile) -> tuple[str, ...]:
    """Resource names the device plugin advertises, after MIG and sharing (time-slicing or MPS)
    renames."""
    return tuple(_shared_name(profile, name) for name in _unshared_resources(profile))


def workload_resource(profile: Profile, example: Example) -> str:
    """The resource an example job requests: its own ``resourceName``, else the plugin's
    (time-slicing or MPS rename applied)."""
    return example.resource_name or _shared_name(profile, profile.device_plugin.resource_name)


def workload_cuda(example: Example) -> str | None:
    """CUDA release of an example: ``cudaVersion`` wins over what the image tag says."""
    return example.cuda_version or catalog.cuda_from_image(example.image)


def plugin_configs(profile: Profile) -> list[tuple[str | None, Profile]]:
    """The top-level plugin config (name ``None``) and each node config, as the profile its
    nodes see (see :func:`gpustack.profile.model.node_config_profile`)."""
    configs: list[tuple[str | None, Profile]] = [(None, profile)]
    for nc in profile.device_plugin.node_configs:
        configs.append((nc.name, node_config_profile(profile, nc)))
    return configs


def _node_config_path(nc: NodeConfig, i: int, path: JsonPath) -> JsonPath | None:
    """Where a finding about a node config's view belongs: the node config's own value when it
    overrides the one at ``path``, else ``None`` (the value is inherited from the top level)."""
    at = (*_NC, i)
    head, rest = tuple(path[:2]), tuple(path[2:])
    if head == (_DP, "sharing") and nc.sharing is not None:
        return (*at, "sharing", *rest)
    if head == (_DP, "migStrategy") and nc.mig_strategy is not None:
        return (*at, "migStrategy")
    if head == ("gpus", "mig") and nc.gpus.mig is not None:
        return (*at, "gpus", "mig", *rest)
    if head == ("gpus", "perNode") and nc.gpus.per_node is not None:
        return (*at, "gpus", "perNode")
    return None


def per_node_config(rule: Rule) -> Rule:
    """Run a device plugin rule on the top level and on each node config's view of the profile.

    A finding at a value the node config overrides is reported at that value
    (``$.devicePlugin.nodeConfigs[0].sharing...``). One at an inherited value is reported only
    if the top level does not already report it, at the node config's name, saying which.
    """

    @functools.wraps(rule)
    def checked(p: Profile) -> Iterator[Finding]:
        top = list(rule(p))
        yield from top
        reported = {(f.path, f.message) for f in top}
        for i, nc in enumerate(p.device_plugin.node_configs):
            for finding in rule(node_config_profile(p, nc)):
                path = _node_config_path(nc, i, finding.path)
                if path is not None:
                    yield replace(finding, path=path)
                elif (finding.path, finding.message) not in reported:
                    yield Finding(
                        (*_NC, i, "name"),
                        f"on nodes of node config {nc.name}: {finding.message}",
                        finding.hint,
                    )

    return checked


# --- cluster ---------------------------------------------------------------------------------


def kubernetes_version_supported(p: Profile) -> Iterator[Finding]:
    version = p.cluster.kubernetes_version
    if version not in SUPPORTED_KUBERNETES:
        yield Finding(
            ("cluster", "kubernetesVersion"),
            f"Kubernetes {version} is not supported",
            f"use {SUPPORTED_KUBERNETES[0]} to {SUPPORTED_KUBERNETES[-1]}",
        )


def runtime_matches_distribution(p: Profile) -> Iterator[Finding]:
    runtime = p.cluster.runtime
    if runtime.name == "crio" and runtime.distribution != "generic":
        yield Finding(
            ("cluster", "runtime", "distribution"),
            f"{runtime.distribution} ships containerd, not CRI-O",
            "set runtime.name: containerd, or distribution: generic",
        )


def crio_restart_not_signal(p: Profile) -> Iterator[Finding]:
    # With CDI the installer edits CRI-O's config and must restart CRI-O, which it can only do
    # through systemd; in hook mode (CDI off) it restarts nothing, so a signal is harmless there.
    runtime = p.cluster.runtime
    if (
        runtime.name == "crio"
        and runtime.restart_mode == "signal"
        and p.toolkit.enabled
        and p.toolkit.cdi.enabled
    ):
        yield Finding(
            ("cluster", "runtime", "restartMode"),
            "the container toolkit cannot restart CRI-O with a signal; every toolkit pod"
            " would fail",
            "remove restartMode (CRI-O defaults to systemd), or set none to restart CRI-O yourself",
        )


def cdi_strategy_needs_runtime_cdi(p: Profile) -> Iterator[Finding]:
    # CDI device names from the plugin resolve only where the runtime has CDI on. The toolkit
    # turns it on in containerd's config when toolkit.cdi is enabled; otherwise containerd 1.x
    # leaves it off (2.0 enables it by default, CRI-O always has it).
    dp, runtime = p.device_plugin, p.cluster.runtime
    cdi = [s for s in dp.device_list_strategy if s.startswith("cdi-")]
    if not (dp.enabled and cdi and p.toolkit.enabled and not p.toolkit.cdi.enabled):
        return
    if runtime.name != "containerd":
        return
    major = int(runtime.version.split(".")[0]) if runtime.version else None
    if major is not None and major >= 2:
        return
    which = f"containerd {runtime.version}" if runtime.version else "containerd before 2.0"
    yield Finding(
        ("toolkit", "cdi", "enabled"),
        f"deviceListStrategy {', '.join(cdi)} hands pods CDI devices, but with toolkit.cdi off"
        f" {which} does not resolve them",
        "set toolkit.cdi.enabled: true, or use deviceListStrategy envvar"
        + ("" if runtime.version else " (or set cluster.runtime.version if it is 2.x)"),
    )


# --- driver and GPUs -------------------------------------------------------------------------


def precompiled_needs_kernel(p: Profile) -> Iterator[Finding]:
    if p.driver.enabled and p.driver.use_precompiled and not p.driver.kernel_version:
        yield Finding(
            ("driver", "usePrecompiled"),
            "precompiled driver images are tagged by kernel, but driver.kernelVersion is unset",
            "set driver.kernelVersion, e.g. 6.8.0-60-generic",
        )


def driver_config_maps_known_os(p: Profile) -> Iterator[Finding]:
    # Repository and certificate ConfigMaps go where the driver image's OS reads them; for an
    # OS gpustack does not know that place, and they only matter to gpustack's driver pod.
    d = p.driver
    for key, value, what in (
        ("repoConfigMap", d.repo_config_map, "package repository files"),
        ("certConfigMap", d.cert_config_map, "CA certificates"),
    ):
        if value is None:
            continue
        if not d.enabled:
            yield Finding(
                ("driver", key),
                "the driver is preinstalled on the host (driver.enabled: false), so no driver"
                " container would use this ConfigMap",
                f"remove driver.{key}",
            )
        elif d.os_family not in DRIVER_OS_PATHS:
            yield Finding(
                ("driver", key),
                f"gpustack does not know where a {d.os_tag} driver image reads {what}",
                f"use a driver image for {', '.join(sorted(DRIVER_OS_PATHS))}, or build one with"
                " your repositories and certificates inside",
            )


def rdma_needs_driver_container(p: Profile) -> Iterator[Finding]:
    # nvidia-peermem is loaded by a sidecar of gpustack's driver pod; with a host-installed
    # driver there is no driver pod, so the setting would silently do nothing.
    if p.driver.rdma.enabled and not p.driver.enabled:
        yield Finding(
            ("driver", "rdma", "enabled"),
            "GPUDirect RDMA is enabled, but the driver is installed on the host"
            " (driver.enabled: false), so gpustack cannot load nvidia-peermem",
            "load nvidia-peermem on the host and remove driver.rdma, or let gpustack install"
            " the driver: driver.enabled: true",
        )


def host_mofed_needs_rdma(p: Profile) -> Iterator[Finding]:
    rdma = p.driver.rdma
    if rdma.use_host_mofed and not rdma.enabled:
        yield Finding(
            ("driver", "rdma", "useHostMofed"),
            "driver.rdma.useHostMofed is set, but GPUDirect RDMA is not enabled, so it has"
            " no effect",
            "set driver.rdma.enabled: true, or remove useHostMofed",
        )


def product_matches_architecture(p: Profile) -> Iterator[Finding]:
    gpus = p.gpus
    if gpus.product and gpus.architecture:
        actual = catalog.PRODUCTS[gpus.product].architecture
        if actual != gpus.architecture:
            yield Finding(
                ("gpus", "architecture"),
                f"the architecture of {gpus.product} is {actual}, not {gpus.architecture}",
                f"remove gpus.architecture or set it to {actual}",
            )


def _gpu_minimum(p: Profile, attr: Literal["min_driver", "first_cuda"]) -> tuple[str, str] | None:
    """A minimum (``min_driver`` or ``first_cuda``) of the profile's GPUs, with how to name who
    needs it: the product where it overrides its architecture, else the architecture."""
    arch = architecture_of(p)
    if arch is None:
        return None
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    if product is not None and getattr(product, attr) is not None:
        return getattr(product, attr), f"{product.name}, which needs"
    minimum = getattr(arch, attr)
    return (minimum, f"{arch.name.capitalize()} GPUs, which need") if minimum else None


def driver_supports_gpu(p: Profile) -> Iterator[Finding]:
    found = _gpu_minimum(p, "min_driver")
    if found is None:
        return
    minimum, what = found
    if parse_driver(p.driver.version) < parse_driver(minimum):
        yield Finding(
            ("driver", "version"),
            f"driver {p.driver.version} is too old for {what} {minimum} or newer",
            f"set driver.version to {minimum} or newer",
        )


def driver_still_supports_gpu(p: Profile) -> Iterator[Finding]:
    # Legacy architectures stay on their last branch: a newer driver does not see the GPU.
    arch = architecture_of(p)
    if arch is None or arch.last_driver_branch is None:
        return
    if parse_driver(p.driver.version)[0] > arch.last_driver_branch:
        branch = arch.last_driver_branch
        yield Finding(
            ("driver", "version"),
            f"driver {p.driver.version} no longer supports {arch.name.capitalize()} GPUs;"
            f" R{branch} is the last driver branch that does",
            f"set driver.version to an R{branch} release, {branch}.x",
        )


def kernel_modules_fit_gpu(p: Profile) -> Iterator[Finding]:
    arch = architecture_of(p)
    if arch is None:
        return
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    module = p.driver.kernel_module_type
    if module == "proprietary" and (arch.open_required or (product and product.open_required)):
        if product and product.open_required:
            what = f"{product.name} needs"
        else:
            what = f"{arch.name.capitalize()} GPUs need"
        yield Finding(
            ("driver", "kernelModuleType"),
            f"{what} the open GPU kernel modules; the proprietary ones do not support it",
            "set driver.kernelModuleType: open or auto",
        )
    if module == "open" and not arch.open_modules:
        yield Finding(
            ("driver", "kernelModuleType"),
            f"the open GPU kernel modules do not support {arch.name.capitalize()} GPUs, which "
            "lack a GSP",
            "set driver.kernelModuleType: proprietary or auto",
        )


def open_modules_need_r515(p: Profile) -> Iterator[Finding]:
    first = catalog.FIRST_OPEN_MODULE_DRIVER
    if p.driver.kernel_module_type == "open" and parse_driver(p.driver.version) < parse_driver(
        first
    ):
        yield Finding(
            ("driver", "kernelModuleType"),
            f"driver {p.driver.version} has no open GPU kernel modules; they ship from {first}",
            f"set driver.version to {first} or newer, or kernelModuleType: proprietary",
        )


# --- workloads -------------------------------------------------------------------------------


def workload_cuda_fits_driver(p: Profile) -> Iterator[Finding]:
    for i, ex in enumerate(p.workloads.examples):
        at = _example_path(i, "cudaVersion" if ex.cuda_version else "image")
        cuda = workload_cuda(ex)
        if cuda is None:
            yield Finding(
                at,
                f"cannot tell which CUDA release image {ex.image!r} is built with",
                'set cudaVersion, e.g. cudaVersion: "12.4"',
            )
            continue
        floor = catalog.cuda_family_floor(cuda)
        if floor is None:
            families = ", ".join(f"{m}.x" for m in catalog.CUDA_FAMILY_FLOOR)
            yield Finding(
                at,
                f"CUDA {cuda} is unknown to gpustack, which knows {families}",
                "use an image built for a known CUDA release or set cudaVersion",
            )
            continue
        if parse_driver(p.driver.version) < parse_driver(floor):
            ga = catalog.CUDA_GA_DRIVER.get(cuda)
            full = f", ideally {ga} for full CUDA {cuda} support" if ga and ga != floor else ""
            yield Finding(
                at,
                f"CUDA {cuda} needs driver {floor} or newer, but driver.version is "
                f"{p.driver.version}",
                f"raise driver.version to at least {floor}{full}, or use an image built for an "
                "older CUDA",
            )


def workload_cuda_fits_gpu(p: Profile) -> Iterator[Finding]:
    arch = architecture_of(p)
    if arch is None or arch.max_cuda_major is None:
        return
    for i, ex in enumerate(p.workloads.examples):
        cuda = workload_cuda(ex)
        if cuda is not None and int(cuda.split(".")[0]) > arch.max_cuda_major:
            at = _example_path(i, "cudaVersion" if ex.cuda_version else "image")
            yield Finding(
                at,
                f"CUDA {cuda} no longer supports {arch.name.capitalize()} GPUs; CUDA "
                f"{arch.max_cuda_major}.x is the last that does",
                f"use an image built for CUDA {arch.max_cuda_major}.x",
            )


def _cuda_key(cuda: str) -> tuple[int, ...]:
    return tuple(int(part) for part in cuda.split("."))


def workload_cuda_knows_gpu(p: Profile) -> Iterator[Finding]:
    # A build for an older CUDA has no kernels for a newer architecture: PyTorch reports
    # "no kernel image is available" (e.g. cu126 wheels on Blackwell, which needs cu128+).
    found = _gpu_minimum(p, "first_cuda")
    if found is None:
        return
    first, gpu = found
    for i, ex in enumerate(p.workloads.examples):
        cuda = workload_cuda(ex)
        if cuda is not None and _cuda_key(cuda) < _cuda_key(first):
            yield Finding(
                _example_path(i, "cudaVersion" if ex.cuda_version else "image"),
                f"CUDA {cuda} cannot run on {gpu} CUDA {first} or newer",
                f"use an image built for CUDA {first} or newer",
            )


def workload_names_unique(p: Profile) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, ex in enumerate(p.workloads.examples):
        if ex.name in seen:
            yield Finding(
                _example_path(i, "name"),
                f"example name {ex.name!r} is used twice",
                "give each example its own name",
            )
        seen.add(ex.name)


def _advertised_anywhere(p: Profile) -> list[str]:
    """Resources advertised by the top-level config or any node config, in first-seen order."""
    names: dict[str, None] = {}
    for _, view in plugin_configs(p):
        names.update(dict.fromkeys(advertised_resources(view)))
    return list(names)


def _mig_unknown(p: Profile) -> bool:
    """Some config is mixed without a layout: its MIG resources are unknown, not wrong."""
    return any(
        v.device_plugin.mig_strategy == "mixed" and not v.gpus.mig for _, v in plugin_configs(p)
    )


def workload_resource_advertised(p: Profile) -> Iterator[Finding]:
    # With node configs, a resource advertised on any node pool is fine: the scheduler puts the
    # job where it is offered.
    dp = p.device_plugin
    if not dp.enabled:
        return  # another plugin advertises resources gpustack does not know about
    advertised = _advertised_anywhere(p)
    mixed_layout = dp.mig_strategy == "mixed" and bool(p.gpus.mig)
    for i, ex in enumerate(p.workloads.examples):
        if ex.resource_name is None and mixed_layout:
            yield Finding(
                _example_path(i),
                "with migStrategy mixed, an example must say which MIG resource it requests",
                f"set resourceName to one of: {', '.join(advertised_resources(p)[1:])}",
            )
            continue
        wanted = workload_resource(p, ex)
        if not _well_formed(wanted):
            continue  # resource_names_well_formed reports it
        if _mig_unknown(p) and wanted.startswith("nvidia.com/mig-"):
            continue  # no layout given: MIG resources are unknown, not wrong
        if wanted not in advertised:
            at = _example_path(i, "resourceName") if ex.resource_name else _example_path(i)
            yield Finding(
                at,
                f"the device plugin does not advertise {wanted}",
                f"request one of: {', '.join(advertised)}",
            )


def _shared(p: Profile, wanted: str) -> TimeSlicingResource | None:
    """The sharing (time-slicing or MPS) entry whose shared resource is ``wanted``, if any."""
    ts = _sharing(p)
    for res in ts.resources if ts else ():
        if _shared_name(p, res.name) == wanted:
            return res
    return None


def _on_nodes(name: str | None) -> str:
    return "" if name is None else f" on nodes of node config {name}"


def workload_fits_sharing(p: Profile) -> Iterator[Finding]:
    # The plugin fails Allocate for such a pod (UnexpectedAdmissionError): replicas of one GPU
    # give no more GPU, and failRequestsGreaterThanOne says to refuse them. The scheduler does
    # not know that, so one node config that refuses the job is enough to break it.
    if not p.device_plugin.enabled:
        return
    for i, ex in enumerate(p.workloads.examples):
        wanted = workload_resource(p, ex)
        if ex.gpus <= 1:
            continue
        for name, view in plugin_configs(p):
            ts = _sharing(view)
            if ts is None or not ts.fail_requests_greater_than_one:
                continue
            if _shared(view, wanted) is not None:
                yield Finding(
                    _example_path(i, "gpus"),
                    f"{_sharing_kind(ts)} with failRequestsGreaterThanOne{_on_nodes(name)} refuses"
                    f" pods that request more than one {wanted}",
                    "set gpus: 1, or failRequestsGreaterThanOne: false",
                )
                break


def _node_capacity(p: Profile, wanted: str) -> tuple[int, str] | None:
    """How many ``wanted`` one node of this config offers, and what they are; ``None`` when it
    offers none."""
    dp = p.device_plugin
    shared = _shared(p, wanted)
    if shared is not None:
        kind = "MPS" if dp.mps is not None else "time-sliced"
        return p.gpus.per_node * shared.replicas, f"{kind} replicas"
    if wanted == dp.resource_name and wanted in advertised_resources(p):
        return p.gpus.per_node, "GPU" if p.gpus.per_node == 1 else "GPUs"
    return None


def workload_fits_node(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if not dp.enabled:
        return  # another plugin: capacity unknown here
    configs = plugin_configs(p)
    whole = [(n, v) for n, v in configs if v.device_plugin.mig_strategy == "none"]
    mig = [v for _, v in configs if v.device_plugin.mig_strategy != "none"]
    for i, ex in enumerate(p.workloads.examples):
        wanted = workload_resource(p, ex)
        if any(
            wanted in advertised_resources(v) or wanted.startswith("nvidia.com/mig-") for v in mig
        ):
            continue  # MIG devices per GPU: capacity unknown here
        offers = [(c, n, v) for n, v in whole if (c := _node_capacity(v, wanted)) is not None]
        if not offers:
            continue  # not advertised: workload_resource_advertised reports it
        (capacity, what), name, view = max(offers, key=lambda o: o[0][0])
        if ex.gpus > capacity:
            per_node = "gpus.perNode" if name is None else f"perNode of node config {name}"
            yield Finding(
                _example_path(i, "gpus"),
                f"the job requests {ex.gpus} {wanted}, but a node offers {capacity} {what} "
                f"({per_node}: {view.gpus.per_node}), so it never schedules",
                f"request at most {capacity}, or set gpus.perNode to what the nodes have",
            )


# --- device plugin ---------------------------------------------------------------------------


def simulated_needs_gpustack(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.backend == "simulated" and dp.implementation != "gpustack":
        yield Finding(
            (_DP, "backend"),
            "the simulated backend exists only in gpustack's device plugin",
            "set devicePlugin.implementation: gpustack, or backend: nvml",
        )


def nvidia_plugin_resource_name(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.implementation == "nvidia" and dp.resource_name != "nvidia.com/gpu":
        yield Finding(
            (_DP, "resourceName"),
            "NVIDIA's device plugin always advertises nvidia.com/gpu",
            "remove resourceName, or use implementation: gpustack",
        )


def nvidia_plugin_time_slicing_rename(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin documents `rename` but drops it when it loads its config, so pods would
    # request a name nothing advertises (NVIDIA/k8s-device-plugin#1786); gpustack's honours it.
    if p.device_plugin.implementation != "nvidia":
        return
    for at, sharing in _sharing_sections(p):
        for i, res in enumerate(sharing.resources):
            if not res.rename:
                continue
            kept = f"{res.name}.shared" if sharing.rename_by_default else res.name
            yield Finding(
                (*at, "resources", i, "rename"),
                f"NVIDIA's device plugin ignores rename and would advertise {kept}, "
                f"not {res.rename}",
                "remove rename, or set devicePlugin.implementation: gpustack",
            )


def resource_names_well_formed(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    named: list[tuple[tuple[str | int, ...], str]] = [((_DP, "resourceName"), dp.resource_name)]
    for at, sharing in _sharing_sections(p):
        for i, res in enumerate(sharing.resources):
            named.append(((*at, "resources", i, "name"), res.name))
            if res.rename:
                named.append(((*at, "resources", i, "rename"), res.rename))
    for i, ex in enumerate(p.workloads.examples):
        if ex.resource_name:
            named.append((_example_path(i, "resourceName"), ex.resource_name))
    for path, name in named:
        if not _well_formed(name):
            yield Finding(
                path,
                f"{name!r} is not a valid resource name",
                "use nvidia.com/<name>: lowercase letters, digits, '-' and '.', at most "
                f"{MAX_RESOURCE_NAME} characters in all, e.g. nvidia.com/gpu.shared",
            )


def time_slicing_replicas(p: Profile) -> Iterator[Finding]:
    # Time-slicing and MPS alike: NVIDIA's plugin rejects fewer than 2 replicas.
    for at, sharing in _sharing_sections(p):
        for i, res in enumerate(sharing.resources):
            if res.replicas < 2:
                yield Finding(
                    (*at, "resources", i, "replicas"),
                    f"{res.replicas} replica shares nothing",
                    f"set replicas to 2 or more, or remove {_sharing_kind(sharing)}",
                )


# --- MPS -------------------------------------------------------------------------------------


def mps_needs_nvidia_plugin(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.mps is not None and dp.implementation != "nvidia":
        yield Finding(
            _MPS,
            "gpustack's device plugin does not implement MPS sharing",
            "set devicePlugin.implementation: nvidia, or share GPUs with timeSlicing",
        )


def mps_excludes_time_slicing(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin applies MPS and silently drops the time-slicing config.
    dp = p.device_plugin
    if dp.mps is not None and dp.time_slicing is not None:
        yield Finding(
            _MPS,
            "MPS and time-slicing are mutually exclusive; NVIDIA's plugin would ignore timeSlicing",
            "keep either sharing.mps or sharing.timeSlicing",
        )


def mps_not_with_mig_devices(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin shares only whole GPUs with MPS: not with mixed, and not with single on
    # MIG-partitioned GPUs, where nvidia.com/gpu stands for MIG devices.
    dp = p.device_plugin
    if dp.mps is None:
        return
    if dp.mig_strategy == "mixed":
        yield Finding(
            _MPS,
            "NVIDIA's device plugin does not support MPS with migStrategy mixed",
            "set migStrategy: none and share whole GPUs, or remove sharing.mps",
        )
    elif dp.mig_strategy == "single" and p.gpus.mig:
        yield Finding(
            _MPS,
            "MPS shares whole GPUs, but with migStrategy single and a MIG layout,"
            f" {dp.resource_name} stands for MIG devices",
            "set migStrategy: none on GPUs without MIG, or remove sharing.mps",
        )


def mps_shares_whole_gpus(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.mps is None:
        return
    seen: set[str] = set()
    for i, res in enumerate(dp.mps.resources):
        if res.name != dp.resource_name:
            yield Finding(
                (*_MPS, "resources", i, "name"),
                f"MPS shares only whole GPUs ({dp.resource_name}), not {res.name}",
                f"set name: {dp.resource_name}",
            )
        elif res.name in seen:
            yield Finding(
                (*_MPS, "resources", i, "name"),
                f"{res.name} is shared by MPS twice",
                "keep one entry per resource",
            )
        seen.add(res.name)


def time_slicing_resources_unique(p: Profile) -> Iterator[Finding]:
    ts = p.device_plugin.time_slicing
    if ts is None:
        return
    names = Counter(res.name for res in ts.resources)
    plain = _unshared_resources(p)
    # Everything the plugin advertises, including shares of MIG resources no layout lists.
    advertised = Counter(advertised_resources(p)) + Counter(
        _shared_name(p, res.name) for res in ts.resources if res.name not in plain
    )
    seen: set[str] = set()
    for i, res in enumerate(ts.resources):
        if names[res.name] > 1 and res.name in seen:
            yield Finding(
                (*_TS, "resources", i, "name"),
                f"{res.name} is time-sliced twice",
                "keep one entry per resource",
            )
        elif res.rename and advertised[res.rename] > 1:
            yield Finding(
                (*_TS, "resources", i, "rename"),
                f"{res.rename} would be advertised twice",
                "give each shared resource a rename no other resource is advertised under",
            )
        seen.add(res.name)


def time_slicing_resources_exist(p: Profile) -> Iterator[Finding]:
    ts = p.device_plugin.time_slicing
    if ts is None:
        return
    plain = _unshared_resources(p)
    unknown_mig = p.device_plugin.mig_strategy == "mixed" and not p.gpus.mig
    for i, res in enumerate(ts.resources):
        if res.name in plain or (unknown_mig and res.name.startswith("nvidia.com/mig-")):
            continue
        yield Finding(
            (*_TS, "resources", i, "name"),
            f"the device plugin has no resource {res.name} to share",
            f"share one of: {', '.join(plain)}",
        )


# --- node configs ----------------------------------------------------------------------------

#: Node config names whose DaemonSet ``nvidia-device-plugin-<name>`` would take the name of
#: another of gpustack's DaemonSets, and whose.
RESERVED_NODE_CONFIG_NAMES = {
    "daemonset": "the default DaemonSet's",
    "mps-control-daemon": "the MPS control daemon's",
}


def node_configs_need_plugin(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if not dp.enabled and dp.node_configs:
        yield Finding(
            (*_NC,),
            "node configs configure gpustack's device plugin DaemonSets, but"
            " devicePlugin.enabled is false, so none is deployed",
            "remove nodeConfigs, or set devicePlugin.enabled: true",
        )


def node_config_names_unique(p: Profile) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, nc in enumerate(p.device_plugin.node_configs):
        if nc.name in seen:
            yield Finding(
                (*_NC, i, "name"),
                f"node config {nc.name} is defined twice; a node label selects only one",
                "give each node config its own name",
            )
        elif nc.name in RESERVED_NODE_CONFIG_NAMES:
            yield Finding(
                (*_NC, i, "name"),
                f"a node config named {nc.name} would get"
                f" {RESERVED_NODE_CONFIG_NAMES[nc.name]} name, nvidia-device-plugin-{nc.name}",
                "choose another name",
            )
        seen.add(nc.name)


# --- MIG -------------------------------------------------------------------------------------


def _uses_mig(p: Profile) -> bool:
    return p.device_plugin.mig_strategy != "none" or bool(p.gpus.mig)


def mig_needs_capable_gpu(p: Profile) -> Iterator[Finding]:
    if not _uses_mig(p):
        return
    at = ("gpus", "mig") if p.gpus.mig else (_DP, "migStrategy")
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    if product is not None and not product.mig_capable:
        capable = ", ".join(n for n, q in catalog.PRODUCTS.items() if q.mig_capable)
        yield Finding(
            at,
            f"{product.name} does not support MIG",
            f"remove the MIG settings, or use a MIG-capable product: {capable}",
        )
    elif product is None and p.gpus.mig:
        yield Finding(
            ("gpus", "mig"),
            "a MIG layout needs gpus.product to check its profiles",
            "set gpus.product, e.g. A100-SXM4-80GB",
        )


def mig_layout_fits(p: Profile) -> Iterator[Finding]:
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    if not p.gpus.mig or product is None or not product.mig_capable:
        return
    compute = memory = 0
    for name, count in p.gpus.mig:
        profile = product.mig.get(name)
        if profile is None:
            yield Finding(
                ("gpus", "mig", name),
                f"{name} is not a MIG profile of {product.name}",
                f"use one of: {', '.join(product.mig)}",
                at_key=True,
            )
            return
        compute += profile.compute * count
        memory += profile.memory * count
    if compute > product.compute_slices or memory > product.memory_slices:
        yield Finding(
            ("gpus", "mig"),
            f"the MIG layout needs {compute} compute and {memory} memory slices; {product.name} "
            f"has {product.compute_slices} and {product.memory_slices}",
            "use fewer or smaller instances",
        )


def mig_strategy_matches_layout(p: Profile) -> Iterator[Finding]:
    strategy = p.device_plugin.mig_strategy
    layout = p.gpus.mig
    if layout and strategy == "none":
        yield Finding(
            ("gpus", "mig"),
            "gpus.mig defines a MIG layout, but devicePlugin.migStrategy is none, so no MIG "
            "device is advertised",
            "set devicePlugin.migStrategy: mixed, or single for a uniform layout",
        )
    if strategy == "single" and len(layout) > 1:
        yield Finding(
            ("gpus", "mig"),
            "migStrategy single needs every MIG device to be the same profile",
            "use one MIG profile, or set devicePlugin.migStrategy: mixed",
        )


RULES: tuple[Rule, ...] = (
    kubernetes_version_supported,
    runtime_matches_distribution,
    crio_restart_not_signal,
    cdi_strategy_needs_runtime_cdi,
    precompiled_needs_kernel,
    driver_config_maps_known_os,
    rdma_needs_driver_container,
    host_mofed_needs_rdma,
    product_matches_architecture,
    driver_supports_gpu,
    driver_still_supports_gpu,
    kernel_modules_fit_gpu,
    open_modules_need_r515,
    simulated_needs_gpustack,
    nvidia_plugin_resource_name,
    per_node_config(nvidia_plugin_time_slicing_rename),
    per_node_config(resource_names_well_formed),
    per_node_config(time_slicing_replicas),
    per_node_config(time_slicing_resources_unique),
    per_node_config(time_slicing_resources_exist),
    per_node_config(mps_needs_nvidia_plugin),
    per_node_config(mps_excludes_time_slicing),
    per_node_config(mps_not_with_mig_devices),
    per_node_config(mps_shares_whole_gpus),
    per_node_config(mig_needs_capable_gpu),
    per_node_config(mig_layout_fits),
    per_node_config(mig_strategy_matches_layout),
    node_configs_need_plugin,
    node_config_names_unique,
    workload_names_unique,
    workload_cuda_fits_driver,
    workload_cuda_fits_gpu,
    workload_cuda_knows_gpu,
    workload_resource_advertised,
    workload_fits_sharing,
    workload_fits_node,
)


def rule_findings(profile: Profile, rules: Iterable[Rule] = RULES) -> list[Finding]:
    """Every rule's findings for one (schema-valid) profile, in rule order."""
    return [finding for rule in rules for finding in rule(profile)]


def cross_profile_findings(
    documents: Sequence[tuple[Path, Document, Profile]],
) -> Iterator[tuple[Path, Document, Finding]]:
    """Rules across profiles: two profiles must not write the same dist/clusters/<name>/."""
    first: dict[str, str] = {}
    for path, doc, profile in documents:
        name = profile.name
        if name in first:
            yield (
                path,
                doc,
                Finding(
                    ("metadata", "name"),
                    f"metadata.name {name!r} is also used by {first[name]}",
                    "give every profile its own name",
                ),
            )
        else:
            first[name] = doc.file
