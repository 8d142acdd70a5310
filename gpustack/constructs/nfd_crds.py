"""Node Feature Discovery's CRDs (``nfd.k8s-sigs.io/v1alpha1``: NodeFeature, NodeFeatureRule,
NodeFeatureGroup), written as data.

Why here and not as upstream YAML: gpustack builds every object from code. The schemas below
state the structure of NFD v0.19.0's (unchanged since v0.18.2)
``deployment/base/nfd-crds/nfd-api-crds.yaml`` (types,
required fields, the match operators, list-map keys); upstream's field descriptions are left out
(they are documentation, not validation). The tests validate gpustack's NodeFeatureRule (for a
cluster's own NFD) against the schema synthesized here, so both must agree.
"""

from __future__ import annotations

from typing import Any, Final

from gpustack.profile.prerequisites import NFD_GROUP, NFD_VERSION

GROUP: Final = NFD_GROUP
VERSION: Final = NFD_VERSION

Schema = dict[str, Any]

#: The operators a feature match expression may use.
MATCH_OPS: Final = (
    "In", "NotIn", "InRegexp", "Exists", "DoesNotExist",
    "Gt", "Ge", "Lt", "Le", "GtLt", "GeLe", "IsTrue", "IsFalse",
)  # fmt: skip


def _str() -> Schema:
    return {"type": "string"}


def _map(values: Schema) -> Schema:
    return {"type": "object", "additionalProperties": values}


def _obj(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    out: Schema = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def _array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def _match_expression() -> Schema:
    return _obj(
        {
            "op": {"type": "string", "enum": list(MATCH_OPS)},
            "type": _str(),
            "value": _array(_str()),
        },
        ("op",),
    )


def _feature_matcher() -> Schema:
    return _obj(
        {
            "feature": _str(),
            "matchExpressions": _map(_match_expression()),
            "matchName": _match_expression(),
        },
        ("feature",),
    )


def _match_any() -> Schema:
    return _array(_obj({"matchFeatures": _array(_feature_matcher())}, ("matchFeatures",)))


def _root(spec: Schema, status: Schema | None = None) -> Schema:
    properties: dict[str, Schema] = {
        "apiVersion": _str(),
        "kind": _str(),
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if status is not None:
        properties["status"] = status
    return _obj(properties, ("spec",))


NODE_FEATURE: Final = _root(
    _obj(
        {
            "features": _obj(
                {
                    "attributes": _map(_obj({"elements": _map(_str())}, ("elements",))),
                    "flags": _map(_obj({"elements": _map({"type": "object"})}, ("elements",))),
                    "instances": _map(
                        _obj(
                            {
                                "elements": _array(
                                    _obj({"attributes": _map(_str())}, ("attributes",))
                                )
                            },
                            ("elements",),
                        )
                    ),
                }
            ),
            "labels": _map(_str()),
        }
    )
)

NODE_FEATURE_RULE: Final = _root(
    _obj(
        {
            "rules": _array(
                _obj(
                    {
                        "annotations": _map(_str()),
                        "extendedResources": _map(_str()),
                        "labels": _map(_str()),
                        "labelsTemplate": _str(),
                        "matchAny": _match_any(),
                        "matchFeatures": _array(_feature_matcher()),
                        "name": _str(),
                        "taints": _array(
                            _obj(
                                {
                                    "effect": _str(),
                                    "key": _str(),
                                    "timeAdded": {"type": "string", "format": "date-time"},
                                    "value": _str(),
                                },
                                ("effect", "key"),
                            )
                        ),
                        "vars": _map(_str()),
                        "varsTemplate": _str(),
                    },
                    ("name",),
                )
            )
        },
        ("rules",),
    )
)

NODE_FEATURE_GROUP: Final = _root(
    _obj(
        {
            "featureGroupRules": _array(
                _obj(
                    {
                        "matchAny": _match_any(),
                        "matchFeatures": _array(_feature_matcher()),
                        "name": _str(),
                        "vars": _map(_str()),
                        "varsTemplate": _str(),
                    },
                    ("name",),
                )
            )
        },
        ("featureGroupRules",),
    ),
    status=_obj(
        {
            "nodes": {
                **_array(_obj({"name": _str()}, ("name",))),
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map",
            }
        }
    ),
)

#: (kind, plural, scope, short names, schema, status subresource) of each CRD.
CRDS: Final = (
    ("NodeFeature", "nodefeatures", "Namespaced", (), NODE_FEATURE, False),
    ("NodeFeatureGroup", "nodefeaturegroups", "Namespaced", ("nfg",), NODE_FEATURE_GROUP, True),
    ("NodeFeatureRule", "nodefeaturerules", "Cluster", ("nfr",), NODE_FEATURE_RULE, False),
)
