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

from gpustack.limits import (
    MAX_BYTES,
    MAX_DEPTH,
    Refused,
    decode,
    load_yaml_one,
    read_limited,
)
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


#: Bounds on the file the plugin reads (a config is a few KiB, nested about 6 levels): past them
#: the file is refused before PyYAML builds it, whose recursion a deep file would overflow.
#: Read as every gpustack entry point reads files, by :mod:`gpustack.limits`.
MAX_CONFIG_BYTES = MAX_BYTES
MAX_CONFIG_DEPTH = MAX_DEPTH
#: More values than any config holds; checked on the event stream, before composing.
MAX_CONFIG_VALUES = 10_000
_WHAT = "device plugin config"


def load_config(path: str | Path) -> PluginConfig:
    """Read gpustack's plugin's YAML (or JSON) config file; every error names the file.

    Besides :meth:`PluginConfig.from_dict`'s checks it refuses what only NVIDIA's plugin runs
    (``sharing.mps``), so gpustack's plugin never starts without the sharing it was given, and a
    file without settings (empty, comments only): on SIGHUP that is far more often a ConfigMap
    caught half-written or emptied by mistake than a wish for every default.
    """
    source = str(path)
    text = _read_text(path, source)
    try:
        # shape first, by libyaml's parser where PyYAML has it (the pure-Python scanner takes a
        # second on 3,000 open brackets)
        data = load_yaml_one(
            text, max_values=MAX_CONFIG_VALUES, max_depth=MAX_CONFIG_DEPTH, what=_WHAT
        )
    except Refused as exc:
        raise ConfigError("$", str(exc), f"{source}:{exc.line}:{exc.col}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError("$", f"invalid YAML: {problem}; fix the syntax", where) from None
    if data is None:
        raise ConfigError(
            "$",
            "the file has no settings (it is empty or only comments); "
            "write 'version: v1' to run with every default",
            source,
        )
    try:
        config = PluginConfig.from_dict(data)
        check_gpustack_plugin(config)
    except ConfigError as exc:
        raise ConfigError(exc.path, exc.message, source) from None
    return config


def _read_text(path: str | Path, source: str) -> str:
    """The file's text: a regular file (a FIFO or device would hang or never end), bounded."""
    try:
        return decode(read_limited(path, MAX_CONFIG_BYTES, what=_WHAT))
    except Refused as exc:
        raise ConfigError("$", str(exc), source) from None
