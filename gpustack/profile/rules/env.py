"""Rules on the ``env`` lists of ``driver``, ``toolkit`` and ``devicePlugin``."""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile.finding import Finding
from gpustack.profile.managed_env import BY_SECTION
from gpustack.profile.model import EnvVar, Profile


def env_not_managed(p: Profile) -> Iterator[Finding]:
    sections: dict[str, tuple[EnvVar, ...]] = {
        "driver": p.driver.env,
        "toolkit": p.toolkit.env,
        "devicePlugin": p.device_plugin.env,
    }
    for section, managed in BY_SECTION.items():
        for i, var in enumerate(sections[section]):
            if var.name not in managed:
                continue
            field = managed[var.name]
            yield Finding(
                (section, "env", i, "name"),
                f"gpustack sets {var.name} in the {section} container from the profile; an"
                " override would contradict it (a path the container does not mount, a mode"
                " the rest of the stack does not use)",
                f"set {field} instead" if field else "remove this entry",
            )


def env_names_unique(p: Profile) -> Iterator[Finding]:
    # Kubernetes keeps the last of two entries with one name (and server-side apply fights
    # over them): a name given twice is a mistake in one of them.
    sections = {
        "driver": p.driver.env,
        "toolkit": p.toolkit.env,
        "devicePlugin": p.device_plugin.env,
    }
    for section, env in sections.items():
        first: dict[str, int] = {}
        for i, var in enumerate(env):
            if var.name in first:
                yield Finding(
                    (section, "env", i, "name"),
                    f"{var.name} is already set by {section}.env[{first[var.name]}]",
                    "keep one of the two entries",
                )
            first.setdefault(var.name, i)
