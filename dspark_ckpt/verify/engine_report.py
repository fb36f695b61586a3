"""The `--engine` step of `verify`: hand each verified checkpoint to the chosen engine (output/verify_text.py
renders what it answered)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.model.findings import Severity, rule
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.rule_catalog import Category
from dspark_ckpt.output.verify_records import VerifiedCheckpoint
from dspark_ckpt.verify.engine import Engine, Subject, apply_engine, availability

if TYPE_CHECKING:
    from dspark_ckpt.check.analysis import Analysis
    from dspark_ckpt.check.deploy import DeployPlan
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


def _loadable(analysis: Analysis) -> bool:
    """Whether a runtime can be handed the files: a known T, and no header or layout error in the safetensors."""
    if analysis.target is None:
        return False
    return not any(f.severity is Severity.ERROR and rule(f.code).category in (Category.HEADER, Category.LAYOUT)
                   for f in analysis.findings)


def _subject(spec: str, report: CheckpointReport, result: VerifyResult, run: RunInputs,
             installed: Sequence[tuple[str, str]], deploy: DeployPlan | None = None) -> Subject:
    """What the engine needs of one checkpoint: check's analysis of it for each installed release, so that a draft
    no family describes, which verify's torch run skips, is still loaded by the release's own class."""
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.runtimes.selectors import RuntimeVersion
    from dspark_ckpt.sources.resolve import open_source

    speculative = deploy.speculative_for(spec) if deploy is not None else None
    try:
        source = open_source(spec, config=run.config, token=run.token)
        analysis = analyze(source, target=run.target, runtimes=[RuntimeVersion(r, v) for r, v in installed],
                           speculative=speculative)
    except DsparkCkptError:
        return Subject(report, None, None)
    if (result.skipped is not None and analysis.facts is not None) or not _loadable(analysis):
        return Subject(report, None, None)
    folder = getattr(source, "folder", None)
    cfg = analysis.config
    builds = {b.runtime: b for b in analysis.builds}
    verdicts = {v.runtime: v for v in analysis.verdicts}
    target = analysis.target
    model = analysis.method.model if analysis.method is not None else None
    return Subject(report, folder, analysis.facts, bool(cfg and cfg.parallel_drafting), builds, verdicts,
                   {n: tuple(t.shape) for n, t in analysis.tensors.items()},
                   target.size if target is not None else None, target.hidden if target is not None else None,
                   served=speculative, served_as=Path(model).name if speculative is not None and model else None)


def with_engine(verified: Sequence[VerifiedCheckpoint], specs: Sequence[str], run: RunInputs, engine: Engine,
                device: str, deploy: DeployPlan | None = None) -> list[VerifiedCheckpoint]:
    """Each checkpoint with the installed runtime's own answer where it could give one, and its engine doc;
    `deploy`: the run's --speculative-config, whose method routes each checkpoint it goes with, as in check."""
    if engine is Engine.MODELLED:
        return [replace(v, engine={"engine": Engine.MODELLED.value}) for v in verified]
    installed = availability(engine).runtimes
    subjects = [_subject(spec, v.report, v.result, run, installed, deploy) for spec, v in zip(specs, verified)]
    answered = apply_engine(subjects, engine, device="cpu" if device == "cpu" else device)
    return [replace(v, report=report, engine=doc) for v, (report, doc) in zip(verified, answered)]
