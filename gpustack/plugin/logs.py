"""How both plugins log: INFO and up to stderr, each line with its time.

Why a module of its own: both ``main`` functions call it, and :mod:`gpustack.plugin.entry`,
the stdlib-only module that would otherwise hold it, imports those ``main`` functions.
"""

from __future__ import annotations

import logging
import sys


def log_to_stderr() -> None:
    """Log INFO and up to stderr, the time and level on each line: one format for both plugins'
    logs, however each is started."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
