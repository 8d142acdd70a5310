"""What each command does, as helm's ``pkg/action`` stands behind ``pkg/cmd``.

One module per action: frozen ``Options`` in, ``run`` (or a named entry point), a frozen
``Outcome`` out. An action reports through its outcome and its own exceptions, never click, so
it can be called and tested without a command line; :mod:`gpustack.cli` only maps click options
to an action's options and its outcome to output and exit codes.

Actions sit above the features they orchestrate (rendering, GitOps delivery, lint, doctor,
acceptance): ``gpustack.synth`` renders and writes and knows nothing of them, and no feature
imports an action (``tests/test_imports.py``).
"""
