"""The label and annotation keys gpustack both writes and reads, in one table.

The constructs write them on every object of the stack; ``doctor`` finds the stack's pods and
DaemonSets by them, ``accept`` labels and pins its Jobs with them, ``nodestate`` and the
conformance tables read the node roles. Each key was restated in the modules that used it, so
a writer could change one and the reader keep looking for the old spelling: here there is one
spelling, imported by writers and readers alike. Keys only one module uses (an acceptance Job's
own labels, a checksum annotation) stay next to it.
"""

from __future__ import annotations

from typing import Final

from gpustack.profile import components

#: Kubernetes' recommended labels (kubernetes.io/docs/concepts/overview/working-with-objects/
#: common-labels): selectors use only name and component, never the version.
NAME_LABEL: Final = "app.kubernetes.io/name"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
VERSION_LABEL: Final = "app.kubernetes.io/version"
PART_OF_LABEL: Final = "app.kubernetes.io/part-of"
MANAGED_BY_LABEL: Final = "app.kubernetes.io/managed-by"
#: The :data:`PART_OF_LABEL` value of every object gpustack writes (and looks for).
PART_OF: Final = "gpustack"

#: The label the kubelet sets to the node's hostname (pods are pinned and spread by it).
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
#: The control-plane node role (a label, and the key of the taint kubeadm puts on those nodes).
CONTROL_PLANE: Final = "node-role.kubernetes.io/control-plane"
#: Annotation on a node an AICR snapshot describes: the node its agent ran on, selected by
#: construction (written by :mod:`gpustack.nodestate.aicr`, read by :class:`~gpustack.kube.nodes.
#: Nodes`).
ASSUMED_SELECTED: Final = "gpustack.dev/assumed-selected"

#: :data:`COMPONENT_LABEL` values of the components whose pods change what a node does: the
#: constructs write them, ``plan`` tells by them what a changed DaemonSet does to its nodes. Read
#: from the component registry by profile section, so the registry row alone spells each name.
_OF_SECTION: Final = {c.section: c.name for c in components.REGISTRY if c.section}
DRIVER_COMPONENT: Final = _OF_SECTION["driver"]
TOOLKIT_COMPONENT: Final = _OF_SECTION["toolkit"]
DEVICE_PLUGIN_COMPONENT: Final = _OF_SECTION["device_plugin"]
DRA_DRIVER_COMPONENT: Final = _OF_SECTION["dra"]
MIG_MANAGER_COMPONENT: Final = _OF_SECTION["mig_manager"]
#: The driver pod's environment variable holding the hash of what decides the installed driver
#: (version, module type, RDMA, its scripts): the driver manager reinstalls, and so evicts the
#: node's GPU pods, when it differs from the installed one's.
DRIVER_DIGEST_ENV: Final = "DRIVER_CONFIG_DIGEST"
