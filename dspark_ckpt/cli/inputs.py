"""What a user typed as a checkpoint, made into what to read: a shard means its folder; a config file is refused."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from dspark_ckpt.errors import SourceError
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME, is_checkpoint_folder, is_container

# The Hugging Face shard name (`model-00001-of-00003.safetensors`): a file that says it is one part of several.
SHARD_NAME = re.compile(r"-(\d+)-of-(\d+)\.safetensors$")

# Weight formats dspark-ckpt does not read: the safetensors header parser would report nonsense about them.
OTHER_WEIGHTS = {".bin": "a PyTorch pickle", ".pt": "a PyTorch pickle", ".pth": "a PyTorch pickle",
                 ".ckpt": "a training checkpoint", ".pkl": "a pickle", ".gguf": "a GGUF file", ".onnx": "an ONNX file",
                 ".npz": "a NumPy archive", ".h5": "an HDF5 file", ".msgpack": "a Flax msgpack file"}


@dataclass(frozen=True, slots=True)
class Input:
    """One checkpoint to read: `spec` is what is opened, `given` what the user typed for it."""

    spec: str
    given: tuple[str, ...]
    note: Finding | None = None  # DSP230 when a shard was given and its folder is read instead


def shard_of(path: Path) -> str | None:
    """Why this file is one shard of a sharded checkpoint (its index is beside it, or its name says so), else None."""
    if not path.name.endswith(".safetensors") or not path.is_file():
        return None
    if (path.parent / INDEX_NAME).is_file():
        return f"{INDEX_NAME} is beside it"
    match = SHARD_NAME.search(path.name)
    if match is not None and int(match[2]) > 1:
        return f"its name says part {int(match[1])} of {int(match[2])}"
    return None


def _folder_spec(path: Path) -> str:
    return str(path.parent) if str(path.parent) else "."


def plan_inputs(specs: list[str]) -> list[Input]:
    """A shard (or a shell glob of shards) becomes its folder, once, in the order first given; the rest as given.

    One shard alone lacks the tensors the other shards hold, so checking it reports load failures that are not
    there (a missing lm_head, a missing d2t) and proposes repairs that would break the real checkpoint.
    """
    order: list[str] = []
    given: dict[str, list[str]] = {}
    why: dict[str, str] = {}
    for spec in specs:
        path = Path(spec)
        reason = shard_of(path)
        key = _folder_spec(path) if reason is not None else spec
        if reason is not None:
            why.setdefault(key, reason)
        if key not in given:
            order.append(key)
            given[key] = []
        given[key].append(spec)
    return [Input(key, tuple(given[key]), _shard_note(key, [g for g in given[key] if g != key], why.get(key)))
            for key in order]


def _shard_note(folder: str, shards: list[str], reason: str | None) -> Finding | None:
    if reason is None or not shards:
        return None
    names = ", ".join(Path(s).name for s in shards)
    what = "is one shard" if len(shards) == 1 else f"are {len(shards)} shards"
    return finding("DSP230", f"{names} {what} of the sharded checkpoint in {folder} ({reason}): the whole folder "
                             "was checked, since one shard alone lacks the tensors the others hold.",
                   template="give the folder to skip this note: {check}")


def refuse_wrong_file(spec: str) -> None:
    """A file that is not a checkpoint at all: say what it is and ask for the folder, instead of parsing it."""
    path = Path(spec)
    if not path.is_file():
        return
    folder = _folder_spec(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        what = ("the shard index of a sharded checkpoint" if path.name == INDEX_NAME
                else "a config file" if path.name == CONFIG_NAME else "a JSON file")
        raise SourceError(f"{spec} is {what}, not a checkpoint: give the folder that holds it", code="DSP-E110",
                          hint=f"dspark-ckpt check {shlex.quote(folder)} (a single .safetensors file takes its config with "
                               "--config)")
    if suffix in OTHER_WEIGHTS:
        raise SourceError(f"{spec} is {OTHER_WEIGHTS[suffix]}, not a safetensors file: dspark-ckpt reads "
                          "safetensors checkpoints only", code="DSP-E111",
                          hint="convert the weights to safetensors (the format vLLM and SGLang load drafts from), "
                               "then check the folder")


def expand_folders(specs: list[str]) -> tuple[list[str], list[str]]:
    """The checkpoints to read and the notes to print: a folder that is no checkpoint itself stands for the drafts
    below it (sources/discover.py); a target model's folder among drafts (`check */`) is skipped with a note. A
    folder below which no draft is found stays as given, so that it is reported as what it is."""
    out: list[str] = []
    notes: list[str] = []
    for spec in specs:
        if not is_container(spec):
            out.append(spec)
            continue
        from dspark_ckpt.sources.discover import discover  # only for a folder of checkpoints

        found = discover(spec)
        notes += found.notes
        out += found.drafts or [spec]
    if len(out) < 2:  # one checkpoint alone is checked as given: its config.json is not read here a second time
        return list(dict.fromkeys(out)), notes
    from dspark_ckpt.sources.discover import config_target  # a target among drafts: only with several inputs

    targets = {s: t for s in out if is_checkpoint_folder(Path(s)) and (t := config_target(Path(s))) is not None}
    if targets and len(targets) < len(out):
        notes += [f"skipped {s}: its config names a target model ({t}), not a draft" for s, t in targets.items()]
        out = [s for s in out if s not in targets]
    return list(dict.fromkeys(out)), notes
