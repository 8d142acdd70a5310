"""Loader: positions of every value, strict YAML, ``extends`` merging and profile discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.profile.document import ProfileError, format_path, merge
from gpustack.profile.loader import ProfileLoader, profiles_root, read_document
from gpustack.scan import discover

TEXT = """\
metadata:
  name: demo
driver:
  version: "580.105.08"
workloads:
  examples:
    - name: a
      command: [python, -c, x]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_value_and_key_has_a_position(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "p.yaml", TEXT), "p.yaml")
    assert doc.data["workloads"]["examples"][0]["command"] == ["python", "-c", "x"]
    assert doc.locate(("driver", "version")) == ("p.yaml", 4, 12)
    assert doc.locate(("driver", "version"), key=True) == ("p.yaml", 4, 3)
    assert doc.locate(("workloads", "examples", 0, "command", 2)) == ("p.yaml", 8, 29)
    # a path the file does not contain maps to its nearest written ancestor
    assert doc.locate(("driver", "osTag")) == ("p.yaml", 4, 3)
    assert doc.locate(("toolkit", "cdi")) == ("p.yaml", 1, 1)


@pytest.mark.parametrize(
    "path,text",
    [
        ((), "$"),
        (("driver", "version"), "$.driver.version"),
        (("workloads", "examples", 2, "image"), "$.workloads.examples[2].image"),
        (
            ("cluster", "nodeSelector", "nvidia.com/gpu.present"),
            "$.cluster.nodeSelector['nvidia.com/gpu.present']",
        ),
    ],
)
def test_format_path(path: tuple[str | int, ...], text: str) -> None:
    assert format_path(path) == text


@pytest.mark.parametrize(
    "text,loc,message",
    [
        ("a:\n  - b: 1\n    b: 2\n", (3, 5), "duplicate key 'b' (first defined on line 2)"),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", (3, 3), "YAML merge keys (<<) are not supported"),
        ("a: !!python/object:os.system x\n", (1, 4), "unsupported YAML tag"),
        ("a: 1\n!foo k: v\n", (2, 1), "unsupported YAML tag !foo"),
        ("m:\n  '1': a\n  \"1\": b\n", (3, 3), "duplicate key '1' (first defined on line 2)"),
        # keys YAML reads as something else than a name are refused (issue #11, item 11)
        ("m:\n  1: a\n  '1': b\n", (2, 3), "YAML reads the key '1' as the number 1, not"),
        ("m:\n  on: a\n", (2, 3), "YAML reads the key 'on' as the boolean true, not"),
        ("m:\n  1.30: a\n", (2, 3), "YAML reads the key '1.30' as the number 1.3, not"),
        ("m:\n  null: a\n", (2, 3), "YAML reads the key 'null' as null, not"),
        ("m:\n  ~: a\n", (2, 3), "YAML reads the key '~' as null, not"),
        ("m:\n  2024-01-01: a\n", (2, 3), "YAML reads the key '2024-01-01' as a date, not"),
        ("m:\n  " + "k" * 1000 + ": a\n  " + "k" * 1000 + ": b\n", (3, 3), "duplicate key 'kkk"),
        ("? [a, b]\n: c\n", (1, 3), "mapping keys must be plain scalars"),
        ("", (1, 1), "file is empty"),
        ("just a string\n", (1, 1), "a profile must be a YAML mapping"),
        ("a: 1\n---\nb: 2\n", (3, 1), "file holds more than one YAML document"),
        ("a: [1, 2\n", (2, 1), "invalid YAML"),
        ("driver:\n\tversion: x\n", (2, 1), "invalid YAML: tab character in indentation"),
        ("a:\n  b: 1\n\t  c: 2\n", (3, 1), "invalid YAML: tab character in indentation"),
    ],
)
def test_strict_yaml_errors(tmp_path: Path, text: str, loc: tuple[int, int], message: str) -> None:
    with pytest.raises(ProfileError) as info:
        read_document(write(tmp_path / "p.yaml", text), "p.yaml")
    assert info.value.loc == ("p.yaml", *loc)
    assert info.value.message.startswith(message)
    assert len(info.value.message) < 200  # a long key is not echoed in full


@pytest.mark.parametrize(
    "text,hint",
    [
        ("a: [1, 2\n", "look at line 1, column 4"),  # where the unclosed list starts
        ("a: @x\n", None),  # the error's own position: nothing more to look at
        ("a:\n\tb: 1\n", "indent with spaces; YAML forbids tabs"),
    ],
)
def test_yaml_error_hints(tmp_path: Path, text: str, hint: str | None) -> None:
    with pytest.raises(ProfileError) as info:
        read_document(write(tmp_path / "p.yaml", text), "p.yaml")
    assert info.value.hint == hint


def test_non_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(ProfileError, match="not UTF-8"):
        read_document(path, "p.yaml")


def test_non_string_scalars_keep_their_text_through_merge(tmp_path: Path) -> None:
    base = read_document(write(tmp_path / "b.yaml", "v: 1.30\nm: {a: yes, b: 0x1F}\n"), "b.yaml")
    over = read_document(write(tmp_path / "o.yaml", "m: {a: 'on', c: 2.50}\n"), "o.yaml")
    assert base.written == {("v",): "1.30", ("m", "a"): "yes", ("m", "b"): "0x1F"}
    merged = merge(base, over)
    assert merged.data["v"] == 1.3
    assert merged.written == {("v",): "1.30", ("m", "b"): "0x1F", ("m", "c"): "2.50"}


def test_broken_symlink_is_found_and_reported(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "a: 1\n")
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "moved-away.yaml")
    assert [p.name for p in discover([tmp_path])] == ["a.yaml", "gone.yaml"]
    with pytest.raises(ProfileError) as info:
        read_document(tmp_path / "gone.yaml", "gone.yaml")
    assert info.value.message == "cannot read the file: No such file or directory"
    assert info.value.hint == "it is a broken symlink; fix or remove it"


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_unreadable_file_is_an_error() -> None:
    # reading /proc/self/mem from offset 0 always fails (EIO), even for root, unlike chmod 000
    with pytest.raises(ProfileError, match="^cannot read the file: Input/output error$"):
        read_document(Path("/proc/self/mem"), "mem.yaml")


def test_nested_aliases_cannot_expand_without_bound(tmp_path: Path) -> None:
    # nine lines that would expand to 10**9 values ("billion laughs")
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(ProfileError) as info:
        read_document(write(tmp_path / "p.yaml", "\n".join(lines) + "\n"), "p.yaml")
    assert info.value.message == "the file expands to more than 100000 values"


def test_aliases_are_plain_values(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "p.yaml", "a: &x [1, 2]\nb: *x\n"), "p.yaml")
    assert doc.data == {"a": [1, 2], "b": [1, 2]}


def test_merge_maps_deeply_lists_replace_null_removes(tmp_path: Path) -> None:
    base = read_document(
        write(tmp_path / "b.yaml", "a:\n  x: 1\n  y: [1, 2]\n  z: keep\nl: [a, b]\nn: 1\n"),
        "b.yaml",
    )
    over = read_document(write(tmp_path / "o.yaml", "a:\n  y: [3]\nl: [c]\nn: null\n"), "o.yaml")
    merged = merge(base, over)
    assert merged.data == {"a": {"x": 1, "y": [3], "z": "keep"}, "l": ["c"]}
    assert merged.locate(("a", "x")) == ("b.yaml", 2, 6)
    assert merged.locate(("a", "y", 0)) == ("o.yaml", 2, 7)
    assert ("a", "y", 1) not in merged.where  # the base's second item is gone
    assert merged.locate(("l", 0)) == ("o.yaml", 3, 5)
    assert ("n",) not in merged.where
    assert base.data["a"]["y"] == [1, 2]  # merging never mutates a shared base


def test_extends_chain_keeps_positions_per_file(tmp_path: Path) -> None:
    root = tmp_path / "profiles"
    write(root / "_bases" / "fleet.yaml", "extends: ../_common/all.yaml\ndriver:\n  version: '1'\n")
    write(root / "_common" / "all.yaml", "driver:\n  osTag: x\ncluster:\n  namespace: n\n")
    write(root / "team" / "p.yaml", "extends: ../_bases/fleet.yaml\ncluster:\n  namespace: m\n")
    doc = ProfileLoader().load(
        root / "team" / "p.yaml", "team/p.yaml", profiles_root(root / "team" / "p.yaml")
    )
    assert doc.data == {"driver": {"osTag": "x", "version": "1"}, "cluster": {"namespace": "m"}}
    assert doc.locate(("driver", "osTag")) == ("_common/all.yaml", 2, 10)
    assert doc.locate(("driver", "version")) == ("_bases/fleet.yaml", 3, 12)
    assert doc.locate(("cluster", "namespace")) == ("team/p.yaml", 3, 14)
    assert "extends" not in doc.data


def test_profiles_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    nested = tmp_path / "profiles" / "team"
    write(nested / "p.yaml", "a: 1\n")
    write(tmp_path / "other" / "q.yaml", "a: 1\n")
    assert profiles_root(nested / "p.yaml") == (tmp_path / "profiles").resolve()
    assert profiles_root(nested) == (tmp_path / "profiles").resolve()
    assert profiles_root(tmp_path / "other" / "q.yaml") == (tmp_path / "other").resolve()
    assert profiles_root(tmp_path / "other") == (tmp_path / "other").resolve()


def test_discover_skips_underscore_and_dot_folders(tmp_path: Path) -> None:
    for name in (
        "b.yaml",
        "a.yml",
        "sub/c.yaml",
        "_bases/base.yaml",
        "sub/_x/d.yaml",
        ".hidden/e.yaml",
        "notes.txt",
        "sub/_private.yaml",
    ):
        write(tmp_path / name, "a: 1\n")
    found = discover([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.yml", "b.yaml", "sub/c.yaml"]
    # a file named explicitly is taken as given, even inside a `_` folder
    assert discover([tmp_path / "_bases" / "base.yaml"]) == [tmp_path / "_bases" / "base.yaml"]
    with pytest.raises(FileNotFoundError):
        discover([tmp_path / "missing"])


@pytest.mark.parametrize(
    "extends,message",
    [
        ("5", "extends must be a path to a base profile"),
        ("''", "extends must be a path to a base profile"),
        ("/etc/hostname", "base profile '/etc/hostname' is outside the profiles root"),
        ("_bases", "base profile '_bases' is a folder"),
        ("_bases/none.yaml", "base profile '_bases/none.yaml' not found"),
        ("p.yaml", "extends cycle: p.yaml -> p.yaml"),
    ],
)
def test_extends_errors_point_at_extends(tmp_path: Path, extends: str, message: str) -> None:
    (tmp_path / "_bases").mkdir()
    path = write(tmp_path / "p.yaml", f"a: 1\nextends: {extends}\n")
    with pytest.raises(ProfileError) as info:
        ProfileLoader().load(path, "p.yaml", tmp_path)
    assert info.value.loc == ("p.yaml", 2, 10)
    assert info.value.json_path == ("extends",)
    assert info.value.message.startswith(message)
    assert info.value.hint
