"""``gpu-count-whole``: a GPU count is a whole number of at least one.

Devices are not divisible: ``0.5`` is refused by the scheduler ("must be an integer"), a
negative count by the API server, and ``0`` is worse than either: the pod schedules anywhere,
and with the NVIDIA runtime an image that sets ``NVIDIA_VISIBLE_DEVICES=all`` sees every GPU of
the node, outside the plugin's accounting.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite
from gpustack.kube.quantity import quantity
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    for c in site.containers():
        for section, name, value, path in gpu_entries(c, ctx):
            number = quantity(value)
            if number is None:
                problem = f"{value!r} is not a quantity"
            elif number != number.to_integral_value():
                problem = f"{value} is a fraction; GPUs are whole devices"
            elif number < 0:
                problem = f"{value} is negative"
            elif number == 0:
                problem = (
                    "0 gives the container no GPU of its own, yet with the NVIDIA runtime it may "
                    "see every GPU of the node (NVIDIA_VISIBLE_DEVICES=all)"
                )
            else:
                continue
            yield Finding(
                path,
                f"container {c.name}: {section} of {name}: {problem}",
                "request a whole number of at least 1, or remove the entry and set "
                "NVIDIA_VISIBLE_DEVICES=void for a container that must see no GPU",
            )
