"""When libyaml's text can differ from PyYAML's pure emitter, the reference.

gpustack writes YAML with libyaml's emitter where PyYAML has it (several times faster) and
promises bytes that do not depend on how PyYAML was installed. The two emitters agree on plain
text; they differ where a string must be escaped (non-ASCII or control characters: libyaml folds
and escapes them its own way, e.g. NEL as ``"\\N"``) and on an empty key (libyaml writes ``'':``,
the pure emitter a complex ``? ''`` key). An escape exists only inside a double-quoted scalar and
always has a backslash, so a text is the same from both unless it has a backslash *and* a
double-quoted scalar, or an empty key; such a text is written again with the pure emitter.

A double-quoted scalar starts with ``"`` where a token starts: after a line's indentation (and
any ``- `` or ``? ``), or after ``: ``. The test looks for that much only, so a literal block
whose line starts with a quote (a shell script) counts too: that costs a slower emitter for that
text, never different bytes. Shell scripts carry backslashes in literal blocks, and with the
coarser test (any backslash) every script ConfigMap went through the pure emitter, about half of
a cluster's serialization time. ``tests/synth/test_emitters.py`` draws arbitrary documents to
hold all this.
"""

from __future__ import annotations

import re

#: Where a double-quoted scalar can start in block-style output.
_DOUBLE_QUOTED = re.compile(r'(?:^[ ?-]*|: )"', re.MULTILINE)


def libyaml_may_differ(text: str) -> bool:
    """Whether libyaml's ``text`` may differ from what the pure emitter writes."""
    if "'':" in text or text.endswith("\n...\n"):
        # an empty key; or the document end marker, which libyaml writes after every literal
        # block that keeps its trailing newlines and the pure emitter not after such a key
        return True
    return "\\" in text and _DOUBLE_QUOTED.search(text) is not None
