"""An object's body crosses jsii as its JSON text, and comes back from cdk8s as that text.

cdk8s applies a JSON patch's value as it is: ``ApiObject.toJson`` resolves and sorts the
object's props and metadata, then applies the patches after that (``JsonPatch.apply``, a deep
copy of the value), so a body gpustack adds by patch (:func:`gpustack.constructs.kube._make`)
reaches the output untouched, whatever it is. As a tree it was still walked node by node three
times on the way: jsii's Python side turned each dict and list into its wire form, its Node
kernel checked the type of each key going in and each key coming back from ``Chart.toJson``
(formatting a message for each check it passes), and Python rebuilt the tree from the reply: in
a warm render of a cluster that was about half of the time spent with jsii. As one string it
costs a ``json.dumps`` and a ``json.loads`` in C.

So each top-level field but ``apiVersion``, ``kind`` and ``metadata`` (which cdk8s makes) is
added as its JSON text (:func:`encode`), and :func:`decoded` turns the rendered object's fields
back into values. ``tests/constructs/test_body_text.py`` renders every example profile both ways
(the text, and the tree as before) and holds the objects equal, so a cdk8s that starts to
change patch values is noticed there.
"""

from __future__ import annotations

import json
from typing import Any

#: The fields cdk8s makes itself (from the ``ApiObject``'s props and metadata), not by patch.
MADE_BY_CDK8S = frozenset({"apiVersion", "kind", "metadata"})

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_decode = json.JSONDecoder().decode


def encode(value: Any) -> str:
    """A body field's value as the JSON text that crosses jsii."""
    return _encode(value)


def decoded(manifest: dict[str, Any]) -> dict[str, Any]:
    """The object cdk8s rendered, each field added by :func:`encode` turned back into its
    value (in place; the same dict is returned)."""
    for key, value in manifest.items():
        if key not in MADE_BY_CDK8S:
            if not isinstance(value, str):
                raise TypeError(f"field {key!r} of a rendered object was not added as JSON text")
            manifest[key] = _decode(value)
    return manifest
