"""Rules across profiles: what one profile cannot know about the others checked with it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from gpustack.profile.document import Document
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

#: The ID of the one cross-profile rule (see :data:`gpustack.profile.rules.registry.BUILTIN`).
PROFILE_NAMES_UNIQUE = "profile-names-unique"


def cross_profile_findings(
    documents: Sequence[tuple[Path, Document, Profile]],
) -> Iterator[tuple[Path, Document, Finding]]:
    """Two profiles must not write the same dist/clusters/<name>/."""
    first: dict[str, str] = {}
    for path, doc, profile in documents:
        name = profile.name
        if name in first:
            yield (
                path,
                doc,
                Finding(
                    ("metadata", "name"),
                    f"metadata.name {name!r} is also used by {first[name]}",
                    "give every profile its own name",
                    rule=PROFILE_NAMES_UNIQUE,
                ),
            )
        else:
            first[name] = doc.file
