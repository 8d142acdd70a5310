"""Hostile YAML (issue #11, item 14): each file outside a profile's size and shape is one clear
load error, fast, never a hang, a traceback or a terminal full of echoed value."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack import limits
from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.profile.document import ProfileError
from gpustack.profile.loader import MAX_VALUES, read_document

HEAD = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: x\n"


def refused(path: Path) -> ProfileError:
    """The load error for ``path``, got within five seconds (a hang fails, not blocks)."""
    got: list[BaseException] = []

    def go() -> None:
        try:
            read_document(path, path.name)
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            got.append(exc)

    worker = threading.Thread(target=go, daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), f"reading {path} hangs"
    assert time.monotonic() - started < 5
    assert len(got) == 1 and isinstance(got[0], ProfileError), got
    return got[0]


FILES: dict[str, tuple[Callable[[Path], None], tuple[int, int], str]] = {
    "a FIFO": (lambda p: os.mkfifo(p), (1, 1), "not a regular file"),
    "a folder named like a profile": (lambda p: p.mkdir(), (1, 1), "this is a folder"),
    "more than 1 MiB": (
        lambda p: p.write_text(HEAD + "# x\n" * (limits.MAX_BYTES // 4)),
        (1, 1),
        "file is larger than 1 MiB",
    ),
    "flow nesting": (lambda p: p.write_text("a: " + "[" * 200 + "]" * 200), (1, 67), "values nest"),
    "block nesting": (
        lambda p: p.write_text("".join(" " * i + "a:\n" for i in range(100))),
        (65, 65),
        "values nest deeper than 64 levels",
    ),
    "an alias of its own parent": (lambda p: p.write_text("a: &x [*x]\n"), (1, 4), "values nest"),
    "too many values": (
        lambda p: p.write_text("a: [" + "1," * (MAX_VALUES + 1) + "]\n"),
        (1, 2 * MAX_VALUES - 1),  # the value past the limit
        f"the file holds more than {MAX_VALUES} values",
    ),
}


@pytest.mark.parametrize(("make", "loc", "message"), FILES.values(), ids=FILES.keys())
def test_a_hostile_file_is_one_load_error(
    tmp_path: Path, make: Callable[[Path], None], loc: tuple[int, int], message: str
) -> None:
    path = tmp_path / "p.yaml"
    make(path)
    error = refused(path)
    assert error.loc == ("p.yaml", *loc)
    assert error.message.startswith(message)


def test_a_device_is_not_read() -> None:
    assert refused(Path("/dev/zero")).message.startswith("not a regular file")


def test_a_huge_value_is_not_echoed(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(HEAD + f"  labels:\n    a: '{'x b' * 200_000}'\n")
    result = check_paths([tmp_path / "p.yaml"])
    assert [i.json_path for i in result.issues] == ["$.metadata.labels.a"]
    assert "(600000 characters)" in str(result.issues[0])
    assert len(str(result.issues[0])) < 400


@pytest.fixture
def unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``profiles/`` with a subfolder that cannot be listed (as root, chmod does not stop
    reading, so listing it fails the way it does for other users)."""
    root = tmp_path / "profiles"
    (root / "team").mkdir(parents=True)
    (root / "a.yaml").write_text(HEAD)
    (root / "team" / "b.yaml").write_text(HEAD.replace("name: x", "name: b"))
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if Path(str(path)).absolute() == root / "team":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    return root


def test_validate_reports_an_unreadable_folder(unreadable: Path) -> None:
    result = check_paths([Path("profiles")])
    assert not result.ok
    assert [str(i) for i in result.issues] == [
        "profiles/team:1:1: $: cannot read this folder: Permission denied; its profiles were not"
        " checked (make it readable, or move it out of the profiles folder) (rule: load)"
    ]
    assert (result.files_checked, result.files_failed) == (2, 1)


def test_synth_refuses_an_unreadable_folder_without_a_traceback(unreadable: Path) -> None:
    done = CliRunner().invoke(main, ["synth", "--out", "dist"])
    assert done.exit_code == 1
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert "profiles/team:1:1: $: cannot read this folder" in done.output
    assert not (unreadable.parent / "dist").exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [("a: [1, 2\n", (2, 1, "expected ',' or ']'")), ('a: "x', (1, 6, "found unexpected end"))],
)
def test_a_syntax_error_is_placed_at_its_mark(text: str, where: tuple[int, int, str]) -> None:
    """Both YAML readers (profiles, manifests) place a syntax error with this one function."""
    with pytest.raises(yaml.MarkedYAMLError) as caught:
        list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    line, col, problem = limits.syntax_error_at(caught.value)
    assert (line, col) == where[:2]
    assert problem.startswith(where[2])


def test_a_syntax_error_without_a_mark_is_placed_at_the_start() -> None:
    assert limits.syntax_error_at(yaml.MarkedYAMLError()) == (1, 1, "syntax error")
