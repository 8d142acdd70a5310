"""The Argo CD plugin's warm renderer: one long-lived process with Python's imports, Node and
cdk8s started, answering ``generate`` calls from :mod:`gpustack.render_client` on a unix
socket (issue #37).

A call costs a render of an already started synthesizer, or nothing but hashing its inputs when
the same inputs were rendered before (:mod:`.cache`). The client starts the renderer (``python
-m gpustack.renderer <socket>``) when none answers, so the sidecar runs nothing else; the
renderer leaves on its own (:mod:`.server`), bounded in renders, memory and idle time.
"""
