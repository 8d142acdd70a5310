"""What a change of the rendered objects does on the nodes: ``gpustack plan`` (issue #35).

Two sets of objects, the committed output and the one the profiles render now, are paired by
kind, namespace and name (:mod:`~gpustack.plan.objects`); each changed workload is classified by
how its pods take the change (:mod:`~gpustack.plan.workloads`), each ConfigMap or Secret by who
mounts it (:mod:`~gpustack.plan.configs`), and what no sync does by itself becomes a manual step
with its commands (:mod:`~gpustack.plan.manual`). Everything is read from the objects: what a
DaemonSet is (driver, toolkit, plugin) comes from the component label gpustack writes, how it
rolls from its update strategy; no table of profile change kinds, so a change nobody listed is
reported as what it does.
"""
