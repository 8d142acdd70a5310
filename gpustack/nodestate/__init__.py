"""The profile against its cluster: ``gpustack validate --state FILE|--kubectl``.

A profile states facts about the nodes it is for (their Kubernetes, OS, kernel, GPUs, container
runtime, whether a driver is already installed). The rules in :mod:`gpustack.profile.rules`
check that those facts agree with each other; the checks here check them against the nodes
themselves, read from the same ``kubectl get nodes,pods,daemonsets,events -A -o json`` state
``gpustack doctor`` reads (or an AICR snapshot, :mod:`.aicr`), so a profile whose driver image
is built for another OS, or whose runtime version is not the nodes', fails before the first
sync instead of on the node.

:mod:`.facts` reads one fact from one node (``None`` where the node does not say);
:mod:`.checks` holds one check per function; :mod:`.registry` names them; :mod:`.validate`
turns their findings into the checker's located issues.
"""
