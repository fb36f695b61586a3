"""Check many checkpoints, optionally concurrently (`--jobs N`): results in input order, one failure never stops the rest."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from dspark_ckpt.errors import DsparkCkptError, UsageError
from dspark_ckpt.model.findings import finding
from dspark_ckpt.model.report import CheckpointReport

MAX_JOBS = 64
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What a batch of checks produced: a report per checkpoint checked, and the ones that could not be."""

    reports: tuple[CheckpointReport, ...]
    failures: tuple[tuple[str, DsparkCkptError], ...]  # (spec, error) for checkpoints that could not be checked


def unavailable_report(spec: str, error: DsparkCkptError) -> CheckpointReport:
    """A checkpoint that could not be opened, as a report with one DSP702 finding (so JSON stays one document)."""
    f = finding("DSP702", f"[{error.code}] {error}", hint=error.hint)
    return CheckpointReport(source=spec, revision=None, family=None, architecture=None, draft_vocab_size=None,
                            input_vocab_size=None, target_vocab_size=None, target_vocab_source=None, vocab_kind=None,
                            input_kind=None, hidden_size=None, tensors=(), compatibility=(), findings=(f,))


def check_jobs(jobs: int) -> int:
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be between 1 and {MAX_JOBS}, got {jobs}", code="DSP-E058")
    return jobs


def quiet_hub_logs() -> None:
    """huggingface_hub logs each retry with its URL on stderr; our own errors say what failed, once."""
    import logging  # here, not at the top: a local check never needs it

    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def run_checks(specs: Sequence[str], check_one: Callable[[str], CheckpointReport], *, jobs: int = 1,
               progress: bool | None = None) -> BatchResult:
    """One spec: its error propagates (exit 2). Several: each error becomes a DSP702 report, the rest go on."""
    if not specs:  # e.g. a pre-commit run whose changed files hold no checkpoint
        return BatchResult((), ())
    if not all(os.path.lexists(spec) for spec in specs):  # a Hub repo among them
        quiet_hub_logs()
    if len(specs) == 1:
        return BatchResult((check_one(specs[0]),), ())
    outcomes = run_each(specs, check_one, jobs=check_jobs(jobs), progress=progress)
    reports, failures = [], []
    for spec, outcome in zip(specs, outcomes):
        if isinstance(outcome, DsparkCkptError):
            failures.append((spec, outcome))
            reports.append(unavailable_report(spec, outcome))
        else:
            reports.append(outcome)
    return BatchResult(tuple(reports), tuple(failures))


def _guarded(work: Callable[[str], T], spec: str) -> T | DsparkCkptError:
    try:
        return work(spec)
    except DsparkCkptError as exc:  # operational: this checkpoint only; anything else is a bug and propagates
        return exc


def run_each(specs: Sequence[str], work: Callable[[str], T], *, jobs: int = 1, progress: bool | None = None,
             verb: str = "checking") -> list[T | DsparkCkptError]:
    """`work` on every spec (in `jobs` threads), results in input order; an operational error is that spec's result.

    The bar (rich, on stderr) shows only when stderr is a terminal, unless `progress` says otherwise (-q: False).
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    show = sys.stderr.isatty() if progress is None else progress
    columns = (TextColumn(verb), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, disable=not show) as bar, \
            ThreadPoolExecutor(max_workers=max(1, min(jobs, len(specs))), thread_name_prefix="dspark-check") as pool:
        task = bar.add_task(verb, total=len(specs))
        futures: list[Future[T | DsparkCkptError]] = []
        for spec in specs:
            future = pool.submit(_guarded, work, spec)
            future.add_done_callback(lambda _f: bar.advance(task))
            futures.append(future)
        return [f.result() for f in futures]  # input order, whatever order they finished in
