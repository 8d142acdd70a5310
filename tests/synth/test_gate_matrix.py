"""Issue #33, item 1: the tamper matrix. Each row is a hostile pull request against a committed
fleet (alpha and beta, ``tests/synth/gitrepo.py``), made in a real git repository and committed
on a branch; the documented CI gate (``synth --check --base main``) and the release gate
(``--full``) must both fail it, exit 3 (out of date) or 1 (refused), with a line that names what
changed. Rows marked ``plain`` are caught by a plain ``--check`` too; the others forge the very
index a plain check trusts, which is what ``docs/concepts/guarantees.md`` says it does not
defend against.

The rows are data: index edits, stray and renamed files, symbolic links, CRLF, comments,
duplicate keys, a submodule and kustomization patches. Every row runs on its own copy of one
repository synthesized once for the module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpustack.synth.report import STALE
from tests.synth.gitrepo import (
    base_repo,
    commit,
    driver_manifest,
    forge_inputs,
    gate,
    git,
    pull_request,
    read_index,
    sha,
    write_index,
)

ALPHA = "dist/clusters/alpha"
EVIL = "evil.example.com/driver"


@dataclass(frozen=True)
class Case:
    """A hostile change, what the gate's output must say (a regular expression) and whether a
    plain ``--check`` catches it too."""

    change: Callable[[Path], None]
    says: str
    plain: bool = True
    #: The exit statuses allowed: out of date, or refused in one line.
    exits: tuple[int, ...] = (STALE, 1)


# --- building blocks of a hostile change -----------------------------------------------------


def record(repo: Path, rel: str, cluster: str = "alpha") -> None:
    """Record the bytes now at ``dist/clusters/<cluster>/<rel>`` as gpustack's in the index."""
    doc = read_index(repo)
    data = (repo / "dist/clusters" / cluster / rel).read_bytes()
    doc["clusters"][cluster]["files"][rel] = sha(data)
    write_index(repo, doc)


def unrecord(repo: Path, rel: str, cluster: str = "alpha") -> None:
    doc = read_index(repo)
    del doc["clusters"][cluster]["files"][rel]
    write_index(repo, doc)


def driver_rel(repo: Path) -> str:
    return driver_manifest(repo).relative_to(repo / ALPHA).as_posix()


def edit_driver(repo: Path, *, forge: bool = False, new: str = EVIL) -> None:
    manifest = driver_manifest(repo)
    manifest.write_text(manifest.read_text().replace("nvcr.io/nvidia/driver", new, 1))
    if forge:
        record(repo, driver_rel(repo))


def edit_index(change: Callable[[dict[str, object]], None]) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        doc = read_index(repo)
        change(doc)
        write_index(repo, doc)

    return run


def entry(doc: dict[str, object], name: str = "alpha") -> dict[str, object]:
    clusters = doc["clusters"]
    assert isinstance(clusters, dict)
    found: dict[str, object] = clusters[name]
    return found


def write(rel: str, text: str | bytes) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)

    return run


def both(*changes: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        for change in changes:
            change(repo)

    return run


def stop_being_a_profile(repo: Path) -> None:
    profile = repo / "profiles/alpha.yaml"
    text = profile.read_text().replace("gpustack.dev/v1alpha1", "example.com/v1")
    profile.write_text(text.replace("kind: Profile", "kind: Widget"))


def move_profile(to: str, *, reindex: bool = False) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        target = repo / to
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(repo / "profiles/alpha.yaml", target)
        if reindex:
            doc = read_index(repo)
            e = entry(doc)
            ref = os.path.relpath(target, repo / "dist")
            inputs = e["inputs"]
            assert isinstance(inputs, dict)
            e["inputs"] = {ref: inputs.pop("../profiles/alpha.yaml")}
            e["profile"] = ref
            write_index(repo, doc)

    return run


def crlf(rel: str, *, forge: bool = False) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        path = repo / rel
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        if forge and rel.startswith(ALPHA):
            record(repo, rel[len(ALPHA) + 1 :])

    return run


def link_driver_to_copy(repo: Path) -> None:
    manifest = driver_manifest(repo)
    copy = repo / "dist/driver-copy.yaml"
    copy.write_bytes(manifest.read_bytes())
    manifest.unlink()
    manifest.symlink_to(os.path.relpath(copy, manifest.parent))


def link_profile(repo: Path) -> None:
    other = repo / "profiles/_bases/alpha-real.yaml"
    other.parent.mkdir(parents=True)
    text = (repo / "profiles/alpha.yaml").read_text()
    other.write_text(text.replace('"580.105.08"', '"570.133.20"'))
    (repo / "profiles/alpha.yaml").unlink()
    (repo / "profiles/alpha.yaml").symlink_to("_bases/alpha-real.yaml")


def link_folder(link: str, to: str) -> Callable[[Path], None]:
    def run(repo: Path) -> None:
        (repo / link).symlink_to(os.path.relpath(repo / to, (repo / link).parent))

    return run


def replace_folder_by_link(repo: Path) -> None:
    folder = repo / ALPHA
    aside = repo / "elsewhere/alpha"
    aside.parent.mkdir()
    os.replace(folder, aside)
    edit_driver_in(aside)
    folder.symlink_to(os.path.relpath(aside, folder.parent))


def edit_driver_in(folder: Path) -> None:
    manifest = next(folder.glob("driver/daemonset-*.yaml"))
    manifest.write_text(manifest.read_text().replace("nvcr.io/nvidia/driver", EVIL, 1))


def submodule(at: str) -> Callable[[Path], None]:
    """A gitlink at ``at`` (a submodule nobody initialised: an empty folder in the checkout)."""

    def run(repo: Path) -> None:
        other = repo.parent / "other"
        other.mkdir()
        git(other, "init", "-q", "-b", "main")
        (other / "evil.yaml").write_text("apiVersion: v1\nkind: Namespace\n")
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "evil")
        head = git(other, "rev-parse", "HEAD").strip()
        (repo / at).mkdir(parents=True)
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},{at}")

    return run


def kustomization_patch(*, file: bool) -> Callable[[Path], None]:
    """A patch in alpha's kustomization.yaml that swaps the driver image, inline or in a file of
    its own, every new byte recorded in the index."""

    def run(repo: Path) -> None:
        k = repo / ALPHA / "kustomization.yaml"
        body = f"- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: {EVIL}:1\n"
        target = "  target:\n    kind: DaemonSet\n    name: nvidia-driver-daemonset\n"
        if file:
            (repo / ALPHA / "patch.yaml").write_text(body)
            record(repo, "patch.yaml")
            k.write_text(k.read_text() + "patches:\n- path: patch.yaml\n" + target)
        else:
            inline = "".join(f"    {line}\n" for line in body.splitlines())
            k.write_text(k.read_text() + "patches:\n- patch: |-\n" + inline + target)
        record(repo, "kustomization.yaml")

    return run


def duplicate_image_key(repo: Path) -> None:
    """A second ``image:`` after the first in the driver container: readers keep the last."""
    manifest = driver_manifest(repo)
    lines = manifest.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "image: nvcr.io/nvidia/driver" in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f"{indent}image: {EVIL}:1\n")
    manifest.write_text("".join(lines))
    record(repo, driver_rel(repo))


def duplicate_index_entry(repo: Path) -> None:
    """``alpha`` twice in the JSON: a reader keeps the last (forged) one, a reviewer sees the
    first."""
    edit_driver(repo)
    text = (repo / "dist/.gpustack/index.json").read_text()
    doc = read_index(repo)
    forged = dict(entry(doc))
    files = dict(forged["files"])  # type: ignore[call-overload]
    files[driver_rel(repo)] = sha(driver_manifest(repo).read_bytes())
    forged["files"] = files
    import json

    dup = json.dumps(forged)
    text = text.replace('"clusters": {', '"clusters": {"alpha": ' + dup + ",", 1)
    (repo / "dist/.gpustack/index.json").write_text(text)


def profile_and_inputs(repo: Path) -> None:
    profile = repo / "profiles/alpha.yaml"
    text = profile.read_text() + "cluster:\n  namespace: other\n"
    profile.write_text(text)
    forge_inputs(repo, "alpha", text)


def future_profile(repo: Path) -> str:
    return (repo / "profiles/alpha.yaml").read_text().replace('"580.105.08"', '"570.133.20"')


# --- the matrix --------------------------------------------------------------------------------

CASES: dict[str, Case] = {
    # the index, edited
    "index: a file digest changed": Case(
        edit_index(
            lambda d: entry(d)["files"].update({"kustomization.yaml": "sha256:" + "0" * 64})
        ),  # type: ignore[attr-defined]
        r"differs: dist/\.gpustack/index\.json",
    ),
    "index: a manifest and its digest": Case(
        lambda r: edit_driver(r, forge=True), r"differs: dist/clusters/alpha/driver/", plain=False
    ),
    "index: a profile and its recorded inputs": Case(
        profile_and_inputs, r"differs: dist/clusters/alpha/", plain=False
    ),
    "index: forged inputs of a future profile": Case(
        lambda r: forge_inputs(r, "alpha", future_profile(r)),
        r"index: cluster 'alpha': recorded digest, inputs not what gpustack computes",
        plain=False,
    ),
    "index: the entry removed, the folder kept": Case(
        edit_index(lambda d: d["clusters"].pop("alpha")),  # type: ignore[attr-defined]
        # plain: alpha is synthesized and its folder refused; a gate keeps the base's entry
        r"dist/clusters/alpha exists but gpustack did not create it|"
        r"index: cluster 'alpha' has no entry; the run records one",
    ),
    "index: the profile re-pointed outside the paths checked": Case(
        both(
            write("README.md", "# not a profile\n"),
            lambda r: (r / "profiles/alpha.yaml").unlink(),
            edit_index(lambda d: entry(d).update(profile="../README.md")),
            lambda r: edit_driver(r, forge=True),
        ),
        r"not compared: cluster 'alpha' .* recorded as made from README\.md",
        plain=False,
    ),
    "index: the profile re-pointed at a base": Case(
        both(
            write("profiles/_bases/fleet.yaml", "apiVersion: gpustack.dev/v1alpha1\n"),
            lambda r: (r / "profiles/alpha.yaml").unlink(),
            edit_index(lambda d: entry(d).update(profile="../profiles/_bases/fleet.yaml")),
            lambda r: edit_driver(r, forge=True),
        ),
        r"not a profile: profiles/_bases/fleet\.yaml made cluster 'alpha' and is no profile",
    ),
    "index: a forged entry for a folder of its own": Case(
        both(
            write("dist/clusters/in-cluster/kustomization.yaml", "resources: []\n"),
            edit_index(
                lambda d: d["clusters"].update(  # type: ignore[attr-defined]
                    {
                        "in-cluster": {
                            "profile": "../profiles/beta.yaml",
                            "files": {"kustomization.yaml": sha(b"resources: []\n")},
                        }
                    }
                )
            ),
        ),
        r"extra: dist/clusters/in-cluster/kustomization\.yaml",
    ),
    "index: a forged entry whose profile lies outside": Case(
        both(
            write("other/in-cluster.yaml", "kind: Profile\n"),
            write("dist/clusters/in-cluster/kustomization.yaml", "resources: []\n"),
            edit_index(
                lambda d: d["clusters"].update(  # type: ignore[attr-defined]
                    {
                        "in-cluster": {
                            "profile": "../other/in-cluster.yaml",
                            "files": {"kustomization.yaml": sha(b"resources: []\n")},
                        }
                    }
                )
            ),
        ),
        r"not compared: cluster 'in-cluster'",
        plain=False,
    ),
    "index: previous names an added file": Case(
        both(
            write(f"{ALPHA}/evil.yaml", "apiVersion: v1\nkind: Namespace\n"),
            edit_index(
                lambda d: entry(d).update(
                    previous={"evil.yaml": sha(b"apiVersion: v1\nkind: Namespace\n")}
                )
            ),
        ),
        r"extra: dist/clusters/alpha/evil\.yaml",
    ),
    "index: delivery switched on": Case(
        edit_index(lambda d: entry(d).update(delivery=True)),
        r"index: cluster 'alpha': recorded delivery not what gpustack computes",
        plain=False,
    ),
    "index: a fleet digest for gitops/": Case(
        edit_index(lambda d: d.update(gitops="sha256:" + "1" * 64)),
        r"index: the fleet digest of gitops/ is not what gpustack computes",
        plain=False,
    ),
    "index: the cluster digest alone": Case(
        edit_index(lambda d: entry(d).update(digest="sha256:" + "2" * 64)),
        r"index: cluster 'alpha': recorded digest not what gpustack computes",
        plain=False,
    ),
    "index: written in format 1": Case(
        edit_index(
            lambda d: d.update(
                format=1,
                clusters={
                    n: {"profile": e["profile"], "files": sorted(e["files"])}
                    for n, e in d["clusters"].items()  # type: ignore[attr-defined]
                },
            )
        ),
        r"differs: dist/\.gpustack/index\.json",
    ),
    "index: reformatted": Case(
        lambda r: (r / "dist/.gpustack/index.json").write_text(
            __import__("json").dumps(read_index(r), indent=4, sort_keys=True) + "\n"
        ),
        r"differs: dist/\.gpustack/index\.json",
        plain=False,
    ),
    "index: a duplicate key hides a forged entry": Case(
        duplicate_index_entry, r"differs: dist/clusters/alpha/driver/", plain=False
    ),
    "index: CRLF": Case(
        crlf("dist/.gpustack/index.json"), r"differs: dist/\.gpustack/index\.json", plain=False
    ),
    "index: not JSON": Case(
        write("dist/.gpustack/index.json", "{"), r"index\.json is not a gpustack index"
    ),
    "index: a symbolic link": Case(
        both(
            lambda r: os.replace(r / "dist/.gpustack/index.json", r / "dist/index.json"),
            link_folder("dist/.gpustack/index.json", "dist/index.json"),
        ),
        r"dist/\.gpustack/index\.json",
    ),
    # stray and renamed files
    "stray: a folder nobody owns": Case(
        write("dist/clusters/in-cluster/kustomization.yaml", "resources: []\n"),
        r"unowned: dist/clusters/in-cluster: cluster folder in no index entry",
    ),
    "stray: a file beside clusters/": Case(
        write("dist/evil.yaml", "apiVersion: v1\nkind: Namespace\n"),
        r"unowned: dist/evil\.yaml",
    ),
    "stray: a folder beside clusters/": Case(
        write("dist/more/kustomization.yaml", "resources: []\n"),
        r"extra: dist/more/kustomization\.yaml",
    ),
    "stray: a file in .gpustack/": Case(
        write("dist/.gpustack/extra.json", "{}\n"), r"unowned: dist/\.gpustack/extra\.json"
    ),
    "stray: a file in gitops/": Case(
        write("dist/gitops/argocd/evil.yaml", "apiVersion: v1\nkind: Namespace\n"),
        r"extra: dist/gitops/argocd/evil\.yaml",
    ),
    "stray: a file in a cluster folder": Case(
        write(f"{ALPHA}/evil.yaml", "apiVersion: v1\nkind: Namespace\n"),
        r"extra: dist/clusters/alpha/evil\.yaml",
    ),
    "stray: a file in a cluster folder, recorded": Case(
        both(write(f"{ALPHA}/evil.yaml", "kind: Namespace\n"), lambda r: record(r, "evil.yaml")),
        r"extra: dist/clusters/alpha/evil\.yaml",
        plain=False,
    ),
    "renamed: a manifest": Case(
        lambda r: os.replace(driver_manifest(r), r / ALPHA / "driver/evil.yaml"),
        r"missing: dist/clusters/alpha/driver/daemonset-",
    ),
    "renamed: a cluster folder": Case(
        lambda r: os.replace(r / ALPHA, r / "dist/clusters/in-cluster"),
        r"unowned: dist/clusters/in-cluster",
    ),
    "renamed: a cluster folder and its entry": Case(
        both(
            lambda r: os.replace(r / ALPHA, r / "dist/clusters/in-cluster"),
            edit_index(
                lambda d: d["clusters"].update(  # type: ignore[attr-defined]
                    {"in-cluster": d["clusters"].pop("alpha")}  # type: ignore[attr-defined]
                )
            ),
        ),
        r"renamed: dist/clusters/in-cluster → dist/clusters/alpha",
        plain=False,  # the working index vouches for alpha's profile under another name
    ),
    "renamed: a profile to .yml, index as it was": Case(
        move_profile("profiles/alpha.yml"),
        r"differs: dist/clusters/alpha/kustomization\.yaml",  # its header names the profile
    ),
    "renamed: a profile under a '_' folder": Case(
        move_profile("profiles/_old/alpha.yaml", reindex=True),
        r"not a profile: profiles/_old/alpha\.yaml made cluster 'alpha'",
    ),
    "renamed: a profile to a hidden file": Case(
        move_profile("profiles/.alpha.yaml"), r"extra: dist/clusters/alpha/"
    ),
    "renamed: a profile out of YAML": Case(
        move_profile("profiles/alpha.yaml.txt", reindex=True),
        r"not a profile: profiles/alpha\.yaml\.txt made cluster 'alpha'",
    ),
    "not a profile: apiVersion and kind, and the driver": Case(
        both(stop_being_a_profile, edit_driver),
        r"not a profile: profiles/alpha\.yaml made cluster 'alpha' and is no longer a profile",
    ),
    # symbolic links
    "link: a manifest to a copy outside": Case(
        link_driver_to_copy, r"differs: dist/clusters/alpha/driver/daemonset-"
    ),
    "link: a cluster folder to an edited copy": Case(
        replace_folder_by_link, r"differs: dist/clusters/alpha$"
    ),
    "link: a folder nobody owns to an owned one": Case(
        link_folder("dist/clusters/in-cluster", ALPHA), r"unowned: dist/clusters/in-cluster"
    ),
    "link: the profile to another driver": Case(
        link_profile, r"differs: dist/clusters/alpha/driver/daemonset-"
    ),
    "link: clusters/ itself": Case(
        both(
            lambda r: os.replace(r / "dist/clusters", r / "dist/real"),
            link_folder("dist/clusters", "dist/real"),
        ),
        r"dist/clusters must be a plain folder",
    ),
    # CRLF
    "crlf: a manifest, recorded": Case(
        lambda r: crlf(driver_manifest(r).relative_to(r).as_posix(), forge=True)(r),
        r"differs: dist/clusters/alpha/driver/daemonset-",
        plain=False,
    ),
    "crlf: the kustomization": Case(
        crlf(f"{ALPHA}/kustomization.yaml"), r"differs: dist/clusters/alpha/kustomization\.yaml"
    ),
    "crlf: the profile, index as it was": Case(
        crlf("profiles/alpha.yaml"),
        r"index: cluster 'alpha': recorded digest, inputs not what gpustack computes",
        plain=False,
    ),
    # comments
    "comment: in a manifest, recorded": Case(
        both(
            lambda r: driver_manifest(r).write_text(
                driver_manifest(r).read_text() + f"# image: {EVIL}\n"
            ),
            lambda r: record(r, driver_rel(r)),
        ),
        r"differs: dist/clusters/alpha/driver/daemonset-",
        plain=False,
    ),
    "comment: in the kustomization": Case(
        lambda r: (r / ALPHA / "kustomization.yaml").write_text(
            (r / ALPHA / "kustomization.yaml").read_text() + "# reviewed\n"
        ),
        r"differs: dist/clusters/alpha/kustomization\.yaml",
    ),
    "comment: in the index": Case(
        lambda r: (r / "dist/.gpustack/index.json").write_text(
            "// reviewed\n" + (r / "dist/.gpustack/index.json").read_text()
        ),
        r"index\.json is not a gpustack index",
    ),
    # duplicate keys
    "duplicate: image key in a manifest, recorded": Case(
        duplicate_image_key, r"differs: dist/clusters/alpha/driver/daemonset-", plain=False
    ),
    "duplicate: a key in the profile": Case(
        lambda r: (r / "profiles/alpha.yaml").write_text(
            (r / "profiles/alpha.yaml").read_text() + 'driver:\n  version: "570.133.20"\n'
        ),
        r"profiles/alpha\.yaml:\d+:\d+:",
    ),
    # submodules
    "submodule: as a cluster folder": Case(
        submodule("dist/clusters/in-cluster"), r"unowned: dist/clusters/in-cluster"
    ),
    "submodule: inside an owned cluster folder": Case(
        submodule(f"{ALPHA}/extra"), r"extra: dist/clusters/alpha/extra$"
    ),
    # kustomization patches
    "patch: inline in the kustomization, recorded": Case(
        kustomization_patch(file=False),
        r"differs: dist/clusters/alpha/kustomization\.yaml",
        plain=False,
    ),
    "patch: in a file of its own, recorded": Case(
        kustomization_patch(file=True),
        r"extra: dist/clusters/alpha/patch\.yaml",
        plain=False,
    ),
    "patch: a second kustomization file name": Case(
        write(f"{ALPHA}/kustomization.yml", "resources: []\n"),
        r"extra: dist/clusters/alpha/kustomization\.yml",
    ),
    "patch: a kustomization over every cluster": Case(
        write("dist/clusters/kustomization.yaml", "resources: [alpha]\n"),
        r"unowned: dist/clusters/kustomization\.yaml",
    ),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return base_repo(tmp_path_factory.mktemp("matrix"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gate_fails_a_hostile_pull_request(base: Path, tmp_path: Path, name: str) -> None:
    case = CASES[name]
    repo = pull_request(base, tmp_path)
    case.change(repo)
    commit(repo, name)
    for mode in ("--base", "--full", *(("plain",) if case.plain else ())):
        done = gate(repo, mode)
        assert done.exit_code in case.exits, (mode, done.output)
        assert re.search(case.says, done.output, re.MULTILINE), (mode, done.output)


def test_the_matrix_is_the_size_the_issue_asks_for() -> None:
    assert len(CASES) >= 50
