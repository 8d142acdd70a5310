"""What every test runs under.

``GPUSTACK_TODAY`` fixes the day end-of-life findings are judged on
(:func:`gpustack.profile.kubernetes_releases.judged_on`): many tests compare a command's whole
output, and a release reaching its end of life (1.35 on 2027-02-28) would otherwise add a notice
to them on that day. The end-of-life tests set their own days.
"""

from __future__ import annotations

import os

#: The day the suite judges on: the day the end-of-life table was last read.
SUITE_DAY = "2026-12-06"

os.environ["GPUSTACK_TODAY"] = SUITE_DAY
