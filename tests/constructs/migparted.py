"""A parser for mig-parted's config file, written against its documented format (NVIDIA
mig-parted ``api/spec/v1``: ``version: v1``; ``mig-configs``: a non-empty map of config name to a
non-empty list of ``{devices, mig-enabled, mig-devices, device-filter}``), to prove that what
gpustack writes is a config the MIG manager accepts. Raises :class:`ValueError` with mig-parted's
reason for what it would refuse."""

from __future__ import annotations

import re
from typing import Any

import yaml

#: A MIG profile name: ``<g>g.<mem>gb``, optionally ``<c>c.`` first and ``+me``-style suffixes.
PROFILE = re.compile(r"^(\d+c\.)?\d+g\.\d+gb(\+[a-z]+)*$")


def parse(text: str) -> dict[str, list[dict[str, Any]]]:
    """The configs of a mig-parted config file: name -> list of device specs."""
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict):
        raise ValueError("the config is not a mapping")
    if "version" not in doc:
        raise ValueError("unable to parse with missing 'version' field")
    if doc["version"] != "v1":
        raise ValueError(f"unknown version: {doc['version']}")
    for key in doc:
        if key not in ("version", "mig-configs"):
            raise ValueError(f"unexpected field: {key}")
    configs = doc.get("mig-configs")
    if not isinstance(configs, dict) or not configs:
        raise ValueError("at least one entry in 'mig-configs' is required")
    for name, specs in configs.items():
        if not isinstance(specs, list) or not specs:
            raise ValueError(f"at least one entry in '{name}' is required")
        for spec in specs:
            _check_spec(spec)
    return configs


def _check_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        raise ValueError("a device spec is not a mapping")
    for required in ("devices", "mig-enabled"):
        if required not in spec:
            raise ValueError(f"missing required field: {required}")
    for key in spec:
        if key not in ("devices", "mig-enabled", "mig-devices", "device-filter"):
            raise ValueError(f"unexpected field: {key}")
    devices = spec["devices"]
    if isinstance(devices, str):
        if devices != "all":
            raise ValueError(f"invalid string input for 'devices': {devices}")
    elif not (isinstance(devices, list) and all(type(d) is int for d in devices)):
        raise ValueError("'devices' is neither 'all' nor a list of GPU indexes")
    enabled = spec["mig-enabled"]
    if type(enabled) is not bool:
        raise ValueError("'mig-enabled' is not a boolean")
    mig_devices = spec.get("mig-devices")
    if mig_devices is not None:
        if not isinstance(mig_devices, dict):
            raise ValueError("'mig-devices' is not a mapping")
        for profile, count in mig_devices.items():
            if not PROFILE.match(str(profile)):
                raise ValueError(f"invalid format for '{profile}'")
            if type(count) is not int or count < 0:
                raise ValueError(f"invalid count for '{count}'")
        if mig_devices and all(c == 0 for c in mig_devices.values()):
            raise ValueError("all counts for all MigProfiles are 0")
    if enabled and mig_devices is None:
        raise ValueError("missing required field 'mig-devices' when 'mig-enabled' is true")
    if not enabled and mig_devices:
        raise ValueError("MIG devices included when 'mig-enabled' is false")


def layouts(configs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    """Config name -> the MIG layout its every-GPU spec applies (empty: MIG off)."""
    out = {}
    for name, specs in configs.items():
        (spec,) = specs
        assert spec["devices"] == "all"
        out[name] = dict(spec.get("mig-devices") or {})
    return out
