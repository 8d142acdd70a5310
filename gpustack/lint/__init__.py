"""``gpustack lint``: the GPU pitfalls of a team's own workloads, found before they bite.

Built like yamllint or check-jsonschema, in one direction: :mod:`~gpustack.kube.manifests` reads
multi-document YAML with the position of every value, :mod:`~gpustack.kube.pods` finds the pod
templates in each object (core workloads, Kubeflow and Ray), :mod:`~gpustack.lint.context` states
what the profile says about the cluster (using :mod:`gpustack.profile.derive`, never the rules
or the constructs), the rules in :mod:`gpustack.lint.rules` (one per module, listed once in
:mod:`~gpustack.lint.registry`) find problems, :mod:`~gpustack.lint.check` locates them, and
:func:`~gpustack.report.render_lint` renders them like ``gpustack validate`` does.
"""
