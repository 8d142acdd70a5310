"""Where a profile is inside the repository Argo CD clones: what ``render: plugin`` needs.

An Application that renders a cluster with the plugin names the folder holding its profile as
``source.path``, relative to the repository's root, and the file as the ``profile`` parameter.
The root is found from where the files are, never from the working directory or how a path was
spelled (everything is resolved first), in this order:

1. the nearest folder above the profile that holds ``.git``: the checkout itself (the same
   marker the profile loader uses for the repository's top);
2. without one (an exported archive, a build context without ``.git``): the output folder minus
   ``gitops.path``, which says where the output folder is inside the repository.

Anything else is a :class:`SynthError` in one line, raised before ``synth`` writes anything.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError


def _checkout(file: Path) -> Path | None:
    for folder in file.parents:
        if (folder / ".git").exists():
            return folder
    return None


def _output_root(profile: Profile, out: Path) -> Path:
    name, where = profile.metadata.name, profile.gitops.path
    parts = PurePosixPath(where).parts
    resolved = out.resolve()
    if len(resolved.parts) <= len(parts) or resolved.parts[-len(parts) :] != parts:
        raise SynthError(
            f"cluster {name!r} is rendered by Argo CD's plugin, which needs its profile's path in "
            f"the repository, but no folder above the profile holds .git and the output folder "
            f"{out} does not end in gitops.path ({where!r}); run synth in the git checkout, or "
            "set gitops.path to the output folder's path inside the repository"
        )
    return resolved.parents[len(parts) - 1]


def profile_in_repository(profile: Profile, file: Path, out: Path) -> str:
    """The profile ``file``'s path from the repository root (POSIX), as Argo CD sees it."""
    resolved = file.resolve()
    checkout = _checkout(resolved)
    root = checkout if checkout is not None else _output_root(profile, out)
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        raise SynthError(
            f"{file}: cluster {profile.metadata.name!r} is rendered by Argo CD's plugin from this "
            f"profile, but it is outside the repository ({root}: the output folder {out} minus "
            "gitops.path); keep the profiles in the repository Argo CD reads"
        ) from None


def output_location(out: Path) -> str | None:
    """Where the output folder is inside its git checkout (POSIX, from the checkout's root);
    ``None`` outside a checkout. Part of the fleet digest: the ApplicationSet's paths depend on
    it, so moving the checkout (into a monorepo, say) makes ``<out>/gitops/`` stale."""
    resolved = out.resolve()
    checkout = _checkout(resolved / "_")
    return None if checkout is None else resolved.relative_to(checkout).as_posix()


def check_output_path(profile: Profile, out: Path) -> None:
    """Refuse a ``gitops.path`` that is not where the output folder is in its checkout: the
    Applications and Kustomizations would name folders Argo CD and Flux do not find."""
    where = output_location(out)
    if where is None or where == profile.gitops.path:
        return
    raise SynthError(
        f"cluster {profile.metadata.name!r}: gitops.path is {profile.gitops.path!r}, but the "
        f"output folder {out} is {where!r} in its git checkout, so Argo CD and Flux would look "
        f"for the cluster folders in the wrong place; set gitops.path: {where}"
    )
