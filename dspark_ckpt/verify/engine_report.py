"""The `--engine` step of `verify`: hand each verified checkpoint to the chosen engine (output/verify_text.py
renders what it answered)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.output.verify_records import VerifiedCheckpoint
from dspark_ckpt.verify.engine import Engine, Subject, apply_engine

if TYPE_CHECKING:
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.output.verify_records import VerifyResult


class RunInputs(Protocol):
    """What the engine step needs of the CLI's resolved run (verify sits below cli: it never imports it)."""

    @property
    def config(self) -> Path | None: ...
    @property
    def token(self) -> str | None: ...
    @property
    def target(self) -> TargetVocab | None: ...


def _subject(spec: str, report: CheckpointReport, result: VerifyResult, run: RunInputs) -> Subject:
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.sources.resolve import open_source

    if result.skipped is not None:
        return Subject(report, None, None)
    try:
        source = open_source(spec, config=run.config, token=run.token)
        analysis = analyze(source, target=run.target, runtimes=())
    except DsparkCkptError:
        return Subject(report, None, None)
    folder = getattr(source, "folder", None)
    cfg = analysis.config
    return Subject(report, folder, analysis.facts, bool(cfg and cfg.parallel_drafting))


def with_engine(verified: Sequence[VerifiedCheckpoint], specs: Sequence[str], run: RunInputs, engine: Engine,
                device: str) -> list[VerifiedCheckpoint]:
    """Each checkpoint with the installed runtime's own answer where it could give one, and its engine doc."""
    if engine is Engine.MODELLED:
        return [replace(v, engine={"engine": Engine.MODELLED.value}) for v in verified]
    subjects = [_subject(spec, v.report, v.result, run) for spec, v in zip(specs, verified)]
    answered = apply_engine(subjects, engine, device="cpu" if device == "cpu" else device)
    return [replace(v, report=report, engine=doc) for v, (report, doc) in zip(verified, answered)]
