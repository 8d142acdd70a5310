"""The images a cluster pulls, read from its rendered objects (``gpustack images``).

An air-gapped fleet has to copy every image before the nodes can start; a list kept by hand
misses the init container a chart bump added. Here the list is read from the objects gpustack
renders, the same ones ``synth`` writes to ``dist/``: :mod:`~gpustack.images.collect` finds every
reference (each container, init container and ephemeral container of every pod template, through
:mod:`gpustack.kube.pods`, and the environment variables that name an image another pod runs),
:mod:`~gpustack.images.reference` splits a reference into registry, repository, tag and digest,
:mod:`~gpustack.images.mirror` tells, under ``cluster.imageRegistry``, which upstream image a
mirrored reference stands for, and :mod:`~gpustack.images.formats` writes the list for people
and for the mirroring tools (oc-mirror, skopeo sync).

A feature on the floor of lint and doctor: pure, it renders nothing and imports no sibling
feature; :mod:`gpustack.actions.images` renders the profiles and hands it the objects.
"""
