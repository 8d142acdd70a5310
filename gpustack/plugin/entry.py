"""The console scripts of the device plugin and the DRA driver, and the check they start with.

Why: grpcio, protobuf and nvidia-ml-py are the ``plugin`` extra, not the base install (the
synthesizer never needs them, and they are most of the wheel's download). Without the extra the
plugin's first import fails with a traceback about ``grpc``; this module checks first, with the
standard library only, and says in one line what to install.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Final

#: The distribution (pyproject.toml's ``project.name``) and its extra that installs what the
#: plugins import.
DISTRIBUTION: Final = "gpustack-gitops"
EXTRA: Final = "plugin"
#: Module the plugins import -> the distribution of the ``plugin`` extra that provides it.
EXTRA_MODULES: Final = {
    "grpc": "grpcio",
    "google.protobuf": "protobuf",
    "pynvml": "nvidia-ml-py",
}


def missing_modules() -> list[str]:
    """The distributions of the ``plugin`` extra whose module cannot be imported."""
    missing = []
    for module, distribution in EXTRA_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a parent package ("google") is absent
            found = False
        if not found:
            missing.append(distribution)
    return missing


def _refuse(command: str, missing: list[str]) -> int:
    sys.stderr.write(
        f"{command}: error: {', '.join(missing)} not installed; install the plugin extra:"
        f" pip install '{DISTRIBUTION}[{EXTRA}]'\n"
    )
    return 1


def device_plugin() -> int:
    """``gpustack-device-plugin``."""
    missing = missing_modules()
    if missing:
        return _refuse("gpustack-device-plugin", missing)
    from gpustack.plugin.main import main

    return main(None)


def dra_plugin() -> int:
    """``gpustack-dra-plugin``."""
    missing = missing_modules()
    if missing:
        return _refuse("gpustack-dra-plugin", missing)
    from gpustack.plugin.dra.main import main

    return main(None)
