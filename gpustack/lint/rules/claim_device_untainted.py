"""``claim-device-untainted``: a pod's claim can get a device that no untolerated taint keeps
from it (device taints, KEP-5055).

A device tainted ``NoSchedule`` or ``NoExecute`` (by its driver in the ResourceSlice, or by a
DeviceTaintRule that selects it) is given only to a request that tolerates the taint
(``tolerations`` beside ``deviceClassName``; :mod:`gpustack.kube.device_taints` has the API's
words). When every device the request could get is so tainted, the pod stays Pending. The rule
judges only what the linted files show, and stays quiet where it cannot tell:

- with ResourceSlices of the class's driver among the files, every device of that driver must be
  kept from the request (all of the driver's devices, not only the class's: a device the class
  would not select anyway is no way out, so the verdict holds whatever the class selects);
- without them, only a DeviceTaintRule that taints every device of the driver (no pool or device
  in its selector) decides, since the cluster's pools are unknown;
- a request with ``firstAvailable`` is reported only when every alternative is kept out; a class
  whose driver is not known (defined nowhere, or with selectors that name no one driver) is not
  judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.claims import Choice, Defined, PodClaim, class_kind, pod_claims
from gpustack.kube.device_taints import DeviceTaint, blocking, said, untolerated
from gpustack.kube.pods import PodSite
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import namespace_of
from gpustack.profile.finding import Finding

#: How many kept-out devices a message lists before it counts the rest.
_SHOWN = 3


_Kept = tuple[str, list[tuple[DeviceTaint, str]]]
"""(which devices, each taint that keeps them out with whose it is)."""


def _kept_out(choice: Choice, defined: Defined) -> list[_Kept] | None:
    """Why each device ``choice`` could get is kept from it; ``None`` when one is not, or when
    the files do not tell."""
    cls = choice.device_class
    kind = class_kind(cls, defined) if cls is not None else None
    if kind is None:
        return None
    devices = [d for d in defined.devices if d.driver == kind.driver]
    if not devices:
        ruled: list[_Kept] = [
            (f"every device of {kind.driver}", [(t, f"DeviceTaintRule {r.name}")])
            for r in defined.taint_rules
            if r.covers(kind.driver)
            for t in untolerated([r.taint], choice.tolerations)
        ]
        return ruled[:1] or None
    out = []
    for device in devices:
        why = blocking(device, defined.taint_rules, choice.tolerations)
        if not why:
            return None
        out.append((f"{device.pool}/{device.name}", why))
    return out


def _finding(site: PodSite, claim: PodClaim, request: str, kept: list[_Kept]) -> Finding:
    rest = len(kept) - _SHOWN
    shown = "; ".join(f"{where}: {said(why)}" for where, why in kept[:_SHOWN])
    shown += f"; {rest} more" if rest > 0 else ""
    keys = ", ".join(dict.fromkeys(t.key for _, why in kept for t, _ in why))
    return Finding(
        claim.path,
        f"{site.where} uses {claim.kind} {claim.target}, whose request {request} can get no "
        f"device: every device it could get carries a taint the request does not tolerate "
        f"({shown}), so the pod stays Pending",
        f"if it may run on such devices, add to the request tolerations for {keys} "
        "({key: <key>, operator: Exists}); else remove the taint (a DeviceTaintRule: kubectl "
        "delete devicetaintrule <name>)",
    )


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    defined = ctx.defined
    if not defined.devices and not defined.taint_rules:
        return
    for claim in pod_claims(site.spec, site.path):
        if claim.kind is None or claim.target is None:
            continue
        named = defined.find(claim.kind, claim.target, namespace_of(site))
        requests: dict[str, list[list[_Kept] | None]] = {}
        for choice in named.choices if named is not None else ():
            top = choice.request.split("/", 1)[0]
            requests.setdefault(top, []).append(_kept_out(choice, defined))
        for request, verdicts in requests.items():
            if all(v is not None for v in verdicts):
                yield _finding(site, claim, request, [w for v in verdicts if v for w in v])
