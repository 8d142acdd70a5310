"""The Argo CD plugin's ``generate`` as a thin client of a warm renderer (issue #37).

A fresh ``gpustack template --argocd`` spends most of its second starting Python's imports,
Node and cdk8s for one render. :mod:`.client` instead asks a long-lived renderer
(:mod:`gpustack.renderer`) over a unix socket in a folder only the sidecar's user may enter,
starting the renderer itself when none answers, as build servers do. It imports only the
standard library (and no gpustack module at all: this unit stands on the lowest floor), so its
own start is a bare Python start; :mod:`.wire` is the message format both sides share and
:mod:`.rundir` the checked folder and the settings.
"""
