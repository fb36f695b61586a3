"""`dspark-ckpt verify`: load drafts with torch as each runtime would; torch is imported only when it runs."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from dspark_ckpt.check.policy import hidden_count, selected
from dspark_ckpt.cli import options as o
from dspark_ckpt.cli.exits import EXIT_USAGE, findings_exit
from dspark_ckpt.cli.inputs import plan_inputs, refuse_wrong_file
from dspark_ckpt.cli.progress import PhaseBar, wanted
from dspark_ckpt.cli.run import (
    Common,
    Run,
    announce_policy,
    diagnose,
    read_paths,
    render_context,
    resolve_run,
)
from dspark_ckpt.errors import DsparkCkptError, UsageError
from dspark_ckpt.model.report import Report
from dspark_ckpt.output.emit import emit
from dspark_ckpt.output.streams import report_error
from dspark_ckpt.output.table import RENDERERS
from dspark_ckpt.verify.budget import ProbeBudget
from dspark_ckpt.verify.engine import Engine

if TYPE_CHECKING:
    from rich.console import Console

    from dspark_ckpt.check.deploy import DeployPlan
    from dspark_ckpt.output.verify_records import VerifiedCheckpoint
    from dspark_ckpt.verify.torch_loader import VerifyOptions


def local_spec(spec: str) -> None:
    """A Hub repo id is refused at once, before any request: verify reads tensor data, so it needs local files. A
    path, or a name shaped like one (sources/resolve.py `hub_repo`), passes: open_source reports a missing one."""
    from dspark_ckpt.sources.resolve import hub_repo

    repo = hub_repo(spec)
    if repo is not None:
        raise UsageError(f"{spec}: verify reads tensor data and needs a local checkpoint, not a Hub repo",
                         code="DSP-E042", hint=f"download it first (hf download {repo.repo_id} --local-dir DIR), "
                                               f"then verify DIR; `dspark-ckpt check {shlex.quote(spec)}` works remotely")


def verify_all(checkpoints: list[str], run: Run, options: VerifyOptions, deploy: DeployPlan | None = None) -> tuple[
        list[VerifiedCheckpoint], list[tuple[str, DsparkCkptError]]]:
    """Each checkpoint in turn; as in check, one that cannot be opened is a DSP702 entry and the rest still run."""
    from dspark_ckpt.check.batch import run_each, unavailable_report
    from dspark_ckpt.check.hints import with_runnable_hints
    from dspark_ckpt.output.verify_records import VerifiedCheckpoint, VerifyResult
    from dspark_ckpt.sources.resolve import open_source
    from dspark_ckpt.verify import torch_loader
    from dspark_ckpt.verify.checkpoint import verify_checkpoint

    device = torch_loader.resolve_device(options.device)
    inputs = plan_inputs(checkpoints)
    with PhaseBar(enabled=wanted(run.common.quiet)) as bar:
        numbered = {i.spec: n for n, i in enumerate(inputs, 1)}
        notes = {i.spec: i.note for i in inputs}

        def one(spec: str) -> VerifiedCheckpoint:
            bar.item(numbered[spec], len(inputs), spec)
            refuse_wrong_file(spec)
            local_spec(spec)
            source = open_source(spec, config=run.config, token=run.token)
            report, result = verify_checkpoint(source, target=run.target, runtimes=run.runtimes,
                                               options=replace(options, progress=bar), device=device,
                                               deploy=deploy.bound(spec) if deploy is not None else None)
            note = notes[spec]
            report = replace(report, findings=report.findings + (note,)) if note else report
            return VerifiedCheckpoint(with_runnable_hints(report, spec, run.hints), result)

        specs = [i.spec for i in inputs]
        if len(specs) == 1:
            return [one(specs[0])], []  # one checkpoint: its error is the run's (exit 2), as in check
        outcomes = run_each(specs, one, jobs=1, progress=False)
    verified: list[VerifiedCheckpoint] = []
    failures: list[tuple[str, DsparkCkptError]] = []
    for spec, outcome in zip(specs, outcomes):
        if isinstance(outcome, DsparkCkptError):
            failures.append((spec, outcome))
            verified.append(VerifiedCheckpoint(unavailable_report(spec, outcome), VerifyResult(
                device=str(device), torch_version="", skipped=f"[{outcome.code}] {outcome}")))
        else:
            verified.append(outcome)
    return verified, failures


def render(report: Report, verified: list[VerifiedCheckpoint], run: Run, fmt: o.OutputFormat, console: Console,
           full: Report | None = None) -> None:
    """`verified`: each checkpoint of `report` (as the policy shows it) with what torch observed; `full`: the report
    before select/ignore, from which the JSON and SARIF documents record the policy."""
    from dspark_ckpt.output.documents import verify_document
    from dspark_ckpt.output.records import summary_line
    from dspark_ckpt.output.render import render_text, render_text_quiet
    from dspark_ckpt.output.verify_text import render_engine, render_verify

    ctx = render_context(run, report, full)
    if fmt.value == "json":
        document = verify_document(report.runtimes, verified)
        if ctx.policy is not None:  # the same `policy` object as check's document (docs/json.md)
            document = {**document, "policy": ctx.policy}
        console.file.write(json.dumps(document, indent=2) + "\n")
    elif fmt.value == "text":
        if run.common.quiet:
            render_text_quiet(report, console, ctx)
            return
        for i, v in enumerate(verified):
            render_text(Report((v.report,), report.runtimes), console, ctx, summary=False, legend=i == 0, long=True)
            render_verify(v.result, console)
            render_engine(v.engine or {}, console)
            console.print()
        console.print(summary_line(report, ctx))  # the verdict line last, after every section
    else:  # the CI formats report verify's findings exactly as they report check's
        RENDERERS[fmt.value](report, console, ctx)


def _engine(verified: list[VerifiedCheckpoint], checkpoints: list[str], run: Run, engine: Engine,
            device: str, deploy: DeployPlan | None) -> list[VerifiedCheckpoint]:
    from dspark_ckpt.verify.engine_report import with_engine
    from dspark_ckpt.verify.torch_loader import resolve_device

    specs = [i.spec for i in plan_inputs(checkpoints)]
    return with_engine(verified, specs, run, engine, str(resolve_device(device)), deploy)


def _probe(value: str) -> ProbeBudget:
    from dspark_ckpt.verify.budget import parse_probe

    try:
        return parse_probe(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def verify(
    checkpoints: Annotated[list[str], typer.Argument(help="Local draft folder or .safetensors file.")],
    target: o.Target = None,
    target_vocab_size: o.TargetSize = None,
    runtime: o.Runtime = None,
    config: o.Config = None,
    output_format: o.Format = o.TEXT,
    output: o.Output = None,
    device: Annotated[str, typer.Option("--device", help="auto (cuda if present), cpu, cuda or cuda:N.")] = "auto",
    engine: Annotated[Engine, typer.Option("--engine", help="modelled: the contract table run with torch; installed: "
                                           "the installed vLLM's own __init__ and load_weights (modelled where "
                                           "it cannot run, and said so).")] = Engine.MODELLED,
    probe: Annotated[ProbeBudget, typer.Option(
        "--probe", parser=_probe, metavar="auto|N|Ns",
        help="Padded-row probes (half embedding rows, half Gaussian): auto sizes them to about 5 s on CPU and runs "
             "65,536 on CUDA; N runs exactly N (0: off); Ns fits a budget of N seconds.")] = "auto",  # type: ignore[assignment]
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
    speculative_config: o.SpeculativeConfig = None,
) -> None:
    """Load drafts with torch as each runtime would.

    The exact load error of each runtime version, the d2t mapping as the device computes it, and the risk that
    padded lm_head rows propose ids the target does not have.
    """
    from dspark_ckpt.cli.deploy import paired_plan, speculative_text
    from dspark_ckpt.verify.torch_loader import VerifyOptions

    run = resolve_run(Common(target, target_vocab_size, runtime, config, settings_file, isolated, select,
                             extend_select, ignore, fail_on, exit_zero, quiet, verbose,
                             o.color_choice(color, no_color), token))
    deploy = paired_plan(run, speculative_config, checkpoints)
    verified, failures = verify_all(checkpoints, run, VerifyOptions(device=device, seed=seed, top_k=top_k,
                                                                      budget=probe), deploy)
    verified = _engine(verified, checkpoints, run, engine, device, deploy)
    for _spec, error in failures:  # one line each on stderr, even with -q, as check does
        report_error(error, hint=False)
    runtimes = tuple(str(r) for r in run.runtimes)
    full = Report(tuple(v.report for v in verified), runtimes=runtimes)
    shown = [replace(v, report=selected(v.report, run.policy)) for v in verified]
    report = Report(tuple(v.report for v in shown), runtimes=runtimes)
    spec_file = speculative_text(run, speculative_config)
    emit(lambda console: render(report, shown, run, output_format, console, full), output, color.value,
         inputs=read_paths(run, checkpoints + ([spec_file] if spec_file else [])))
    announce_policy(run, full, report)
    if verbose:
        diagnose(run, hidden_count(full, report))
    if failures:
        raise typer.Exit(EXIT_USAGE)  # a checkpoint that could not be verified is never a pass
    raise typer.Exit(findings_exit(report, run.policy))
