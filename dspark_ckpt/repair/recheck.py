"""fix's one re-check: check the staged result before it is put in place, and reuse that check as the report.

The staged files are the ones put in place (a rename of the folder, or each file moved over its original), so the
committed checkpoint is proven to be what was checked by the identity of each file check read (inode, size, mtime),
not by a second check. Only when that proof fails (something wrote the folder meanwhile) is the result checked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.errors import RepairError
from dspark_ckpt.model.findings import Finding, Severity, finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair.read import fingerprints
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.local import LocalFolder

Stamps = tuple[tuple[str, int, int, int], ...]  # (file, inode, size, mtime_ns), as repair/read.py fingerprints


class VerificationError(RepairError):
    """The staged result still fails check (DSP-E083; `finding`: the DSP504 it reports); it was not put in place."""

    exit_code = 1

    def __init__(self, message: str, reported: Finding) -> None:
        super().__init__(message, code="DSP-E083")
        self.finding = reported


class StagedAs(LocalFolder):
    """The staged copy, read where it is and reported under the path it is put in place at (the report, and any
    message that names the checkpoint, say the destination, never the staging folder)."""

    def __init__(self, stage: Path, dest: Path) -> None:
        super().__init__(stage)
        self._dest = dest

    @property
    def display(self) -> str:
        return str(self._dest)


@dataclass(frozen=True, slots=True)
class StagedCheck:
    """check of the staged result, and what proves the committed folder is what was checked."""

    report: CheckpointReport
    names: tuple[str, ...]  # every file check read or looked for (config, index, shards listed or indexed)
    stamps: Stamps  # the identity of each of those that exists
    listed: tuple[str, ...]  # the *.safetensors names the folder held


def check_folder(source: LocalFolder, plan: a.FixPlan) -> tuple[CheckpointReport, tuple[str, ...]]:
    """check of `source` against the target and runtimes the plan was made for; the files it read."""
    runtimes = plan.runtime_versions or parse_selectors(list(plan.runtimes))
    target = plan.target or TargetVocab(plan.target_vocab_size, "fix", omni=plan.target_omni)
    analysis = analyze(source, target=target, runtimes=runtimes, speculative=plan.speculative)
    index = analysis.loaded.index
    shards = set(analysis.loaded.headers) | set(source.safetensors_files()) | set(index.files if index else ())
    return analysis.report, (CONFIG_NAME, INDEX_NAME, *sorted(shards))


def remaining_errors(report: CheckpointReport, strategy: str | None) -> list[Finding]:
    """Errors check still finds, less those the applied repair leaves by design."""
    accepted = a.ACCEPTED_RESIDUAL.get(strategy or "", frozenset())
    return [f for f in report.findings if f.severity is Severity.ERROR and f.code not in accepted]


def check_staged(stage: Path, dest: Path, plan: a.FixPlan) -> StagedCheck:
    """The one re-check, on what is about to be put in place; raises when it still finds errors."""
    source = StagedAs(stage, dest)
    report, names = check_folder(source, plan)
    errors = remaining_errors(report, plan.strategy)
    if errors:
        shown = "; ".join(f"{f.code} {f.message}" for f in errors[:3])
        raise VerificationError(f"the repaired checkpoint would still fail check ({shown}); it was not put in "
                                "place and nothing was changed",
                                finding("DSP504", f"check of the staged result still finds {shown}"))
    return StagedCheck(report, names, fingerprints(stage, names), tuple(source.safetensors_files()))


def committed_report(dest: Path, staged: StagedCheck, plan: a.FixPlan) -> CheckpointReport:
    """The report of the fixed checkpoint: the staged check, when every file it read is the one now in place."""
    if fingerprints(dest, staged.names) == staged.stamps and tuple(LocalFolder(dest).safetensors_files()) == \
            staged.listed:
        return staged.report
    return check_folder(LocalFolder(dest), plan)[0]
