"""``gpustack init``: a first profile for a cluster, validated before it is written, and the
schemas its editor modeline names.

The profile sets only what a platform team decides first (the GPU product, GPUs per node, the
driver, one example job) and leaves every other field to the defaults the schema documents. The
schemas are copied next to the profiles folder because the modeline points there; a schema file
gpustack did not write (another ``$id``) is never replaced.

It lives beside :mod:`gpustack.checker`, not in :mod:`gpustack.profile`: it validates what it
writes with the checker, and the profile package imports nothing above itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpustack import limits
from gpustack.checker import CheckResult, check_paths
from gpustack.profile import catalog
from gpustack.profile.model import API_VERSION, DEFAULT_KUBERNETES, KIND, Driver
from gpustack.profile.schema import (
    BASE_SCHEMA_FILE,
    SCHEMA_FILE,
    render,
    render_base,
)

#: Example job images by the CUDA the GPU needs: PyTorch's own CUDA runtime images.
PYTORCH_IMAGE = "docker.io/pytorch/pytorch:2.6.0-cuda12.6-cudnn9-runtime"
PYTORCH_IMAGE_CUDA_12_8 = "docker.io/pytorch/pytorch:2.7.0-cuda12.8-cudnn9-runtime"


def products() -> list[str]:
    """Products a scaffold can target: those the default driver still supports."""
    default_branch = catalog.parse_driver(Driver().version)[0]
    return sorted(
        name
        for name, product in catalog.PRODUCTS.items()
        if (catalog.ARCHITECTURES[product.architecture].last_driver_branch or default_branch)
        >= default_branch
    )


def product_hint(value: str) -> str:
    """What ``validate`` says of a ``gpus.product`` it does not know (its did-you-mean, then
    the products), over the products ``init`` offers."""
    # validate's own suggestion, so init and validate suggest alike (not a second one)
    from gpustack.profile.explain import _enum_hint

    return _enum_hint(("gpus", "product"), products(), value)


#: Where ``init``'s arguments land in the profile it writes (:func:`profile_text`): its errors
#: name the argument, not a line of a file that was never written.
ARGUMENTS: dict[str, str] = {
    "$.metadata.name": "NAME",
    "$.gpus.product": "--product",
    "$.gpus.perNode": "--gpus-per-node",
    "$.workloads.examples[0].gpus": "--example-gpus",
}


def argument_errors(result: CheckResult) -> list[str]:
    """Each issue of a draft that would not be valid as ``<argument>: <what is wrong>``, the
    profile fields in its text named by the arguments that set them (a field no argument sets
    keeps its JSON path)."""
    fields = sorted(((p.removeprefix("$."), a) for p, a in ARGUMENTS.items()), reverse=True)
    lines = []
    for issue in result.issues:
        text = issue.text()
        for field, argument in fields:
            text = text.replace(field, argument)
        lines.append(f"{ARGUMENTS.get(issue.json_path, issue.json_path)}: {text}")
    return lines


def profile_text(
    name: str, product: str, per_node: int, schema_ref: str, example_gpus: int = 1
) -> str:
    """The profile file's text: a modeline, a comment, and the few fields it decides.

    The example job asks for ``example_gpus`` (default one GPU, not every GPU of a node: a
    first job should schedule while other work runs, and a one-GPU check proves the stack)."""
    arch = catalog.ARCHITECTURES[catalog.PRODUCTS[product].architecture]
    first_cuda = catalog.PRODUCTS[product].first_cuda or arch.first_cuda
    needs_12_8 = first_cuda is not None and catalog.parse_driver(first_cuda) >= (12, 8)
    doc = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name},
        # written, not left to the default: the release is the one field a team must check
        "cluster": {"kubernetesVersion": DEFAULT_KUBERNETES},
        "driver": {"version": Driver().version},
        "gpus": {"product": product, "perNode": per_node},
        "workloads": {
            "examples": [
                {
                    "name": "pytorch-check",
                    "image": PYTORCH_IMAGE_CUDA_12_8 if needs_12_8 else PYTORCH_IMAGE,
                    "gpus": example_gpus,
                }
            ]
        },
    }
    header = (
        f"# yaml-language-server: $schema={schema_ref}\n"
        f"# {name}: {per_node} x {product} per node. Written by `gpustack init`; every field not"
        " set here\n# has the default the schema on the first line documents (editors show it).\n"
    )
    return header + yaml.safe_dump(doc, sort_keys=False)


@dataclass(frozen=True)
class SchemaWrite:
    path: Path
    action: str  # "wrote", "updated", "unchanged" or "kept" (not gpustack's)


def schemas_blocked(root: Path) -> str | None:
    """Why the schemas cannot be written under ``root`` (a file where a folder on the way must
    be), checked before ``init`` writes the profile, so a failed ``init`` writes nothing."""
    for relative in (SCHEMA_FILE, BASE_SCHEMA_FILE):
        for folder in reversed((root / relative).parents):
            inside = folder.is_relative_to(root) and folder != root
            if inside and folder.exists() and not folder.is_dir():
                return f"{folder} is a file, where the profile schemas' folder goes"
    return None


def write_schemas(root: Path) -> list[SchemaWrite]:
    """Write the profile schemas under ``root/schemas/``; a file with another ``$id`` is kept,
    and so is anything that is no regular file within the limits (a FIFO, a folder)."""
    done = []
    for relative, text in ((SCHEMA_FILE, render()), (BASE_SCHEMA_FILE, render_base())):
        path = root / relative
        if not path.exists() and not path.is_symlink():
            action = "wrote"
        elif (existing := _existing(path)) is None:
            done.append(SchemaWrite(path, "kept"))
            continue
        elif existing == text:
            done.append(SchemaWrite(path, "unchanged"))
            continue
        elif _schema_id(path) == json.loads(text)["$id"]:
            action = "updated"  # gpustack's own, from another version
        else:
            done.append(SchemaWrite(path, "kept"))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, text)
        done.append(SchemaWrite(path, action))
    return done


class ProfileExists(Exception):
    """The profile to create is there already (``gpustack init`` never replaces one)."""


def create_profile(target: Path, text: str) -> CheckResult:
    """Validate ``text`` as the profile ``target``, then write it there, never over a file.

    Nothing is written when the profile is invalid (the result's issues name ``target``), so a
    failed ``init`` leaves the tree as it was. Raises :class:`ProfileExists` and ``OSError``.
    """
    if target.exists():
        raise ProfileExists(str(target))
    with tempfile.TemporaryDirectory(prefix="gpustack-init-") as scratch:
        draft = Path(scratch) / target.name
        draft.write_text(text, encoding="utf-8")
        result = check_paths([draft])
    if not result.ok:
        issues = tuple(dataclasses.replace(i, file=str(target)) for i in result.issues)
        return dataclasses.replace(result, issues=issues)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.gpustack-tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.link(tmp, target)  # unlike a rename, fails if the file appeared meanwhile
    except FileExistsError:
        raise ProfileExists(str(target)) from None
    finally:
        tmp.unlink(missing_ok=True)
    return result


def _existing(path: Path) -> str | None:
    """The text of the schema file there, or ``None`` where it is none gpustack may read."""
    try:
        return limits.read_text(path, limits.MAX_BYTES, what="profile schema")
    except limits.Refused:
        return None


def _schema_id(path: Path) -> str | None:
    text = _existing(path)
    try:
        data = limits.load_json(text, what="profile schema") if text is not None else None
    except limits.Refused:
        return None
    return data.get("$id") if isinstance(data, dict) else None


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.gpustack-tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def schema_ref(profiles_dir: Path) -> str:
    """The modeline's path from a profile in ``profiles_dir`` to the schema beside it."""
    return os.path.relpath(profiles_dir.parent / SCHEMA_FILE, profiles_dir).replace(os.sep, "/")
