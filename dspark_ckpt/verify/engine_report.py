"""The `--engine` step of `verify`: hand each verified checkpoint to the chosen engine, render what it answered."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.verify.engine import Engine, Subject, apply_engine

if TYPE_CHECKING:
    from rich.console import Console

    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.verify.result import VerifyResult


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


def with_engine(pairs: Sequence[tuple[CheckpointReport, VerifyResult]], specs: Sequence[str], run: RunInputs,
                engine: Engine, device: str) -> tuple[list[tuple[CheckpointReport, VerifyResult]],
                                                       list[dict[str, Any]]]:
    """The reports with the installed runtime's own answer where it could give one, and one engine doc each."""
    if engine is Engine.MODELLED:
        return list(pairs), [{"engine": Engine.MODELLED.value} for _ in pairs]
    subjects = [_subject(spec, report, result, run) for spec, (report, result) in zip(specs, pairs)]
    answered = apply_engine(subjects, engine, device="cpu" if device == "cpu" else device)
    return [(report, pair[1]) for (report, _), pair in zip(answered, pairs)], [doc for _, doc in answered]


def render_engine(doc: dict[str, Any], console: Console) -> None:
    """Which loader answered; for the installed one, its exception verbatim and the state it left."""
    from rich.text import Text

    if doc.get("engine") != Engine.INSTALLED.value:
        if doc.get("fallback"):
            console.print(Text(f"engine: modelled (--engine installed fell back: {doc['fallback']})",
                               style="yellow"))
        return
    head = f"engine: installed vLLM {doc['version']} ({doc.get('model_class') or 'not registered'})"
    console.print(Text(head, style="bold"))
    console.print(Text(f"  answers for vllm=={doc['version']} only; every other row: the modelled loader", style="dim"))
    if doc.get("exception"):
        console.print(Text(f"  raised in {doc.get('phase') or 'registry'}: {doc['exception']}", style="red"),
                      overflow="fold")
    else:
        console.print(Text("  __init__ and load_weights completed", style="green"))
    state = doc.get("state") or {}
    if state:
        d2t = state.get("d2t") or {}
        table = ("none" if not state.get("d2t_param") else
                 f"loaded ({d2t.get('out_of_range', 0)} ids >= T)" if state.get("d2t_loaded") else "all zeros")
        def own(flag: str) -> str:
            return "the draft's own" if state.get(flag) else "none of its own (load_*_model shares or leaves it)"

        console.print(f"  lm_head: {own('has_own_lm_head')}; embed_tokens: {own('has_own_embed_tokens')}; "
                      f"draft_id_to_target_id: {table}", markup=False)
    if doc.get("disagreement"):
        console.print(Text(f"  the contract table disagrees: {doc['disagreement']}", style="yellow"),
                      overflow="fold")
