"""What a GPU daemon's init container waits for: a readiness file another operand leaves
(:mod:`gpustack.profile.readiness` decides which), and an image with a shell to wait in.

Values only, no objects: the props of every component resolve their waits here from the profile,
and :meth:`gpustack.constructs.node_daemonset.NodeDaemonSet.wait_for` makes the container.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile import readiness
from gpustack.profile.model import Profile


@dataclass(frozen=True)
class WaitFor:
    """An init container that blocks until a readiness file exists, using an image with a shell."""

    file: str
    image: str
    image_pull_policy: str

    def script(self, what: str | None = None) -> str:
        """The sh loop that polls every 5 s until the file exists, saying it waits for ``what``
        (by default the file)."""
        return (
            f'until [ -f "{self.file}" ]; do echo "waiting for {what or self.file}"; sleep 5; done'
        )

    @classmethod
    def on(cls, profile: Profile, file: str | None) -> WaitFor | None:
        """A wait for ``file`` (``None``: no wait) in an image gpustack already pulls onto the
        node and that has a shell: the toolkit's, else the driver's."""
        if file is None:
            return None
        section = profile.toolkit if profile.toolkit.enabled else profile.driver
        return cls(file, section.image_ref(), section.image_pull_policy)


def gpu_wait(profile: Profile) -> WaitFor | None:
    """The readiness file a GPU client waits for: ``toolkit-ready`` (``driver-ready`` without
    gpustack's toolkit, nothing when gpustack runs neither), as the device plugin does.

    ``toolkit-ready`` is written only by the device plugin pod's runtime check (a real plugin,
    not the simulated backend); without that pod the clients wait for the toolkit's own
    ``toolkit-configured`` instead, or they would wait forever (issue 20, item 2: a cluster that
    allocates GPUs with a DRA driver and sets ``devicePlugin.enabled: false``). Which file is
    :func:`gpustack.profile.readiness.gpu_client_wait`'s decision; this adds the image.
    """
    # the one decision; the graph reads it too
    return WaitFor.on(profile, readiness.gpu_client_wait(profile))
