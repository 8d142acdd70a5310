"""The node-state check of ComputeDomains' IMEX daemons: who runs ``nvidia-imex`` on the host.

Facts (kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, ``site/content/docs/prerequisites.md``
"ComputeDomains additional prerequisites" and "Host-managed IMEX"):

- by default the driver runs one ``nvidia-imex`` daemon per ComputeDomain, and on every GPU node
  where the ``nvidia-imex`` packages are installed the ``nvidia-imex.service`` unit must be
  disabled and masked (``systemctl disable --now nvidia-imex.service && systemctl mask
  nvidia-imex.service``);
- with ``imex.mode=hostManaged`` it is the other way round: ``nvidia-imex.service`` must be
  installed, configured (``IMEX_CMD_ENABLED=1``, ``IMEX_CMD_UNIX_DOMAIN_PATH``) and running on
  every participating node.

Only a state that records the unit tells (an AICR snapshot whose agent collected
``nvidia-imex.service``: :func:`gpustack.nodestate.facts.systemd_unit`); other nodes are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.nodes import Nodes
from gpustack.kube.state import JSON, labels
from gpustack.nodestate import facts
from gpustack.nodestate.mismatch import mismatch
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

UNIT = "nvidia-imex.service"
MASK = f"systemctl disable --now {UNIT} && systemctl mask {UNIT}"


def _in_pool(p: Profile, node: JSON) -> bool:
    """The node runs the ComputeDomain plugin (``dra.nodeSelector``, where set)."""
    return dict(p.dra.node_selector).items() <= labels(node).items()


def _state(node: JSON) -> str | None:
    found = facts.systemd_unit(node, UNIT)
    return None if found is None else "/".join(x for x in found if x)


def _not_masked(state: object) -> bool:
    active, _, file_state = str(state).partition("/")
    return active == "active" or file_state not in ("", "masked")


def imex_service_matches_mode(p: Profile, n: Nodes) -> Iterator[Finding]:
    dra = p.dra
    if not (dra.enabled and dra.compute_domains):
        return
    nodes = [node for node in n.selected if _in_pool(p, node)]
    if dra.imex_mode == "hostManaged":
        yield from mismatch(
            ("dra", "imexMode"),
            nodes,
            _state,
            lambda v: not str(v).startswith("active"),
            lambda v: f"{UNIT} {v}",
            f"dra.imexMode is hostManaged: the host's {UNIT} runs the IMEX daemon and must be"
            " running",
            f"install, configure (IMEX_CMD_ENABLED=1, IMEX_CMD_UNIX_DOMAIN_PATH) and start {UNIT}"
            " on those nodes, or set dra.imexMode: driverManaged",
        )
        return
    yield from mismatch(
        ("dra", "imexMode"),
        nodes,
        _state,
        _not_masked,
        lambda v: f"{UNIT} {v}",
        f"dra.imexMode is driverManaged: the driver runs the IMEX daemons and the host's {UNIT}"
        " must be masked",
        f"mask it on those nodes ({MASK}), or set dra.imexMode: hostManaged with"
        " dra.featureGates.HostManagedIMEXDaemon: true to use the host's",
    )
