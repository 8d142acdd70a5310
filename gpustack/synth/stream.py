"""One cluster's manifests as a single YAML stream, for pipes and for rendering in Argo CD.

``gpustack template PROFILE`` prints what ``gpustack synth`` would write into the profile's
cluster folder, without writing: every manifest, in the order of the folder's
``kustomization.yaml`` (the install order of :mod:`gpustack.synth.layout`), each document
starting with ``---``. The bytes of each document are the file's bytes, so
``gpustack template p.yaml | kubectl diff -f -`` and an Argo CD plugin see exactly what the
committed folder holds.
"""

from __future__ import annotations

from gpustack.synth.layout import KUSTOMIZATION_FILE, ClusterOutput

DOCUMENT_START = b"---\n"


def yaml_stream(output: ClusterOutput) -> bytes:
    """The manifests of ``output`` (not its kustomization) in install order, as one stream."""
    return b"".join(
        DOCUMENT_START + f.content for f in output.files if f.path != KUSTOMIZATION_FILE
    )
