"""GitOps delivery objects generated from the profiles' ``gitops`` sections.

* :mod:`~gpustack.gitops.objects` builds the Argo CD ApplicationSets and AppProjects and the
  per-cluster Flux sources and Kustomizations (plain dicts: pure Python, no cdk8s), from each
  profile and the manifests synthesized for it;
* :mod:`~gpustack.gitops.output` writes them into ``<out>/gitops/`` (owned, atomic, checked by
  ``--check``), next to ``<out>/clusters/``.
"""
