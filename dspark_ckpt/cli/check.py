"""`dspark-ckpt check`: analyse drafts from config.json and safetensors headers, render, gate on the policy."""

# No `from __future__ import annotations` here: typer reads check()'s annotations on every run, and as strings
# each one would be compiled again by eval (typing.get_type_hints).
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dspark_ckpt.check.batch import MAX_JOBS, run_checks
from dspark_ckpt.check.hints import with_runnable_hints
from dspark_ckpt.check.policy import apply as apply_policy
from dspark_ckpt.check.policy import hidden_count
from dspark_ckpt.cli import options as o
from dspark_ckpt.cli.deploy import deploy_plan, speculative_text
from dspark_ckpt.cli.exits import EXIT_OK, EXIT_USAGE, findings_exit
from dspark_ckpt.cli.inputs import expand_folders, plan_inputs, refuse_wrong_file
from dspark_ckpt.cli.run import (
    Common,
    Run,
    Runs,
    announce_policy,
    diagnose,
    hook_folders,
    read_paths,
    render_context,
    resolve_run,
)
from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.emit import emit
from dspark_ckpt.output.paths import check_report_files
from dspark_ckpt.output.records import summary_line
from dspark_ckpt.output.streams import report_error
from dspark_ckpt.output.table import RENDERERS, RICH_FORMATS
from dspark_ckpt.output.write import stderr_console, stderr_line

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployPlan

# What an in-place fix killed half-way leaves in the checkpoint (repair/journal.py); check completes or rolls it back.
FIX_LEFTOVERS = (".dspark-fix-journal.json", ".dspark-fix-stage")


def check_one(spec: str, run: Run, note: Finding | None = None, deploy: "DeployPlan | None" = None) -> CheckpointReport:
    from dspark_ckpt.check.analysis import analyze
    from dspark_ckpt.sources.resolve import open_source, source_notes

    refuse_wrong_file(spec)
    path = Path(spec)
    try:
        denied = path.exists() and not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0))
    except PermissionError:  # a folder on the way cannot be searched
        denied = True
    if denied:
        raise SourceError(f"{spec}: permission denied", code="DSP-E011")
    if path.is_dir() and any(os.path.lexists(path / name) for name in FIX_LEFTOVERS):
        from dspark_ckpt.repair.journal import note_for_check  # only then: the repair package costs ~20 ms

        stderr_console().print(f"dspark-ckpt: {note_for_check(path)}", markup=False)
    source = open_source(spec, config=run.config, token=run.token)
    bound = deploy.bound(spec) if deploy is not None else None  # the speculative config, where it goes with spec
    analysis = analyze(source, target=run.target, runtimes=run.runtimes,
                       speculative=bound.speculative if bound is not None else None)
    report = analysis.with_findings((note,) if note else ()).with_findings(source_notes(source)).report
    if bound is not None:
        report = bound.publish(report, analysis)
    suggest = None
    if any(f.template and "{fix" in f.template for f in report.findings):
        from dspark_ckpt.repair.suggest import suggester  # only then: planning imports the repair package

        suggest = suggester(analysis)
    return with_runnable_hints(report, spec, run.hints, suggest)


def refuse_non_checkpoints(report: Report) -> None:
    """Neither a config.json nor any weights: a mistyped path, never a green gate, whatever the policy says."""
    for c in report.checkpoints:
        if not c.is_checkpoint:
            raise SourceError(f"{c.source}: not a checkpoint (no config.json and no *.safetensors)", code="DSP-E012",
                              hint="give the draft's folder, a .safetensors file, or org/repo[@rev]")


def render_report(report: Report, run: Run, fmt: o.OutputFormat, output: Path | None,
                  inputs: tuple[str, ...] = (), full: Report | None = None, *, statistics: bool = False,
                  reports: Sequence[tuple[str, Path]] = ()) -> None:
    """The report in the chosen format (stdout or --output), each --report FORMAT=FILE from the same report, and
    the one-line summary on stderr where useful; `statistics`: the counts per code instead of the report."""
    ctx = render_context(run, report, full)

    def plain(width: int) -> str | None:  # text off a terminal without colour: no rich (output/plain_text.py)
        from dspark_ckpt.output import plain_text

        return plain_text.render(report, ctx, width)

    check_report_files([file for _, file in reports], inputs)  # all judged before anything is written
    for name, file in reports:
        emit(lambda console, name=name: RENDERERS[name](report, console, ctx), file, "never",  # type: ignore[misc]
             inputs=inputs, rich=name in RICH_FORMATS, plain=plain if name == "text" else None)
    summary = ((lambda console: RENDERERS["markdown"](report, console, ctx))
               if fmt.value == "github" and not statistics else None)
    if statistics:
        from dspark_ckpt.output import statistics as stats

        emit(lambda console: stats.render(report, console, ctx, as_json=fmt.value == "json"), output,
             run.common.color.value, inputs=inputs, rich=False)
    else:
        emit(lambda console: RENDERERS[fmt.value](report, console, ctx), output, run.common.color.value, summary,
             inputs=inputs, rich=fmt.value in RICH_FORMATS, plain=plain if fmt.value == "text" else None)
    # text, github and concise end with the verdict line themselves
    if not run.common.quiet and (output is not None or statistics or fmt.value not in ("text", "github", "concise")):
        stderr_line(f"dspark-ckpt: {summary_line(report, ctx)}" + (f" (report written to {output})" if output else ""))


def check(
    checkpoints: Annotated[list[str] | None, typer.Argument(
        help="Draft folder, .safetensors file, or org/repo[@rev] (optional when --speculative-config names it).",
        show_default=False)] = None,
    target: o.Target = None,
    target_vocab_size: o.TargetSize = None,
    runtime: o.Runtime = None,
    config: o.Config = None,
    output_format: o.Format = o.TEXT,
    output: o.Output = None,
    report_files: o.Reports = None,
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
    statistics: o.Statistics = False,
    checkpoint_folders: o.CheckpointFolders = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=MAX_JOBS,
                                      help=f"Check this many checkpoints at once (1-{MAX_JOBS}).")] = 1,
    token: o.Token = None,
    revision: o.Revision = None,
    speculative_config: o.SpeculativeConfig = None,
    max_model_len: o.MaxModelLen = None,
    allow_no_target: o.AllowNoTarget = None,
    allow_no_verdict: o.AllowNoVerdict = None,
) -> None:
    """Check drafts from config.json and safetensors headers, per runtime.

    Classification (pruned, equal or padded vocabulary), whether each runtime version loads the draft, and the
    findings; weights are never read and torch is never imported.
    """
    reports = o.parse_reports(report_files, output)
    if statistics and output_format.value not in ("text", "json"):
        raise UsageError(f"--statistics prints counts as text or json, not {output_format.value}", code="DSP-E104",
                         hint="drop --statistics, or use --format text or json with it")
    run = resolve_run(Common(target, target_vocab_size, runtime, config, settings_file, isolated, select,
                             extend_select, ignore, fail_on, exit_zero, quiet, verbose,
                             o.color_choice(color, no_color), token))
    given = hook_folders(checkpoints or []) if checkpoint_folders else o.with_revision(checkpoints or [], revision)
    if checkpoint_folders:  # a hook judges what is committed (issue 41)
        from dspark_ckpt.cli.staged import refuse_not_staged

        refuse_not_staged(given)
    deploy = deploy_plan(run, speculative_config, max_model_len)
    if deploy is None and not given and not checkpoint_folders:
        raise UsageError("no checkpoint given", code="DSP-E026",
                         hint="name a draft folder, a .safetensors file or org/repo, or give --speculative-config")
    if deploy is not None:
        given, deploy = deploy.checkpoints(given, hook=checkpoint_folders), deploy.pair(given, hook=checkpoint_folders)
    given, skipped = expand_folders(given) if not checkpoint_folders else (given, [])
    if not quiet:
        for line in skipped:
            stderr_console().print(f"dspark-ckpt: note: {line}", markup=False)
    inputs = plan_inputs(given)
    notes = {i.spec: i.note for i in inputs}
    runs = Runs(run)
    own = {i.spec: runs.for_checkpoint(i.spec) for i in inputs}  # the nearest settings file of each (issue 41)

    def one(spec: str) -> CheckpointReport:
        report = check_one(spec, own[spec], notes[spec], deploy)
        runs.note(report.source, own[spec])
        return report

    batch = run_checks([i.spec for i in inputs], one, jobs=jobs, progress=None if not quiet else False)
    run = runs.resolved()
    if allow_no_verdict is not None:  # else each checkpoint's settings file decides (cli/run.py resolve_run)
        run = replace(run, policy=run.policy.accepting_no_verdict(allow_no_verdict))
    for _spec, error in batch.failures:  # one line each, even with -q: its report carries DSP702 too
        report_error(error, hint=False)
    full = Report(batch.reports, runtimes=tuple(str(r) for r in run.runtimes))
    report = apply_policy(full, run.policy)
    spec_file = speculative_text(run, speculative_config)
    read = read_paths(run, [i.spec for i in inputs] + ([spec_file] if spec_file else []))
    render_report(report, run, output_format, output, read, full, statistics=statistics, reports=reports)
    announce_policy(run, full, report)
    if verbose:
        diagnose(run, hidden_count(full, report))
    refuse_non_checkpoints(full)
    if batch.failures:
        raise typer.Exit(EXIT_USAGE)  # a checkpoint that could not be checked is never a pass
    code = findings_exit(report, run.policy)
    allowed = allow_no_target if allow_no_target is not None else bool(run.settings.allow_no_target)
    if code == EXIT_OK and not allowed:
        refuse_untargeted(full)
    raise typer.Exit(code)


def refuse_untargeted(report: Report) -> None:
    """No T, so no runtime contract was evaluated: a CI job whose target setting was forgotten must not go green."""
    blind = [c.source for c in report.checkpoints if c.target_vocab_size is None and not c.compatibility]
    if blind:
        shown = ", ".join(blind[:3]) + (f" and {len(blind) - 3} more" if len(blind) > 3 else "")
        raise UsageError(f"no runtime contract was evaluated for {len(blind)} checkpoint(s) ({shown}): the target "
                         "vocabulary T is unknown", code="DSP-E038",
                         hint="pass --target DIR or --target-vocab-size N (or `target`/`target-vocab-size` in "
                              "[tool.dspark-ckpt]); --allow-no-target (or `allow-no-target = true`) accepts "
                              "structural checks only")
