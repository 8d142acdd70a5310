"""cdk8s constructs that turn a typed profile into the GPU stack's Kubernetes objects.

Public API: :func:`synthesize` (profile → ordered :class:`SynthObject` list) and
:data:`COMPONENTS` (the names in :mod:`gpustack.profile.components`, the registry of components).
Importing this package starts nothing: :func:`synthesize` and :class:`SynthObject` are loaded
from :mod:`gpustack.constructs.stack` (which imports cdk8s, and so starts a Node.js process) on
first use, so a pure helper such as :mod:`gpustack.constructs.labels` imports without Node.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# jsii prints an end-of-life banner for Node 20 on stderr at import; it is noise for our users.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from gpustack.constructs.labels import COMPONENTS, SYNC_WAVES  # noqa: E402

if TYPE_CHECKING:
    from gpustack.constructs.stack import SynthObject, synthesize

__all__ = ["COMPONENTS", "SYNC_WAVES", "SynthObject", "synthesize"]

_LAZY = frozenset({"SynthObject", "synthesize"})


def __getattr__(name: str) -> Any:
    """``synthesize`` and ``SynthObject``, imported (with cdk8s) when first asked for."""
    if name in _LAZY:
        return getattr(importlib.import_module("gpustack.constructs.stack"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
