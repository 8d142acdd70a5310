"""The ValidatingAdmissionPolicy that lets each DRA kubelet plugin write only its own node's
ResourceSlices (NVIDIA's chart, ``validatingadmissionpolicy.yaml``).

RBAC cannot say "this node's": the plugins of all nodes share one ServiceAccount, so its grant
covers every ResourceSlice. The policy reads the node from the token's
``authentication.kubernetes.io/node-name`` extra (a bound token of a pod carries the node it runs
on) and denies a write to a slice of another node, so a compromised plugin cannot advertise or
withdraw another node's devices.
"""

from __future__ import annotations

from typing import Any


def slice_policy(name: str, user: str) -> dict[str, Any]:
    """The policy's body: ``user`` (the plugin's ServiceAccount) may create, update and delete
    only the ResourceSlices of the node its token names."""
    target = '(request.operation == "DELETE" ? oldObject : object).spec'
    return {
        "spec": {
            "failurePolicy": "Fail",
            "matchConditions": [
                {
                    "name": "isKubeletPlugin",
                    "expression": f'request.userInfo.username == "{user}"',
                }
            ],
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["resource.k8s.io"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": ["resourceslices"],
                    }
                ]
            },
            "variables": [
                {
                    "name": "userNodeName",
                    "expression": "request.userInfo.extra[?'authentication.kubernetes.io"
                    "/node-name'][0].orValue('')",
                },
                {"name": "objectNodeName", "expression": f'{target}.?nodeName.orValue("")'},
            ],
            "validations": [
                {
                    "expression": 'variables.userNodeName != ""',
                    "message": "the DRA kubelet plugin's token names no node",
                },
                {
                    "expression": "variables.userNodeName == variables.objectNodeName",
                    "messageExpression": '"the DRA kubelet plugin on node " + '
                    "variables.userNodeName + \" may write only that node's"
                    ' ResourceSlices"',
                },
            ],
        }
    }


def slice_policy_binding(name: str) -> dict[str, Any]:
    """The binding's body: the policy ``name`` denies what it refuses."""
    return {"spec": {"policyName": name, "validationActions": ["Deny"]}}
