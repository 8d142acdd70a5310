"""The YAML text of the config files the stack ships in ConfigMaps (the device plugin's config,
mig-parted's, NFD's).

Written with libyaml's emitter where PyYAML has it: a fleet renders one plugin config per
cluster, and PyYAML's pure-Python emitter was most of the time a cluster costs once its
components come from the render cache. Both emitters write the same text for these files
(``tests/constructs/test_config_text.py`` compares them for every example profile), so the
output never depends on how PyYAML was installed: where they can differ, the text is written
again with the pure emitter (:mod:`gpustack.emitters`).
"""

from __future__ import annotations

from typing import Any

import yaml

from gpustack.emitters import libyaml_may_differ

PURE_DUMPER: type[Any] = yaml.SafeDumper
FAST_DUMPER: type[Any] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def config_yaml(data: Any, dumper: type[Any] = FAST_DUMPER) -> str:
    """``yaml.safe_dump(data, sort_keys=False)``, with ``dumper``'s emitter (the pure one
    wherever the text escapes something)."""
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False)
    if dumper is not PURE_DUMPER and libyaml_may_differ(text):
        text = yaml.dump(data, Dumper=PURE_DUMPER, sort_keys=False)
    return text
