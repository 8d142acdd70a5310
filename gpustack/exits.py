"""The exit statuses of every ``gpustack`` command: the one table the code exits with and each
command's ``--help`` states (:func:`statuses`), so the two cannot drift apart.

A command says what 0 and 1 mean for it (``validate``: all valid, any invalid); 2, 3 and 130
mean the same everywhere: click's usage error, ``synth --check`` finding its output out of date,
and an interrupt (Ctrl-C, SIGINT: 128 + the signal number, as shells report it).
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    STALE = 3
    DISRUPTIVE = 4
    INTERRUPTED = 130


#: What a status means unless the command says more.
MEANING: dict[Exit, str] = {
    Exit.OK: "on success",
    Exit.FAILED: "on invalid input or a refusal",
    Exit.USAGE: "on a usage error",
    Exit.STALE: "when --check finds the output out of date",
    Exit.DISRUPTIVE: "when --exit-code is given and the plan replaces a pod or needs a manual step",
    Exit.INTERRUPTED: "when interrupted (Ctrl-C)",
}


#: The one line an interrupted command prints: ``synth`` writes each cluster folder aside and
#: swaps it in whole, so an interrupt leaves every folder as it was or as it should be.
INTERRUPTED = "gpustack: interrupted; no file was left half-written"


def statuses(said: dict[Exit, str], *, stale: bool = False, disruptive: bool = False) -> str:
    """``Exit status: 0 …, 1 …, 2 on a usage error, 130 when interrupted (Ctrl-C).`` for a command's
    help: ``said`` gives its own meanings of 0 and 1; ``stale`` includes :attr:`Exit.STALE`,
    ``disruptive`` :attr:`Exit.DISRUPTIVE`."""
    own = {Exit.STALE: stale, Exit.DISRUPTIVE: disruptive}
    shown = [s for s in Exit if own.get(s, True)]
    return "Exit status: " + ", ".join(f"{int(s)} {said.get(s, MEANING[s])}" for s in shown) + "."
