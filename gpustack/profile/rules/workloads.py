"""Rules on ``workloads``: each example job runs on the profile's driver, GPUs and plugin.

A job's CUDA release must suit the driver (too new needs a newer driver) and the GPU (too old
has no kernels for it, too new dropped it); the resource it requests must be advertised, and
one node must offer as many as it asks for.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile import cuda_catalog
from gpustack.profile.catalog import parse_driver
from gpustack.profile.derive import (
    MIG_RESOURCE_PREFIX,
    advertised_anywhere,
    advertised_resources,
    architecture_of,
    claims_gpus,
    mig_resources_unknown,
    node_capacity,
    plugin_configs,
    shared_entry,
    sharing,
    workload_cuda,
    workload_resource,
)
from gpustack.profile.finding import Finding
from gpustack.profile.model import Example, Profile
from gpustack.profile.rules.common import (
    example_path,
    gpu_minimum,
    near_miss,
    sharing_kind,
    well_formed,
)


def workload_cuda_fits_driver(p: Profile) -> Iterator[Finding]:
    for i, ex in enumerate(p.workloads.examples):
        at = example_path(i, "cudaVersion" if ex.cuda_version else "image")
        cuda = workload_cuda(ex)
        if cuda is None:
            yield Finding(
                at,
                f"cannot tell which CUDA release image {ex.image!r} is built with",
                'set cudaVersion, e.g. cudaVersion: "12.4"',
            )
            continue
        floor = cuda_catalog.cuda_family_floor(cuda)
        if floor is None:
            yield Finding(
                at,
                cuda_catalog.unknown_cuda(cuda),
                "use an image built for a known CUDA release or set cudaVersion",
            )
            continue
        if parse_driver(p.driver.version) < parse_driver(floor):
            ga = cuda_catalog.CUDA_GA_DRIVER.get(cuda)
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
            at = example_path(i, "cudaVersion" if ex.cuda_version else "image")
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
    found = gpu_minimum(p, "first_cuda")
    if found is None:
        return
    first, gpu = found
    for i, ex in enumerate(p.workloads.examples):
        cuda = workload_cuda(ex)
        if cuda is not None and _cuda_key(cuda) < _cuda_key(first):
            yield Finding(
                example_path(i, "cudaVersion" if ex.cuda_version else "image"),
                f"CUDA {cuda} cannot run on {gpu} CUDA {first} or newer",
                f"use an image built for CUDA {first} or newer",
            )


def workload_names_unique(p: Profile) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, ex in enumerate(p.workloads.examples):
        if ex.name in seen:
            yield Finding(
                example_path(i, "name"),
                f"example name {ex.name!r} is used twice",
                "give each example its own name",
            )
        seen.add(ex.name)


def workload_resource_advertised(p: Profile) -> Iterator[Finding]:
    # With node configs, a resource advertised on any node pool is fine: the scheduler puts the
    # job where it is offered.
    dp = p.device_plugin
    if not dp.enabled:
        return  # another plugin advertises resources gpustack does not know about
    advertised = advertised_anywhere(p)
    for i, ex in enumerate(p.workloads.examples):
        if claims_gpus(ex):
            continue  # a ResourceClaim, not an extended resource: the dra-example rules
        if _must_name_mig(p, ex):
            yield Finding(
                example_path(i),
                "with migStrategy mixed, an example must say which MIG resource it requests",
                f"set resourceName to one of: {', '.join(_mig_resources(p))}",
            )
            continue
        wanted = workload_resource(p, ex)
        if not well_formed(wanted):
            continue  # resource-names-well-formed reports it
        if mig_resources_unknown(p) and wanted.startswith(MIG_RESOURCE_PREFIX):
            continue  # no layout given: MIG resources are unknown, not wrong
        if wanted not in advertised:
            at = example_path(i, "resourceName") if ex.resource_name else example_path(i)
            # a plugin's resourceName that is a slip of the well-known resource the example
            # wants is the typo: the hint must not tell the example to copy it (issue #32)
            slip = near_miss(dp.resource_name) == wanted
            yield Finding(
                at,
                f"the device plugin does not advertise {wanted}",
                f"fix devicePlugin.resourceName {dp.resource_name!r}, a slip of {wanted}"
                if slip
                else f"request one of: {', '.join(advertised)}",
            )


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
        if ex.gpus <= 1 or claims_gpus(ex):
            continue
        for name, view in plugin_configs(p):
            ts = sharing(view)
            if ts is None or not ts.fail_requests_greater_than_one:
                continue
            if shared_entry(view, wanted) is not None:
                yield Finding(
                    example_path(i, "gpus"),
                    f"{sharing_kind(ts)} with failRequestsGreaterThanOne{_on_nodes(name)} refuses"
                    f" pods that request more than one {wanted}",
                    "set gpus: 1, or failRequestsGreaterThanOne: false",
                )
                break


def workload_fits_node(p: Profile) -> Iterator[Finding]:
    # node_capacity is what lint's gpu-fits-node asks too: the two agree on every node pool,
    # MIG layouts included
    dp = p.device_plugin
    if not dp.enabled:
        return  # another plugin: capacity unknown here
    configs = plugin_configs(p)
    for i, ex in enumerate(p.workloads.examples):
        if _must_name_mig(p, ex):
            continue  # workload-resource-advertised reports it
        wanted = workload_resource(p, ex)
        if claims_gpus(ex):
            continue
        offers = [(c, n, v) for n, v in configs if (c := node_capacity(v, wanted)) is not None]
        if not offers:
            continue  # not advertised: workload-resource-advertised reports it
        (capacity, what), name, view = max(offers, key=lambda o: o[0][0])
        if ex.gpus > capacity:
            per_node = "gpus.perNode" if name is None else f"perNode of node config {name}"
            hint = (
                f"request at most {capacity}, or set gpus.perNode to what the nodes have"
                if capacity
                else f"request a MIG resource: {', '.join(_mig_resources(view))}"
            )
            yield Finding(
                example_path(i, "gpus"),
                f"the job requests {ex.gpus} {wanted}, but a node offers {capacity} {what} "
                f"({per_node}: {view.gpus.per_node}), so it never schedules",
                hint,
            )


def _mig_resources(view: Profile) -> list[str]:
    return [r for r in advertised_resources(view) if r.startswith(MIG_RESOURCE_PREFIX)]


def _must_name_mig(p: Profile, ex: Example) -> bool:
    """With migStrategy mixed and a layout, an example must name the MIG resource it wants."""
    return ex.resource_name is None and p.device_plugin.mig_strategy == "mixed" and bool(p.gpus.mig)
