"""What lint makes of a CEL selector against what NVIDIA's driver publishes: each read that no
device of the class can satisfy (:class:`Misread`), with how to fix it.

The floor (:mod:`gpustack.kube.claims`) reads the facts: which kind of device a class asks for
(:func:`~gpustack.kube.claims.class_kind`) and what that kind publishes
(:func:`~gpustack.kube.claims.published`). Judging a selector against them, and wording the
finding and its hint, is lint's (``device-attribute-known``), so it lives here. Only NVIDIA's
domains are judged: another domain is not lint's to know, and :func:`looks_nvidia` (which
``device-class-known`` asks too) tells which names are meant as NVIDIA's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpustack import dra_upstream as upstream
from gpustack.kube import cel
from gpustack.kube.claims import (
    STANDARD_DOMAIN,
    DeviceKind,
    Published,
    kind_of,
    published,
)
from gpustack.kube.suggest import distance, nearest

#: Edits within which a name is taken for a misspelling of one of NVIDIA's.
_TYPO_EDITS = 3


def looks_nvidia(name: str, known: Iterable[str] = ()) -> bool:
    """A DeviceClass or attribute domain meant as NVIDIA's: one naming NVIDIA, or within a few
    edits of one of ``known`` (NVIDIA's names: ``gpu.nvdia.com``). Another vendor's (AMD's
    ``gpu.amd.com``, a NIC, an FPGA) is not lint's to judge."""
    if "nvidia" in name.lower():
        return True
    return any(distance(name.lower(), k.lower()) <= _TYPO_EDITS for k in known)


#: The drivers whose attribute domains are judged, whatever the class's driver.
_NVIDIA_DRIVERS = (upstream.GPU_DRIVER, upstream.COMPUTE_DOMAIN_DRIVER)

#: The value kind each literal kind may be compared with (an int attribute equals a double of
#: the same value in CEL).
_FITS = {
    "string": {"string"},
    "int": {"int", "double"},
    "bool": {"bool"},
    "version": {"version"},
}
_ARTICLE = {
    "string": "a string",
    "int": "an int",
    "bool": "a bool",
    "version": "a version",
    "double": "a double",
}
_HOW = {
    "string": "a string such as 'x'",
    "int": "an integer",
    "bool": "true or false",
    "version": "semver('1.2.3') (a version compares with a version, e.g. .isGreaterThan())",
}


@dataclass(frozen=True)
class Misread:
    """A selector's read that no device of the kind can satisfy: what and how to fix it."""

    ref: cel.Ref
    message: str
    hint: str


def misreads(expr: str, kind: DeviceKind, pub: Published) -> Iterator[Misread]:
    """Reads of ``expr`` that ``pub`` devices do not publish, or compare a value of the wrong
    kind. Only NVIDIA's domains are judged (another domain is not lint's to know)."""
    judged = {kind.driver, STANDARD_DOMAIN, *_NVIDIA_DRIVERS}
    for ref in cel.refs(expr):
        if ref.domain not in judged and not looks_nvidia(ref.domain, judged):
            continue
        if ref.field == "capacity":
            if not pub.has_capacity(ref.qualified):
                known = sorted(c.rpartition("/")[2] for c in pub.capacities)
                yield _unknown(ref, kind, pub, known, "capacity")
            elif ref.compared is not None:
                yield Misread(
                    ref,
                    f"{ref.show()} is a quantity, compared with {ref.compared.text}: a quantity "
                    "never equals or orders against a literal, so no device matches",
                    "compare with .compareTo(quantity('40Gi')) >= 0",
                )
            continue
        have = pub.attributes.get(ref.qualified)
        if have is None:
            known = sorted(_local(q, ref.domain) for q in pub.attributes if _in(q, ref.domain))
            yield _unknown(ref, kind, pub, known, "attribute")
        elif ref.compared is not None and ref.compared.kind not in _FITS[have]:
            yield Misread(
                ref,
                f"{ref.show()} is a {have}, compared with {ref.compared.text} "
                f"({_ARTICLE[ref.compared.kind]}), so no device matches",
                f"compare it with {_HOW[have]}",
            )


def _in(qualified: str, domain: str) -> bool:
    return qualified.rpartition("/")[0] == domain


def _local(qualified: str, domain: str) -> str:
    return qualified.removeprefix(f"{domain}/")


def _elsewhere(ref: cel.Ref, kind: DeviceKind) -> str | None:
    """The DeviceClass whose devices publish ``ref`` when the class asked for does not
    (``profile`` is a MIG device's, not a whole GPU's)."""
    for c in upstream.DEVICE_CLASSES:
        other = kind_of([c.cel])
        pub = published(other) if other is not None and other != kind else None
        if pub is None:
            continue
        table = pub.attributes if ref.field == "attributes" else pub.capacities
        if ref.qualified in table:
            return c.name
    return None


def _unknown(
    ref: cel.Ref, kind: DeviceKind, pub: Published, known: list[str], what: str
) -> Misread:
    other = _elsewhere(ref, kind)
    if other is not None:
        hint = f"{ref.name} is published for the devices of DeviceClass {other}: ask for that class"
    elif known:
        prefixed = [k for k in known if k.lower().startswith(ref.name.lower())]
        close = prefixed[0] if prefixed else nearest(ref.name, known)
        near = prefixed or distance(ref.name.lower(), close.lower()) <= 3
        guess = f"did you mean {close}? " if near else ""
        hint = f"{guess}{pub.what}s publish {', '.join(known)}"
    else:
        domains = sorted({q.rpartition("/")[0] for q in pub.attributes})
        hint = f"{pub.what}s of {kind.driver} publish {what}s under {', '.join(domains)} only"
    return Misread(
        ref,
        f"{ref.show()} is no {what} that NVIDIA's driver publishes for a {pub.what}, so the "
        "selector never matches (a missing attribute is a CEL runtime error)",
        hint,
    )
