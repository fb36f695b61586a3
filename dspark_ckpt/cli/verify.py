"""`dspark-ckpt verify`: load drafts with torch as each runtime would; torch is imported only when it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dspark_ckpt import __version__
from dspark_ckpt.check.policy import apply as apply_policy
from dspark_ckpt.check.policy import hidden_count
from dspark_ckpt.cli import options as o
from dspark_ckpt.cli.exits import findings_exit
from dspark_ckpt.cli.run import Common, Run, diagnose, resolve_run
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.emit import emit
from dspark_ckpt.output.table import RENDERERS
from dspark_ckpt.verify.engine import Engine

if TYPE_CHECKING:
    from rich.console import Console

    from dspark_ckpt.verify.result import VerifyResult
    from dspark_ckpt.verify.torch_loader import VerifyOptions


def verify_all(checkpoints: list[str], run: Run, options: VerifyOptions) -> list[tuple[CheckpointReport,
                                                                                          VerifyResult]]:
    from dspark_ckpt.sources.resolve import open_source
    from dspark_ckpt.verify import torch_loader

    device = torch_loader.resolve_device(options.device)
    return [torch_loader.verify_checkpoint(open_source(spec, config=run.config, token=run.token), target=run.target,
                                           runtimes=run.runtimes, options=options, device=device)
            for spec in checkpoints]


def render(report: Report, results: list[VerifyResult], run: Run, fmt: o.OutputFormat, console: Console,
           engines: list[dict[str, Any]] | None = None) -> None:
    from dspark_ckpt.output.documents import verify_document
    from dspark_ckpt.output.render import render_text
    from dspark_ckpt.verify.engine_report import render_engine
    from dspark_ckpt.verify.render import render_verify
    from dspark_ckpt.verify.result import verify_json

    engines = engines or [{} for _ in results]
    if fmt is o.OutputFormat.JSON:
        docs = [verify_json(r) | ({"engine": e} if e else {}) for r, e in zip(results, engines)]
        console.file.write(json.dumps(verify_document(report, docs), indent=2) + "\n")
    elif fmt is o.OutputFormat.TEXT:
        render_text(report, console)
        for result, engine_doc in zip(results, engines):
            render_verify(result, console)
            render_engine(engine_doc, console)
    else:  # the CI formats report verify's findings exactly as they report check's
        ctx = RenderContext(fail_on=run.policy.fail_on, tool_version=__version__, root=Path.cwd(),
                            quiet=run.common.quiet)
        RENDERERS[fmt.value](report, console, ctx)


def _engine(pairs: list[tuple[CheckpointReport, VerifyResult]], checkpoints: list[str], run: Run, engine: Engine,
            device: str) -> tuple[list[tuple[CheckpointReport, VerifyResult]], list[dict[str, Any]]]:
    from dspark_ckpt.verify.engine_report import with_engine
    from dspark_ckpt.verify.torch_loader import resolve_device

    return with_engine(pairs, checkpoints, run, engine, str(resolve_device(device)))


def verify(
    checkpoints: Annotated[list[str], typer.Argument(help="Local draft folder or .safetensors file.")],
    target: o.Target = None,
    target_vocab_size: o.TargetSize = None,
    runtime: o.Runtime = None,
    config: o.Config = None,
    output_format: o.Format = o.OutputFormat.TEXT,
    output: o.Output = None,
    device: Annotated[str, typer.Option("--device", help="auto (cuda if present), cpu, cuda or cuda:N.")] = "auto",
    engine: Annotated[Engine, typer.Option("--engine", help="modelled: the contract table run with torch; installed: "
                                           "the installed vLLM's own __init__ and load_weights (modelled where "
                                           "it cannot run, and said so).")] = Engine.MODELLED,
    probe: Annotated[int, typer.Option("--probe", min=0, help="Probe vectors for the padded-row risk "
                                                             "(half embedding rows, half Gaussian).")] = 4096,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the probe vectors.")] = 0,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="k of the top-k illegal-row count.")] = 8,
    fail_on: o.FailOn = None,
    select: o.Select = None,
    extend_select: o.ExtendSelect = None,
    ignore: o.Ignore = None,
    exit_zero: o.ExitZero = None,
    settings_file: o.SettingsFile = None,
    isolated: o.Isolated = False,
    quiet: o.Quiet = False,
    verbose: o.Verbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
    token: o.Token = None,
) -> None:
    """Load drafts with torch as each runtime would.

    The exact load error of each runtime version, the d2t mapping as the device computes it, and the risk that
    padded lm_head rows propose ids the target does not have.
    """
    from dspark_ckpt.verify.torch_loader import VerifyOptions

    run = resolve_run(Common(target, target_vocab_size, runtime, config, settings_file, isolated, select,
                             extend_select, ignore, fail_on, exit_zero, quiet, verbose,
                             o.color_choice(color, no_color), token))
    pairs = verify_all(checkpoints, run, VerifyOptions(device=device, probes=probe, seed=seed, top_k=top_k))
    pairs, engines = _engine(pairs, checkpoints, run, engine, device)
    full = Report(tuple(p[0] for p in pairs), runtimes=tuple(str(r) for r in run.runtimes))
    report = apply_policy(full, run.policy)
    results = [p[1] for p in pairs]
    emit(lambda console: render(report, results, run, output_format, console, engines), output, color.value)
    if verbose:
        diagnose(run, hidden_count(full, report))
    raise typer.Exit(findings_exit(report, run.policy))
