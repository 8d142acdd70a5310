"""The ``gpustack`` command line: wiring only.

Each command turns options into calls of the library and results into output and exit codes.
User errors exit 1 (``click.ClickException``), usage errors exit 2, and expected failures never
print a traceback. Heavy modules (cdk8s, Node) are imported inside ``synth`` only, so that
``validate`` stays fast and Node-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpustack import __version__

if TYPE_CHECKING:
    from gpustack.profile.model import Profile
    from gpustack.synth.index import IndexEntry, OwnershipIndex
    from gpustack.synth.pipeline import Source
    from gpustack.synth.writer import SourcedCluster


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpustack")
def main() -> None:
    """Validate GPU stack profiles and synthesize their Kubernetes manifests."""


# --- validate: owned by the profile/validation work -------------------------------------------

DEFAULT_PROFILES = "profiles"


@main.command(short_help="Check profiles against the schema and the compatibility rules.")
@click.argument(
    "paths",
    nargs=-1,
    type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for machines, github for Actions annotations.",
)
def validate(paths: tuple[Path, ...], fmt: str) -> None:
    """Check profiles (files or folders, default: profiles/) against the schema and the
    compatibility rules. Exit 0 when all are valid, 1 when any is not, 2 on usage errors.

    Folders are searched for *.yaml/*.yml; names starting with "_" (bases for `extends`) are
    skipped, and so are Kubernetes manifests (each named on stderr). Colour follows the
    terminal, NO_COLOR and TERM=dumb.
    """
    import os
    import sys

    from gpustack.checker import check_paths, scan
    from gpustack.report import render

    if not paths:
        default = Path(DEFAULT_PROFILES)
        if not default.is_dir():
            raise click.UsageError(f"no PATH given and no {DEFAULT_PROFILES}/ folder here")
        paths = (default,)
    found = scan(list(paths))
    if not found.files and not found.unreadable:
        raise click.UsageError(f"no *.yaml profiles found in {', '.join(map(str, paths))}")
    result = check_paths(list(paths))
    for skipped in result.skipped:  # on stderr: stdout stays one report (json, annotations)
        click.echo(f"{skipped.file}: skipped: {skipped.what}", err=True)
    if result.skipped and not result.files_checked:
        raise click.UsageError(
            f"no profiles in {', '.join(map(str, paths))}: {_count(len(result.skipped), 'file')} "
            "skipped, none is a gpustack profile"
        )
    color = (
        fmt == "text"
        and sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM") != "dumb"
    )
    click.echo(render(result, fmt, color=color), nl=False, color=color)
    if not result.ok:
        sys.exit(1)


# --- init: a first profile ---------------------------------------------------------------------


def _products() -> list[str]:
    from gpustack.scaffold import products

    return products()


@main.command(short_help="Write a first profile for a cluster, and its schemas.")
@click.argument("name")
@click.option(
    "--product",
    type=click.Choice(_products()),
    required=True,
    help="GPU product on the nodes (as in gpus.product).",
)
@click.option(
    "--gpus-per-node",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="GPUs on each node.",
)
@click.option(
    "--example-gpus",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="GPUs the example job asks for (at most --gpus-per-node).",
)
@click.option(
    "--profiles",
    "profiles_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(DEFAULT_PROFILES),
    show_default=True,
    help="Folder to write NAME.yaml into; the schemas go to its parent's schemas/.",
)
def init(
    name: str, product: str, gpus_per_node: int, example_gpus: int, profiles_dir: Path
) -> None:
    """Write a first profile, PROFILES/NAME.yaml, for a cluster called NAME.

    It sets the GPU product, GPUs per node, the driver and one PyTorch example job (one GPU
    unless --example-gpus says more), and leaves
    everything else to the schema's defaults; it is validated before it is written, and an
    existing file is never replaced. The profile schemas are written beside PROFILES (in
    ../schemas/, where the editor modeline points) unless a file there is not gpustack's.
    """
    from gpustack.report import render_text
    from gpustack.scaffold import (
        ProfileExists,
        create_profile,
        profile_text,
        schema_ref,
        write_schemas,
    )

    target = profiles_dir / f"{name}.yaml"
    text = profile_text(name, product, gpus_per_node, schema_ref(profiles_dir), example_gpus)
    try:
        result = create_profile(target, text)
    except ProfileExists:
        raise click.ClickException(
            f"{target} exists; choose another NAME or edit that file"
        ) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror or exc}") from None
    if not result.ok:  # e.g. a NAME that is no DNS label
        report = render_text(result).rstrip()
        raise click.ClickException(f"the profile would not be valid:\n{report}")
    click.echo(f"wrote {target}")
    for done in write_schemas(profiles_dir.parent):
        if done.action == "kept":
            click.echo(f"kept {done.path} (not gpustack's schema; the modeline needs it)", err=True)
        elif done.action != "unchanged":
            click.echo(f"{done.action} {done.path}")
    click.echo(f"next: gpustack validate {profiles_dir} && gpustack synth")


# --- lint and doctor: the team's own workloads, and a cluster that shows no GPUs --------------


def _color(fmt: str) -> bool:
    import os
    import sys

    return (
        fmt == "text"
        and sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM") != "dumb"
    )


def _load_profile(path: Path) -> tuple[Profile, str]:
    """The validated profile at ``path`` and its display name; exit 1 with validate's report
    when it is not valid."""
    import sys

    from gpustack.checker import check_paths, display_path
    from gpustack.report import render_text

    result = check_paths([path])
    if not result.ok or len(result.profiles) != 1:
        click.echo(render_text(result), err=True, nl=False)
        sys.exit(1)
    return result.profiles[0].profile, display_path(path)


@main.command(short_help="Find GPU pitfalls in Kubernetes manifests (the team's own workloads).")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The cluster's profile: turns on the rules that compare with it.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for machines, github for Actions annotations.",
)
@click.option(
    "--disable",
    "disabled",
    multiple=True,
    metavar="RULE",
    help="Skip a rule by its ID (repeatable).",
)
def lint(
    paths: tuple[str, ...], profile_path: Path | None, fmt: str, disabled: tuple[str, ...]
) -> None:
    """Lint Kubernetes manifests (files, folders of *.yaml/*.yml, or - for stdin) for GPU
    pitfalls: Pod, Job, CronJob, Deployment, StatefulSet, DaemonSet, ReplicaSet, Kubeflow
    PyTorchJob/MPIJob and Ray RayCluster/RayJob pod templates. Exit 0 when clean, 1 on any
    finding (or an invalid profile), 2 on usage errors.

    Without --profile only the rules that hold on any cluster run; with it, the resources,
    capacity, taints, node labels, driver and runtime classes of the profile are checked too.
    """
    import sys

    from gpustack.lint.check import lint as run_lint
    from gpustack.lint.context import LintContext, from_profile, generic
    from gpustack.lint.registry import BY_ID, RULES
    from gpustack.lint.report import render

    unknown = sorted(set(disabled) - set(BY_ID))
    if unknown:
        raise click.UsageError(f"unknown rule {unknown[0]!r}; rules: {', '.join(BY_ID)}")
    ctx: LintContext = generic()
    if profile_path is not None:
        profile, shown = _load_profile(profile_path)
        ctx = from_profile(profile, shown)
    stdin = sys.stdin.read() if "-" in paths else None
    rules = [r for r in RULES if r.id not in disabled]
    try:
        result = run_lint(paths, ctx, stdin=stdin, rules=rules)
    except FileNotFoundError as exc:
        raise click.UsageError(f"no such file or folder: {exc.args[0]}") from None
    if result.files_checked == 0:
        raise click.UsageError(f"no *.yaml manifests found in {', '.join(paths)}")
    color = _color(fmt)
    click.echo(render(result, fmt, color=color), nl=False, color=color)
    if not result.ok:
        sys.exit(1)


@main.command(short_help="Explain why a cluster shows no GPUs or a GPU pod is Pending.")
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The cluster's profile.",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    help="Output of `kubectl get nodes,pods,daemonsets,events -A -o json` (- for stdin).",
)
@click.option("--kubectl", "use_kubectl", is_flag=True, help="Run kubectl to read the state.")
@click.option("--context", "kube_context", help="kubectl context (with --kubectl).")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def doctor(
    profile_path: Path,
    state_path: Path | None,
    use_kubectl: bool,
    kube_context: str | None,
    fmt: str,
) -> None:
    """Diagnose the GPU stack of a cluster from its state: per node (not selected, driver or
    toolkit not ready, device plugin missing or crash-looping, no allocatable GPUs, MIG layout
    not applied) and per Pending GPU pod (nodes with the resource, nodes excluded by taints or
    selectors, requests larger than any node). Exit 0 when healthy, 1 on any finding, 2 on
    usage errors. kubectl runs only with --kubectl (read-only: get/list).
    """
    import sys

    from gpustack.doctor import kubectl, state
    from gpustack.doctor.report import diagnose, render_json, render_text

    if (state_path is None) == (not use_kubectl):
        raise click.UsageError("give one of --state FILE or --kubectl")
    profile, _ = _load_profile(profile_path)
    try:
        if use_kubectl:
            extra = ["--context", kube_context] if kube_context else []
            text, source = kubectl.fetch(extra=extra), "kubectl"
        else:
            assert state_path is not None
            with click.open_file(str(state_path), encoding="utf-8") as f:
                text, source = f.read(), str(state_path)
        cluster = state.load(text, source)
    except (kubectl.KubectlError, state.StateError) as exc:
        raise click.ClickException(str(exc)) from None
    found = diagnose(cluster, profile)
    render = render_json if fmt == "json" else render_text
    click.echo(render(found, cluster), nl=False)
    if found:
        sys.exit(1)


# --- synth: owned by the constructs/synthesis work --------------------------------------------


@main.command(short_help="Synthesize profiles into GitOps-ready manifests under dist/.")
@click.argument(
    "paths",
    nargs=-1,
    type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path),
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dist"),
    show_default=True,
    help="Output folder; cluster folders go to OUT/clusters/<metadata.name>/.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 and list every file that is out of date.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace what gpustack did not write: folders it did not create, and files in its "
    "folders edited by hand (each is named in a warning).",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Delete the folders of clusters whose profile was deleted or renamed (a GitOps tool "
    "that prunes then uninstalls the stack from that cluster).",
)
@click.option(
    "--default-profile",
    is_flag=True,
    help="Synthesize the packaged default profile (without PATH and profiles/, only a folder "
    "holding no clusters of other profiles gets it).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, None),
    default=None,
    help="Processes synthesizing changed clusters in parallel (default: the CPU count).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but warnings and errors.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one document on stdout, per cluster its status and files.",
)
@click.option("--diff", is_flag=True, help="With --check: show a unified diff of each change.")
def synth(
    paths: tuple[Path, ...],
    out: Path,
    check: bool,
    force: bool,
    prune: bool,
    default_profile: bool,
    jobs: int | None,
    quiet: bool,
    fmt: str,
    diff: bool,
) -> None:
    """Synthesize the GPU stack of each profile (default: profiles/) into OUT.

    Every profile is validated first; if any has an issue, nothing is written. Each cluster
    folder is written aside and swapped in whole, so readers never see a half-written one, and
    files of removed components disappear. A cluster whose profile was deleted or renamed is
    removed only with --prune (without it the run lists the folders and writes nothing); clusters
    of existing profiles left out of PATHS are kept. Files edited by hand in gpustack's folders
    are named and kept unless --force. Without profiles/ and PATH, the packaged default profile
    is used if OUT holds no clusters of real profiles. A run waits for another one writing OUT.

    A cluster whose profile, bases and gpustack are unchanged since the run recorded in the
    index, and whose folder is exactly as written, is neither validated nor synthesized again.
    Exit status: 0 done (or up to date), 1 invalid input or refused, 2 usage error, 3 --check
    found OUT out of date.
    """
    import json
    import sys

    from gpustack.checker import check_paths, scan
    from gpustack.report import render_text
    from gpustack.synth.digest import generator_digest
    from gpustack.synth.errors import SynthError
    from gpustack.synth.fresh import fresh_clusters
    from gpustack.synth.index import index_path, read_index
    from gpustack.synth.parallel import default_jobs
    from gpustack.synth.pipeline import Source, synthesize_clusters
    from gpustack.synth.plan import read_plain
    from gpustack.synth.report import STALE, ProgressLine, check_json, unified_diffs, write_json
    from gpustack.synth.sources import resolve_inputs
    from gpustack.synth.writer import locked, record_gitops, run

    if default_profile and paths:
        raise click.UsageError("--default-profile synthesizes the packaged profile; give no PATH")
    if diff and not check:
        raise click.UsageError("--diff shows what --check finds; add --check")
    try:
        inputs = resolve_inputs(paths, out=out, default=default_profile)
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    if inputs.packaged and not default_profile and not quiet:
        click.echo(
            "gpustack: no profiles/ here; synthesizing the packaged default profile "
            "(`gpustack init <cluster> --product <GPU>` writes one of your own)",
            err=True,
        )

    def waiting() -> None:
        click.echo(f"gpustack: waiting for another gpustack synth writing {out}", err=True)

    try:
        with locked(out, shared=check, on_wait=waiting):
            index_bytes = read_plain(index_path(out))
            try:
                index = read_index(out)
            except SynthError:
                if not force:
                    raise
                index = None
            fresh = fresh_clusters(
                scan(list(inputs.paths)).files,
                out,
                index,
                generator_digest(),
                packaged=inputs.packaged,
            )
            result = check_paths(list(inputs.paths), skip=fresh.__contains__)
            if not result.ok:
                click.echo(render_text(result), err=True, nl=False)
                sys.exit(1)
            if not result.profiles and not fresh:
                raise click.UsageError(
                    f"no *.yaml profiles found in {', '.join(map(str, inputs.paths))}"
                )
            sources = [
                Source(p.path, p.profile, packaged=inputs.packaged, files=p.files)
                for p in result.profiles
            ]
            progress = ProgressLine(
                sys.stderr,
                len(sources),
                enabled=sys.stderr.isatty() and not quiet and fmt == "text",
            )
            try:
                clusters = (
                    synthesize_clusters(sources, out, jobs=jobs or default_jobs(), on_done=progress)
                    if sources
                    else []
                )
            finally:
                progress.close()
            kept = {f.name: f.entry for f in fresh.values()}
            delivery = _gitops_files(
                sources, clusters, kept, index, out, check=check, force=force, prune=prune
            )
            done = run(
                out,
                clusters,
                check=check,
                force=force,
                prune=prune,
                kept=kept,
                index_bytes=index_bytes,
            )
            gitops = _gitops(delivery.files, out, check=check, force=force, prune=prune)
            if not check and delivery.fleet is not None:
                record_gitops(out, delivery.fleet)
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    plan = done.plan
    if check:
        differences = [(d.kind, d.path) for d in done.differences] + gitops
        if fmt == "json":
            click.echo(json.dumps(check_json(plan, done.differences, gitops), indent=2))
        elif not quiet:
            for kind, path in differences:
                click.echo(f"{kind}: {path}")
        if diff:
            wanted = {
                plan.cluster_dir(sc.output.name) / f.path: f.content
                for sc in plan.write
                for f in sc.output.files
            }
            if delivery.files is not None:
                from gpustack.gitops.objects import GITOPS_DIR

                wanted.update((out / GITOPS_DIR / r, c) for r, c in delivery.files.items())
            click.echo(unified_diffs(differences, wanted), nl=False)
        if differences:
            click.echo(
                f"Error: {out} is out of date ({_count(len(differences), 'file')}); "
                "run `gpustack synth` to update it",
                err=True,
            )
            sys.exit(STALE)
        if fmt == "text" and not quiet:
            click.echo(
                f"{out} is up to date ({_count(len(plan.write) + len(plan.kept), 'cluster')})"
            )
        return
    summary = done.summary
    assert summary is not None
    for path in plan.overwrites:
        click.echo(f"gpustack: warning: overwrote {path}, edited by hand (--force)", err=True)
    if fmt == "json":
        doc = write_json(plan, summary.written, summary.unchanged, summary.removed, gitops)
        click.echo(json.dumps(doc, indent=2))
        return
    if quiet:
        return
    for name in summary.written:
        click.echo(f"wrote {plan.cluster_dir(name)}")
    for name in summary.removed:
        click.echo(f"removed {plan.cluster_dir(name)}")
    for kind, path in gitops:
        click.echo(f"{kind} {path}")
    click.echo(
        f"{out}: {_count(len(summary.written), 'cluster')} written, "
        f"{len(summary.unchanged)} unchanged, {len(summary.removed)} removed"
    )


@dataclass(frozen=True)
class _Delivery:
    """``<out>/gitops/``'s files (``None``: leave the folder alone) and the fleet digest to
    record once they are written (``None``: none)."""

    files: dict[str, bytes] | None
    fleet: str | None = None


def _gitops_files(
    sources: Sequence[Source],
    clusters: Sequence[SourcedCluster],
    kept: Mapping[str, IndexEntry],
    index: OwnershipIndex | None,
    out: Path,
    *,
    check: bool,
    force: bool,
    prune: bool,
) -> _Delivery:
    """The files of ``<out>/gitops/`` (see :mod:`gpustack.gitops`), refused before anything is
    written if they need ``--force`` or ``--prune``; ``None`` when this run must leave the folder
    alone: only a run covering every cluster of the output folder (whose profile still exists)
    touches it, since the ApplicationSet lists the whole fleet. When every delivered cluster is
    as it was when the folder was last generated (the fleet digest in the index) and the folder
    holds what gpustack wrote, nothing is computed: its files can't have changed."""
    from gpustack.checker import check_paths
    from gpustack.gitops import output
    from gpustack.gitops.objects import GITOPS_DIR, Delivered, gitops_files
    from gpustack.synth.digest import fleet_digest, generator_digest
    from gpustack.synth.fresh import kept_output, ref_path
    from gpustack.synth.index import profile_exists
    from gpustack.synth.plan import digests_of

    produced = {c.output.name for c in clusters} | set(kept)
    left_out = sorted(
        name
        for name, entry in (index.clusters.items() if index else ())
        if name not in produced and profile_exists(entry.profile, out)
    )
    if left_out:
        click.echo(
            f"gpustack: {out / GITOPS_DIR} not updated: this run leaves out "
            f"{', '.join(left_out[:3])}{', ...' if len(left_out) > 3 else ''} (synthesize all "
            "profiles to update it)",
            err=True,
        )
        return _Delivery(None)
    delivered = [(c.output.name, c.digest) for c in clusters if c.delivery]
    delivered += [(n, e.digest) for n, e in kept.items() if e.delivery]
    fleet = (
        fleet_digest(generator_digest(), [(n, d) for n, d in delivered if d is not None])
        if all(d is not None for _, d in delivered)
        else None
    )
    if fleet is not None and index is not None and index.gitops == fleet:
        record = read_plain_json(out / ".gpustack" / output.RECORD)
        if digests_of(out / GITOPS_DIR) == record:
            return _Delivery(None)
    pairs = [Delivered(s.profile, c.output) for s, c in zip(sources, clusters, strict=True)]
    again = [(n, e) for n, e in sorted(kept.items()) if e.delivery]
    if again:  # fresh clusters that deliver: read their profiles and folders back
        loaded = check_paths([ref_path(e.profile, out) for _, e in again])
        if not loaded.ok or len(loaded.profiles) != len(again):
            raise click.ClickException("profiles changed while synth was running; run again")
        pairs += [
            Delivered(p.profile, kept_output(out, n))
            for (n, _), p in zip(again, loaded.profiles, strict=True)
        ]
    files = gitops_files(pairs)
    if not check:
        output.confirm(out, output.compare(out, files), force=force, prune=prune)
    return _Delivery(files, fleet)


def read_plain_json(path: Path) -> dict[str, str]:
    """The ``files`` of gpustack's record of ``<out>/gitops/`` (empty when there is none)."""
    import json

    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return dict(files) if isinstance(files, dict) else {}


def _gitops(
    files: dict[str, bytes] | None, out: Path, *, check: bool, force: bool, prune: bool
) -> list[tuple[str, Path]]:
    """Write or compare ``<out>/gitops/``: ``(what, path)`` pairs, the differences with
    ``check``, else what was written."""
    from gpustack.gitops import output
    from gpustack.gitops.objects import GITOPS_DIR
    from gpustack.synth.writer import locked

    if files is None:
        return []
    folder = out / GITOPS_DIR
    with locked(out, shared=check):
        change = (
            output.compare(out, files)
            if check
            else output.write(out, files, force=force, prune=prune)
        )
    if check:
        return [
            *(("missing", folder / r) for r in change.added),
            *(("differs", folder / r) for r in change.changed),
            *(("extra", folder / r) for r in change.removed),
        ]
    if change.removed and not files:
        return [("removed", folder)]
    return [("wrote", folder)] if change.stale else []


# --- template: one cluster's manifests on stdout --------------------------------------------


@main.command(short_help="Print one profile's manifests as a YAML stream, in install order.")
@click.argument(
    "profile", type=click.Path(exists=True, file_okay=True, dir_okay=False, path_type=Path)
)
def template(profile: Path) -> None:
    """Print the manifests `gpustack synth` writes for PROFILE's cluster folder as one YAML
    stream on stdout, in the order of its kustomization.yaml (install order), writing nothing.

    For pipes (`| kubeconform`, `| kubectl diff -f -`) and for rendering inside Argo CD. The
    profile is validated first: on an issue the findings go to stderr and the exit status is 1.
    """
    import sys

    from gpustack.checker import check_paths
    from gpustack.report import render_text
    from gpustack.synth.errors import SynthError
    from gpustack.synth.pipeline import Source, synthesize_clusters
    from gpustack.synth.stream import yaml_stream

    result = check_paths([profile])
    if not result.ok or len(result.profiles) != 1:
        click.echo(render_text(result), err=True, nl=False)
        sys.exit(1)
    (loaded,) = result.profiles
    try:
        (cluster,) = synthesize_clusters([Source(loaded.path, loaded.profile)], Path("dist"))
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    sys.stdout.buffer.write(yaml_stream(cluster.output))
    sys.stdout.buffer.flush()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
