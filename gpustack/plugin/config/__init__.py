"""Typed configuration of the gpustack device plugin, and how the plugin loads its file.

The file format is NVIDIA k8s-device-plugin's config ``version: v1`` (the subset the plugin
implements, plus ``flags.mpsRoot`` and ``sharing.mps`` for NVIDIA's plugin) and an optional
``gpustack:`` block for our extensions, so one ConfigMap can be read by either plugin's tooling.

* :mod:`.model` (NVIDIA's format and the whole file) and :mod:`.extensions` (the ``gpustack``
  block): the frozen dataclasses; every key is declared once there (shared declarations in
  :mod:`.keys`), and parsing, writing and ``schemas/device-plugin-config.schema.json`` are
  derived from them (:mod:`gpustack.fields`);
* :mod:`.checks`: :class:`ConfigError` and the rules between values that a schema cannot state;
* here: :func:`load_config`, which reads the file as gpustack's plugin runs it.

This package is shared with the synth constructs, which render the ConfigMap from a
:class:`PluginConfig`; it imports only the standard library, PyYAML and :mod:`gpustack.fields`
(itself standard library only), since the plugin image ships no jsonschema.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from gpustack.plugin.config.checks import ConfigError, check_config, check_gpustack_plugin
from gpustack.plugin.config.extensions import (
    BACKENDS,
    DEFAULT_IGNORED_XIDS,
    Backend,
    GpustackExtensions,
    HealthConfig,
    MigLayout,
    SimulatedBackend,
    SimulatedGpu,
    simulated_uuid,
)
from gpustack.plugin.config.model import (
    ALLOCATION_POLICIES,
    DEVICE_ID_STRATEGIES,
    DEVICE_LIST_STRATEGIES,
    MIG_STRATEGIES,
    AllocationPolicy,
    DeviceIdStrategy,
    DeviceListStrategy,
    Flags,
    MigStrategy,
    PluginConfig,
    PluginFlags,
    ReplicatedResource,
    ReplicatedResources,
    Sharing,
    TimeSlicing,
)

__all__ = [
    "ALLOCATION_POLICIES",
    "BACKENDS",
    "DEFAULT_IGNORED_XIDS",
    "DEVICE_ID_STRATEGIES",
    "DEVICE_LIST_STRATEGIES",
    "MIG_STRATEGIES",
    "AllocationPolicy",
    "Backend",
    "ConfigError",
    "DeviceIdStrategy",
    "DeviceListStrategy",
    "Flags",
    "GpustackExtensions",
    "HealthConfig",
    "MigLayout",
    "MigStrategy",
    "PluginConfig",
    "PluginFlags",
    "ReplicatedResource",
    "ReplicatedResources",
    "Sharing",
    "SimulatedBackend",
    "SimulatedGpu",
    "TimeSlicing",
    "check_config",
    "check_gpustack_plugin",
    "load_config",
    "simulated_uuid",
]


def load_config(path: str | Path) -> PluginConfig:
    """Read gpustack's plugin's YAML (or JSON) config file; every error names the file.

    Besides :meth:`PluginConfig.from_dict`'s checks it refuses what only NVIDIA's plugin runs
    (``sharing.mps``), so gpustack's plugin never starts without the sharing it was given.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("$", f"cannot read file: {exc.strerror}", source) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "$", f"not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8", source
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError("$", f"invalid YAML: {problem}; fix the syntax", where) from None
    try:
        config = PluginConfig.from_dict({} if data is None else data)
        check_gpustack_plugin(config)
    except ConfigError as exc:
        raise ConfigError(exc.path, exc.message, source) from None
    return config
