"""``gpustack synth``: profiles to GitOps-ready manifests under ``dist/``."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli import main
from gpustack.cli.common import count


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

    from gpustack.checker import check_paths
    from gpustack.gitops.delivery import delivery_files, write_or_compare
    from gpustack.report import render_text
    from gpustack.scan import scan
    from gpustack.synth.digest import generator_digest
    from gpustack.synth.errors import SynthError
    from gpustack.synth.fresh import fresh_clusters
    from gpustack.synth.index import index_path, read_index
    from gpustack.synth.parallel import default_jobs, prepare_to_synthesize
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
                on_stale=lambda n: prepare_to_synthesize(n, jobs or default_jobs()),
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
            delivery = delivery_files(
                sources, clusters, kept, index, out, check=check, force=force, prune=prune
            )
            if delivery.note:
                click.echo(delivery.note, err=True)
            done = run(
                out,
                clusters,
                check=check,
                force=force,
                prune=prune,
                kept=kept,
                index_bytes=index_bytes,
            )
            gitops = write_or_compare(delivery.files, out, check=check, force=force, prune=prune)
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
                f"Error: {out} is out of date ({count(len(differences), 'file')}); "
                "run `gpustack synth` to update it",
                err=True,
            )
            sys.exit(STALE)
        if fmt == "text" and not quiet:
            click.echo(
                f"{out} is up to date ({count(len(plan.write) + len(plan.kept), 'cluster')})"
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
        f"{out}: {count(len(summary.written), 'cluster')} written, "
        f"{len(summary.unchanged)} unchanged, {len(summary.removed)} removed"
        + (
            f"; {len(summary.forgotten)} index entries without a folder dropped"
            * bool(summary.forgotten)
        )
    )
