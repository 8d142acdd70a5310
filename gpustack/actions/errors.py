"""How an action refuses, without click: the command line maps each kind to its exit status.

An action reports what it found in its outcome (an invalid profile included: ``refused``). What
stops it before it has anything to report raises one of these, with a message of one line, so
every caller (the CLI, a test, a bench) gets the same refusal and the CLI alone decides how it
is shown (:func:`gpustack.cli.common.run_action`).
"""

from __future__ import annotations


class ActionError(Exception):
    """Base of the refusals below; the message is one line for the user."""


class Refused(ActionError):
    """An input the action cannot use (a state it cannot read, a log past its limit, a cluster
    with nothing to check): exit 1, as any user error."""


class BadOptions(ActionError):
    """Options that do not go together (``--state`` and ``--kubectl``): a usage error, shown
    with the command's usage line (exit 2)."""


class NothingFound(ActionError):
    """Nothing to work on (no profile in the paths, no ``profiles/`` here): a usage error in
    one line that says what to give instead (exit 2)."""
