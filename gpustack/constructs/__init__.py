"""cdk8s constructs that turn a typed profile into the GPU stack's Kubernetes objects.

Public API: :func:`synthesize` (profile → ordered :class:`SynthObject` list) and
:data:`COMPONENTS` (the names in :mod:`gpustack.components`, the registry of components).
Importing this package starts cdk8s (a Node.js process), so the profile and validation code never
import it.
"""

from __future__ import annotations

import os

# jsii prints an end-of-life banner for Node 20 on stderr at import; it is noise for our users.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from gpustack.constructs.labels import COMPONENTS, SYNC_WAVES  # noqa: E402
from gpustack.constructs.stack import SynthObject, synthesize  # noqa: E402

__all__ = ["COMPONENTS", "SYNC_WAVES", "SynthObject", "synthesize"]
