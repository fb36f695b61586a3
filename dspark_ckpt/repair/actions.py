"""The repair plan as data: frozen actions (each naming the finding code it repairs) and the files they change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.check.hints import Named, target_flags
from dspark_ckpt.model import repair_catalog as _table
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import FixState
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair.stamps import SourceStamp
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.serving_method import ServingMethod

# The strategy names, for the planner and executor (declared in model/repair_catalog.py; the strategies themselves,
# with what each does, are repair/strategies.py).
TRIM = _table.TRIM
SHARE_TARGET_HEAD = _table.SHARE_TARGET_HEAD
REBUILD_D2T = _table.REBUILD_D2T
OFFSET_D2T = _table.OFFSET_D2T
DROP_D2T = _table.DROP_D2T
IDENTITY_D2T = _table.IDENTITY_D2T
TRIM_INPUT = _table.TRIM_INPUT
HOIST_DSPARK_SETTINGS = _table.HOIST_DSPARK_SETTINGS
SET_DRAFT_VOCAB = _table.SET_DRAFT_VOCAB
NAME_QWEN3_DSPARK = _table.NAME_QWEN3_DSPARK
SET_AUX_COUNT = _table.SET_AUX_COUNT
STRATEGIES = _table.NAMES

METADATA_KEY = "dspark_ckpt.fix"
# Findings a repair leaves by design: an explicit identity d2t on a padded draft maps ids >= T out of range
# (check's DSP402) -- that is the pin for vLLM 0.27-0.29 it is, and why it is never chosen unless forced.
ACCEPTED_RESIDUAL: dict[str, frozenset[FindingCode]] = {IDENTITY_D2T: frozenset({"DSP402"})}


@dataclass(frozen=True, slots=True)
class TrimRows:
    """Keep the first `rows` rows of a row-major tensor: a byte prefix of its data."""

    tensor: str
    file: str
    rows: int
    reason: FindingCode


@dataclass(frozen=True, slots=True)
class DropTensor:
    """Remove a tensor from its shard."""

    tensor: str
    file: str
    reason: FindingCode


@dataclass(frozen=True, slots=True)
class RenameTensor:
    """Give a tensor another name in its shard (and the index): its dtype, shape and data bytes stay as they are."""

    tensor: str
    new_name: str
    file: str
    reason: FindingCode


@dataclass(frozen=True, slots=True)
class PutTensor:
    """Write a small tensor (a d2t), replacing one of that name or adding it to `file`."""

    tensor: str
    file: str
    dtype: str
    shape: tuple[int, ...]
    data: bytes = field(repr=False)
    reason: FindingCode


@dataclass(frozen=True, slots=True)
class SetConfig:
    """Set one config.json key from its old value to a new one."""

    key: str
    old: Any
    new: Any
    reason: FindingCode


Action = TrimRows | DropTensor | RenameTensor | PutTensor | SetConfig


def describe(action: Action) -> str:
    if isinstance(action, TrimRows):
        return f"trim {action.tensor} to its first {action.rows} rows ({action.file})"
    if isinstance(action, DropTensor):
        return f"drop {action.tensor} ({action.file})"
    if isinstance(action, RenameTensor):
        return f"rename {action.tensor} to {action.new_name}, data unchanged ({action.file})"
    if isinstance(action, PutTensor):
        return f"write {action.tensor} {action.dtype} {list(action.shape)} ({action.file})"
    return f"set config.json {action.key}: {action.old!r} -> {action.new!r}"


def action_json(action: Action) -> dict[str, Any]:
    kind = {TrimRows: "trim-rows", DropTensor: "drop-tensor", RenameTensor: "rename-tensor", PutTensor: "put-tensor",
            SetConfig: "set-config"}
    doc: dict[str, Any] = {"action": kind[type(action)], "reason": action.reason}
    if isinstance(action, SetConfig):
        doc.update(key=action.key, old=action.old, new=action.new)
        return doc
    doc.update(tensor=action.tensor, file=action.file)
    if isinstance(action, TrimRows):
        doc["rows"] = action.rows
    elif isinstance(action, RenameTensor):
        doc["new_name"] = action.new_name
    elif isinstance(action, PutTensor):
        doc.update(dtype=action.dtype, shape=list(action.shape))
    return doc


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no plan can be made: a DSP5xx code (exit 1), with the runtimes or findings that stand in the way."""

    code: FindingCode
    message: str
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class Predicted(FixState):
    """One runtime's predicted verdict: the state fix reports (output/fix_records.py: what check would say about
    it), for the runtime it is about."""

    runtime: str = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class TensorWrite:
    """One tensor of a shard being written: copied (a byte prefix) from the source shard, or given as bytes."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    source_file: str | None = None
    source_begin: int = 0  # absolute offset in source_file
    data: bytes | None = field(default=None, repr=False)
    source_name: str | None = None  # its name in source_file where a rename gives it another (None: `name`)

    @property
    def source_tensor(self) -> str:
        return self.source_name or self.name


@dataclass(frozen=True, slots=True)
class ShardWrite:
    """One shard fix writes: the tensors it holds and its __metadata__."""

    file: str
    tensors: tuple[TensorWrite, ...]
    metadata: dict[str, str]
    new: bool  # a shard that did not exist before (written first)


@dataclass(frozen=True, slots=True)
class TextWrite:
    """One text file fix writes (the index, config.json), with what it replaces."""

    file: str
    old: str | None  # None: the file is created
    new: str


@dataclass(frozen=True, slots=True)
class FileChanges:
    """Every file a plan writes or removes, in the order fix writes them."""

    shards: tuple[ShardWrite, ...]  # new shards first, then rewritten ones
    removed: tuple[str, ...]
    texts: tuple[TextWrite, ...]  # the index, then config.json: written last

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(s.file for s in self.shards) + self.removed + tuple(t.file for t in self.texts)

    @property
    def put_order(self) -> tuple[str, ...]:
        """The files written, in the order they are put in place: new shards, rewritten ones, index, config."""
        return tuple(s.file for s in self.shards) + tuple(t.file for t in self.texts)


@dataclass(frozen=True, slots=True)
class FixPlan:
    """A repair planned for one checkpoint: its actions and the verdicts before and after them."""

    source: str
    target_vocab_size: int
    runtimes: tuple[str, ...]
    strategy: str | None
    actions: tuple[Action, ...]
    before: tuple[Predicted, ...]
    after: tuple[Predicted, ...]
    changes: FileChanges | None = None
    refusal: Refusal | None = None
    note: str | None = None  # why nothing is planned
    fingerprints: tuple[SourceStamp, ...] = ()  # the files it was planned from, as planning read them (binding.py)
    target_omni: bool = False  # a Qwen3-Omni target: the re-check after applying must judge against it too
    # The resolved target and runtimes the plan was made for, handed on whole: apply re-checks the result against
    # exactly these (a TargetVocab rebuilt from target_vocab_size would lose head_rows, the Omni flag, its source).
    target: TargetVocab | None = None
    runtime_versions: tuple[RuntimeVersion, ...] = ()
    warnings: tuple[Finding, ...] = ()  # DSP505: runtimes --for all left out because no repair can satisfy them
    not_repaired_for: tuple[str, ...] = ()  # those runtimes
    older_than_architecture: tuple[str, ...] = ()  # of those, the releases before the draft's architecture
    recovered: str | None = None  # what was done, before planning, to a fix that an earlier run left half-done
    replanned: str | None = None  # why this plan was made again (its source changed after an earlier plan of it)
    named_as: Named | None = None  # the checkpoint and target as the user gave them, for the commands hints name
    # The deploy's --speculative-config that goes with this checkpoint (check's DeployPlan.speculative_for): the
    # re-check after applying is handed it too, so it routes the draft by the same serving method as the plan
    speculative: Mapping[str, Any] | None = None
    method: ServingMethod | None = None  # the serving method the plan's analysis derived from it (None without one)

    @property
    def named(self) -> Named:
        return self.named_as or Named(self.source, target_flags(None, self.target_vocab_size))

    @property
    def changes_anything(self) -> bool:
        return bool(self.actions) and self.refusal is None
