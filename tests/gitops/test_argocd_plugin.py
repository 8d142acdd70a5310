"""The plugin's side of Argo CD's contract: the ``profile`` parameter as Argo CD passes it
(``ARGOCD_APP_PARAMETERS``, encoded the way Argo CD's Go code encodes it, and ``PARAM_<NAME>``),
discovery, and ``gpustack template --argocd`` run in the Application's source folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.gitops import argocd_plugin
from gpustack.gitops.argocd_plugin import ParameterError, discovers, profile_parameter

REPO = Path(__file__).resolve().parents[2]


def argo_env(*parameters: dict[str, object], source_path: str = "profiles") -> dict[str, str]:
    """The variables Argo CD sets for an Application with these plugin parameters: the JSON
    list (Go's encoding: compact, keys sorted) and one ``PARAM_`` variable per string, array
    item and map entry, named as Argo CD escapes them."""

    def escaped(name: str) -> str:
        return re.sub(r"[^A-Z0-9_]", "_", name.upper())

    env = {
        "ARGOCD_APP_NAME": "gpustack-test",
        "ARGOCD_APP_NAMESPACE": "gpustack-system",
        "ARGOCD_APP_SOURCE_PATH": source_path,
        "ARGOCD_APP_PARAMETERS": json.dumps(
            list(parameters) or None, separators=(",", ":"), sort_keys=True
        ),
    }
    for p in parameters:
        base = "PARAM_" + escaped(str(p["name"]))
        if isinstance(p.get("string"), str):
            env[base] = str(p["string"])
        for i, item in enumerate(p.get("array", [])):  # type: ignore[arg-type]
            env[f"{base}_{i}"] = item
        for key, value in dict(p.get("map", {})).items():  # type: ignore[call-overload]
            env[f"{base}_{escaped(key)}"] = value
    return env


PROFILE = {"name": "profile", "string": "h100-prod-east.yaml"}

#: (id, environment, the profile file or an error fragment)
PARAMETER_CASES = [
    ("string", argo_env(PROFILE), "h100-prod-east.yaml"),
    ("subfolder", argo_env({"name": "profile", "string": "team/./a.yaml"}), "team/a.yaml"),
    ("by-hand", {"PARAM_PROFILE": "a.yaml"}, "a.yaml"),
    ("unset", {}, ParameterError("no 'profile' parameter (ARGOCD_APP_PARAMETERS is unset)")),
    ("none-set", argo_env(), ParameterError("no 'profile' parameter; set spec.source.plugin")),
    ("empty-list", {"ARGOCD_APP_PARAMETERS": "[]"}, ParameterError("no 'profile' parameter")),
    (
        "typo",
        argo_env({"name": "profle", "string": "a.yaml"}),
        ParameterError("unknown parameter 'profle': the plugin takes one, 'profile'"),
    ),
    (
        "extra",
        argo_env(PROFILE, {"name": "values", "string": "x"}),
        ParameterError("unknown parameter 'values'"),
    ),
    (
        "array",
        argo_env({"name": "profile", "array": ["a.yaml"]}),
        ParameterError("parameter 'profile' is an array; give the profile file as a string"),
    ),
    (
        "map",
        argo_env({"name": "profile", "map": {"a": "b"}}),
        ParameterError("parameter 'profile' is a map"),
    ),
    ("twice", argo_env(PROFILE, PROFILE), ParameterError("given 2 times")),
    ("empty", argo_env({"name": "profile", "string": " "}), ParameterError("is empty")),
    (
        "absolute",
        argo_env({"name": "profile", "string": "/etc/passwd"}),
        ParameterError("is the absolute path '/etc/passwd'"),
    ),
    (
        "escapes",
        argo_env({"name": "profile", "string": "../../x.yaml"}),
        ParameterError("leaves the Application's source path"),
    ),
    ("not-json", {"ARGOCD_APP_PARAMETERS": "[{"}, ParameterError("is not JSON")),
    (
        "not-a-list",
        {"ARGOCD_APP_PARAMETERS": '{"name":"profile"}'},
        ParameterError("not a list of named parameters"),
    ),
]


@pytest.mark.parametrize(
    ("env", "expected"), [c[1:] for c in PARAMETER_CASES], ids=[c[0] for c in PARAMETER_CASES]
)
def test_profile_parameter(env: dict[str, str], expected: str | ParameterError) -> None:
    if isinstance(expected, ParameterError):
        with pytest.raises(ParameterError) as raised:
            profile_parameter(env)
        assert str(expected) in str(raised.value)
        assert "\n" not in str(raised.value)
    else:
        assert profile_parameter(env) == expected


DISCOVER_CASES = [
    ("profile", argo_env(PROFILE), True),
    # a wrong profile parameter still reaches generate, whose error says what is wrong
    ("wrong-profile", argo_env({"name": "profile", "array": []}), True),
    ("no-plugin-section", {"ARGOCD_APP_NAME": "guestbook"}, False),
    ("plugin-without-parameters", argo_env(), False),
    ("another-plugins-parameters", argo_env({"name": "values-files", "array": ["a"]}), False),
    ("broken-json", {"ARGOCD_APP_PARAMETERS": "[{"}, False),
]


@pytest.mark.parametrize(
    ("env", "expected"), [c[1:] for c in DISCOVER_CASES], ids=[c[0] for c in DISCOVER_CASES]
)
def test_discovery_claims_only_applications_passing_a_profile(
    env: dict[str, str], expected: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert discovers(env) is expected
    # The command Argo CD runs: a match is non-empty stdout, and it never fails.
    assert argocd_plugin.main(["discover"], env) == 0
    assert bool(capsys.readouterr().out.strip()) is expected


def committed(name: str) -> bytes:
    """What ``gpustack template`` prints for the example cluster ``name``: its dist/ folder."""
    folder = REPO / "dist" / "clusters" / name
    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    return b"".join(b"---\n" + (folder / r).read_bytes() for r in resources)


def test_generate_renders_the_profile_the_application_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO / "profiles")  # Argo CD runs generate in the source path
    done = CliRunner().invoke(main, ["template", "--argocd"], env=argo_env(PROFILE))
    assert done.exit_code == 0, done.output
    assert done.stdout_bytes == committed("h100-prod-east")


def _bad_profile(folder: Path) -> str:
    (folder / "bad.yaml").write_text(
        "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata: {name: Bad}\n"
        "gpus: {product: nope}\n"
    )
    # a profile outside the source path, and links in it to that profile and its folder
    secret = folder.parent / f"{folder.name}-outside"
    secret.mkdir()
    (secret / "secret.yaml").write_text((folder / "bad.yaml").read_text())
    (folder / "leak.yaml").symlink_to(secret / "secret.yaml")
    (folder / "up").symlink_to(secret)
    os.mkfifo(folder / "fifo.yaml")
    return "bad.yaml"


#: (id, parameters, the one line on stderr: a regular expression)
GENERATE_ERRORS = [
    ("no-parameter", (), r"Error: no 'profile' parameter; set spec\.source\.plugin\.parameters"),
    ("typo", ({"name": "profle", "string": "x.yaml"},), r"Error: unknown parameter 'profle'"),
    (
        "missing-file",
        ({"name": "profile", "string": "nope.yaml"},),
        r"Error: parameter 'profile' names 'nope\.yaml', which is not a file in the "
        r"Application's source path 'clusters/gpu'",
    ),
    (
        "link-out-of-the-source-path",
        ({"name": "profile", "string": "leak.yaml"},),
        r"Error: parameter 'profile' names 'leak\.yaml', a link that leads out of the "
        r"Application's source path 'clusters/gpu'; commit the profile itself there",
    ),
    (
        "linked-folder-out-of-the-source-path",
        ({"name": "profile", "string": "up/secret.yaml"},),
        r"Error: parameter 'profile' names 'up/secret\.yaml', a link that leads out",
    ),
    (
        "fifo",
        ({"name": "profile", "string": "fifo.yaml"},),
        r"Error: parameter 'profile' names 'fifo\.yaml', which is not a file",
    ),
    (
        "name-longer-than-255-bytes",
        ({"name": "profile", "string": "p" * 256 + ".yaml"},),
        r"Error: parameter 'profile' \('p{60}'\.\.\. \(261 characters\)\) holds a name of 261 "
        r"bytes, longer than a file system takes \(255 bytes a name, 4096 a path\)",
    ),
    (
        "path-longer-than-4096-bytes",
        ({"name": "profile", "string": "a/" * 2100 + "p.yaml"},),
        r"Error: parameter 'profile' \('(a/){30}'\.\.\. \(4206 characters\)\) holds 4206 bytes",
    ),
    (
        "invalid-profile",
        ({"name": "profile", "string": "bad.yaml"},),
        r"Error: clusters/gpu/bad\.yaml:3:18: \$\.metadata\.name: .* \(2 errors in 1 of 1 "
        r"profile; `gpustack validate` lists them\)$",
    ),
]


@pytest.mark.parametrize(
    ("parameters", "line"), [c[1:] for c in GENERATE_ERRORS], ids=[c[0] for c in GENERATE_ERRORS]
)
def test_generate_fails_with_one_line_and_prints_no_manifest(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    parameters: tuple[dict[str, object], ...],
    line: str,
) -> None:
    _bad_profile(tmp_path)
    monkeypatch.chdir(tmp_path)
    env = argo_env(*parameters, source_path="clusters/gpu")
    done = CliRunner().invoke(main, ["template", "--argocd"], env=env)
    assert done.exit_code == 1
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert re.match(line, done.stderr.strip()), done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--argocd", "profiles/lab-1gpu.yaml"], "--argocd takes the profile"),
        ([], "Missing argument 'PROFILE'"),
    ],
)
def test_template_usage(args: list[str], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    done = CliRunner().invoke(main, ["template", *args])
    assert done.exit_code == 2
    assert message in done.stderr
