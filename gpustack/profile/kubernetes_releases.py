"""When upstream support of each Kubernetes minor release ends, and whether it has.

Why a table: a profile on a release past its end of life still works (managed platforms support
releases longer than upstream does), but it runs without upstream's security fixes, so
``validate`` and ``synth`` say so with the date (rule ``kubernetes-end-of-life``). The date of
each release is the "End Of Life Date" of its kubernetes.io release page
(``https://kubernetes.io/releases/<minor>/``), read 2026-12-06 through the docs search:

- 1.30: 2025-07-15 (the page names the day it ended; the date planned at release, 2025-06-28,
  was moved when a last patch release followed).
- 1.33: 2026-06-28; 1.34: 2026-10-27; 1.35: 2027-02-28; 1.36: 2027-06-28; 1.37: 2027-10-28.
- 1.29 (2025-02-28), 1.31 (2025-10-28), 1.32 (2026-02-28): their release pages were not in the
  search's store; each is the date its release page planned at release (upstream's rule of
  thumb: end of life on the 28th, fourteen months after release), not verified here.

"Today" is a parameter, never read by the rules, so tests pass a fixed date and a profile's result
does not change with the wall clock in them. :func:`judged_on` is the one place that picks the day
for a command: ``GPUSTACK_TODAY`` when set (a test suite, or a CI job that must give the same
result next year as today), else the clock's day.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Final

#: The environment variable that fixes the day end-of-life findings are judged on (``YYYY-MM-DD``).
TODAY_ENV: Final = "GPUSTACK_TODAY"

#: Where the dates come from.
SOURCE: Final = "https://kubernetes.io/releases/"

#: Kubernetes minor release -> the day upstream support ends (see the module docstring).
END_OF_LIFE: Final[dict[str, date]] = {
    "1.29": date(2025, 2, 28),  # not verified (planned date)
    "1.30": date(2025, 7, 15),
    "1.31": date(2025, 10, 28),  # not verified (planned date)
    "1.32": date(2026, 2, 28),  # not verified (planned date)
    "1.33": date(2026, 6, 28),
    "1.34": date(2026, 10, 27),
    "1.35": date(2027, 2, 28),
    "1.36": date(2027, 6, 28),
    "1.37": date(2027, 10, 28),
}


def ended(version: str, today: date) -> date | None:
    """The end-of-life date of ``version`` when it is on or before ``today``; None while the
    release is supported, and for a release the table does not know (another rule says so)."""
    end = END_OF_LIFE.get(version)
    return end if end is not None and end <= today else None


class BadToday(ValueError):
    """``GPUSTACK_TODAY`` is set but is no day: a usage error, never a silent fall back to the
    clock (the variable exists so that a result does not change from day to day)."""


def judged_on() -> date:
    """The day a command judges end of life on: ``GPUSTACK_TODAY`` when set, else today."""
    given = os.environ.get(TODAY_ENV)
    if given is None:
        return date.today()
    try:
        return date.fromisoformat(given)
    except ValueError:
        raise BadToday(
            f"{TODAY_ENV}={given!r} is not a day: give it as YYYY-MM-DD, or unset it"
        ) from None
