"""Files in a profiles folder that are not profiles to check: a complete profile among the bases
(under a ``_`` folder), and a Kubernetes manifest.

Why apart from :mod:`gpustack.checker`: telling what a file is, before or after it failed to
load as a profile, is a question about the file alone; the checker decides what to report.
Both read the file again within :mod:`gpustack.limits` (a FIFO or ``/dev/zero`` must not hang
or fill the memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpustack import limits
from gpustack.profile.document import display_path
from gpustack.profile.loader import MAX_VALUES


def cluster_name(file: Path) -> str | None:
    """``metadata.name`` of a YAML file that has one (a complete profile), else ``None`` (a base,
    or anything unreadable: a base is read only when a profile extends it)."""
    try:
        text = limits.read_text(file)
        data: Any = limits.load_yaml_one(text, max_values=MAX_VALUES)
    except (limits.Refused, yaml.YAMLError, OSError, UnicodeError):
        return None
    if not isinstance(data, dict) or not str(data.get("apiVersion", "")).startswith(
        f"{PROFILE_GROUP}/"
    ):
        return None
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else None


def base_note(file: Path, folder: Path, name: str) -> str:
    """Why the complete profile ``file`` (``metadata.name`` ``name``) under a ``_`` name inside
    ``folder`` makes no cluster, and how it would."""
    parts = file.relative_to(folder).parts
    hidden = next(p for p in parts if p.startswith("_"))
    return (
        f"a complete profile (metadata.name {name!r}) under {hidden!r}: a name starting with"
        " '_' holds bases for `extends`, which are neither validated nor synthesized as clusters;"
        f" move it to {display_path(folder / f'{name}.yaml')} to make it a cluster, or drop its"
        " metadata to keep it a base"
    )


#: The API group of profiles: a document in it is a (broken) profile, never a manifest to skip.
PROFILE_GROUP = "gpustack.dev"


def manifest_kinds(file: Path) -> str | None:
    """``"a Kubernetes manifest (apps/v1 DaemonSet)"`` when every YAML document in ``file`` is
    a Kubernetes object that is not a gpustack profile; ``None`` otherwise (then it is a profile
    with errors, and its errors are reported)."""
    try:
        # the loader refused it a moment ago, perhaps for these very limits: reading it again
        # without them would hang on a FIFO or fill the memory from /dev/zero (issue #21)
        text = limits.read_text(file)
        docs: list[Any] = [
            d for d in limits.load_yaml(text, max_values=MAX_VALUES) if d is not None
        ]
    except (limits.Refused, yaml.YAMLError):
        return None
    kinds: list[str] = []
    for d in docs:
        if not isinstance(d, dict):
            return None
        api, kind = d.get("apiVersion"), d.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str) or not api or not kind:
            return None
        if api.split("/")[0] == PROFILE_GROUP or kind == "Profile":
            return None
        kinds.append(f"{api} {kind}")
    if not kinds:
        return None
    more = len(kinds) - 1
    rest = f", and {more} more document{'s' if more > 1 else ''}" if more else ""
    return f"a Kubernetes manifest: {kinds[0]}{rest}"
