"""When libyaml's text can differ from PyYAML's pure emitter, the reference.

gpustack writes YAML with libyaml's emitter where PyYAML has it (several times faster) and
promises bytes that do not depend on how PyYAML was installed. The two emitters agree on plain
text; they differ where a string must be escaped (non-ASCII or control characters: libyaml folds
and escapes them its own way, e.g. NEL as ``"\\N"``) and on an empty key (libyaml writes ``''``,
the pure emitter a complex ``? ''`` key). Every escape has a backslash and every empty string
is ``''``, so a text without either is the same from both, and one with either is written again
with the pure emitter. ``tests/synth/test_emitters.py`` draws arbitrary documents to hold this.
"""

from __future__ import annotations


def libyaml_may_differ(text: str) -> bool:
    """Whether libyaml's ``text`` may differ from what the pure emitter writes."""
    return "\\" in text or "''" in text
