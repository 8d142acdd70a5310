"""``python -m gpustack`` and the ``gpustack`` console script.

The script's entry is :func:`main` here rather than the click group itself, so that Ctrl-C
while the CLI is still being imported (cdk8s-free, but a second on a busy machine) ends as it
does once a command runs: one line and :attr:`~gpustack.exits.Exit.INTERRUPTED`, no traceback.
"""

from __future__ import annotations

import sys

from gpustack.exits import INTERRUPTED, Exit


def main() -> None:
    try:
        from gpustack.cli import main as cli
        from gpustack.cli.group import PROG
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED + "\n")
        sys.exit(Exit.INTERRUPTED)
    try:
        cli(prog_name=PROG)
    finally:
        # a command that started cdk8s in the background waits for it before the interpreter
        # shuts down (gpustack.synth.node.settle_cdk8s); the module is only loaded if it did
        node = sys.modules.get("gpustack.synth.node")
        if node is not None:
            try:
                node.settle_cdk8s()
            except KeyboardInterrupt:
                sys.stderr.write(INTERRUPTED + "\n")
                sys.exit(Exit.INTERRUPTED)


if __name__ == "__main__":
    main()
