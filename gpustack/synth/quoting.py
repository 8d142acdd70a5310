"""Which strings must be quoted so that every YAML reader takes them for strings.

Manifests are read by PyYAML (YAML 1.1), by Go's yaml.v2 and yaml.v3 (``kubectl kustomize``,
Argo CD, YAML 1.2) and others: a string any of them could take for a number, boolean or null is
written quoted. Both writers of manifest text use this rule: :mod:`gpustack.synth.serialize`
(PyYAML) and :mod:`gpustack.synth.yaml_text` (the direct writer).
"""

from __future__ import annotations

import re

#: Plain scalars that some YAML reader takes for a number, though PyYAML (YAML 1.1 as PyYAML
#: implements it) reads them as strings: YAML 1.2 octals and binaries (``0o17``, ``0b101``),
#: exponents without a dot (``5E10``), decimals with a leading zero (``0859``, read by Go's
#: yaml.v3 as a float, so ``kubectl kustomize`` turns the string into ``859``), underscores
#: (``1_000``), sexagesimal (``190:20:30``, YAML 1.1), hex and timestamps.
_NUMBER_LIKE = re.compile(
    r"[-+]?("
    r"0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+"
    r"|[0-9][0-9_]*(:[0-5]?[0-9])*(\.[0-9_]*)?([eE][-+]?[0-9]+)?"
    r"|\.[0-9][0-9_]*([eE][-+]?[0-9]+)?"
    r"|\.(inf|Inf|INF)"
    r")|\.(nan|NaN|NAN)"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt \t].*)?"  # a YAML 1.1 timestamp
)
#: Words a YAML 1.1 or 1.2 reader takes for a boolean or null (YAML 1.1's ``y``/``n`` too,
#: which PyYAML leaves out but Go's yaml.v2 and others read as booleans).
_WORDS = frozenset(
    spelling
    for word in ("y", "yes", "n", "no", "true", "false", "on", "off", "null")
    for spelling in (word, word.capitalize(), word.upper())
) | {"~", ""}


def ambiguous(value: str) -> bool:
    """Whether any YAML reader (1.1 or 1.2, PyYAML, libyaml, Go's yaml.v2/v3) could read
    ``value``, written plain, as something other than this string."""
    return value in _WORDS or _NUMBER_LIKE.fullmatch(value) is not None
