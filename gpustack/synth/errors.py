"""The one exception type synthesis raises for expected failures.

The CLI turns it into a single ``Error: ...`` line and exit code 1; anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations


class SynthError(Exception):
    """An expected failure with a message that says what is wrong and how to fix it."""
