"""What fix planned and wrote, as plain records: repair/render.py fills them, output/ renders and serialises them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport, FixState
from dspark_ckpt.output.records import human_bytes


@dataclass(frozen=True, slots=True)
class FixRuntime:
    """One runtime the plan was made for: its verdict before the repair, and the one predicted after it."""

    runtime: str
    before: FixState
    after: FixState


@dataclass(frozen=True, slots=True)
class FixAction:
    """One planned action: its reason (a finding code), its sentence, and the record fix writes to __metadata__."""

    reason: FindingCode
    text: str
    record: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class FixShard:
    """A shard the plan writes: new or rewritten, with its tensor count and data bytes."""

    file: str
    new: bool
    tensors: int
    nbytes: int


@dataclass(frozen=True, slots=True)
class FixText:
    """A JSON file the plan writes (the index, config.json); `old` None when it is created."""

    file: str
    old: str | None
    new: str


@dataclass(frozen=True, slots=True)
class FixChanges:
    """The files a plan changes: shards first, then removed files, then the JSON files (written last)."""

    shards: tuple[FixShard, ...]
    removed: tuple[str, ...]
    texts: tuple[FixText, ...]


@dataclass(frozen=True, slots=True)
class FixRefusal:
    """Why no plan could be made: a DSP5xx code, its message and hint."""

    code: FindingCode
    message: str
    hint: str | None


@dataclass(frozen=True, slots=True)
class FixWritten:
    """What apply wrote, and the check of the result (fix's report)."""

    destination: str
    in_place: bool
    atomic: bool
    written: tuple[tuple[str, int], ...]  # (file, bytes) written by fix
    copied: tuple[tuple[str, int], ...]  # unchanged files copied (no hard link possible)
    linked: int
    removed: tuple[str, ...]
    bytes_written: int
    report: CheckpointReport | None
    errors: tuple[Finding, ...]
    via_link: str | None
    recovered: str | None


@dataclass(frozen=True, slots=True)
class FixRecord:
    """One checkpoint's fix: the plan, why it stopped (refusal, nothing to do, --safe-only) and what was written."""

    source: str
    status: str  # refused | nothing-to-do | skipped | planned | applied
    target_vocab_size: int
    runtimes: tuple[str, ...]
    strategy: str | None
    actions: tuple[FixAction, ...]
    changes: FixChanges | None
    refusal: FixRefusal | None
    note: str | None
    compatibility: tuple[FixRuntime, ...]
    steps: tuple[str, ...]  # the points apply can be interrupted at (DSPARK_CKPT_CRASH_AT)
    skipped: tuple[str, ...]  # why --safe-only left the repair alone
    skip_message: str | None  # the sentence saying so, and the command to run instead
    skip_command: str | None
    warnings: tuple[Finding, ...]
    not_repaired_for: tuple[str, ...]
    recovered: str | None
    result: FixWritten | None = None
    # Releases check gates on that the plan leaves failing (a runtime no repair can make load): fix exits 1
    stays_broken: tuple[str, ...] = ()
    replanned: str | None = None  # why the plan shown was made again (its source changed after the first plan)
    # The serving method the plan was made for, and who named it: set where a --speculative-config went with the
    # checkpoint (as check's JSON says the method only in its `deploy`), else None
    serving_method: tuple[str, str] | None = None


def file_rows(changes: FixChanges | None) -> list[str]:
    """The files a plan writes, one sentence each (fix's text plan and its JSON `files`)."""
    if changes is None:
        return []
    rows = [f"{'add' if s.new else 'rewrite'} {s.file} ({s.tensors} tensors, {human_bytes(s.nbytes)} of data)"
            for s in changes.shards]
    rows += [f"remove {name}" for name in changes.removed]
    rows += [f"{'create' if t.old is None else 'update'} {t.file}" for t in changes.texts]
    return rows


def json_diffs(changes: FixChanges | None) -> list[str]:
    """A unified diff per JSON file the plan writes (`--dry-run`'s text and the JSON `diff`)."""
    if changes is None:
        return []
    out = []
    for t in changes.texts:
        lines = difflib.unified_diff((t.old or "").splitlines(keepends=True), t.new.splitlines(keepends=True),
                                     fromfile=f"a/{t.file}" if t.old is not None else "/dev/null",
                                     tofile=f"b/{t.file}")
        out.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return out
