"""`dspark-ckpt fix`: plan from check's analysis, apply atomically, re-check; one document for every checkpoint."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from dspark_ckpt.cli import options as o
from dspark_ckpt.cli.exits import EXIT_NOT_FIXED, EXIT_OK
from dspark_ckpt.cli.progress import wanted
from dspark_ckpt.cli.run import Common, Run, Runs, diagnose, hook_folders, resolve_run
from dspark_ckpt.errors import DsparkCkptError, UsageError
from dspark_ckpt.model.repair_catalog import NAMES as STRATEGIES
from dspark_ckpt.output.documents import fix_document, fix_entry, fix_error_entry
from dspark_ckpt.output.streams import report_error
from dspark_ckpt.output.write import stdout_console

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployPlan
    from dspark_ckpt.output.fix_records import FixRecord

DEFAULT_OUT_SUFFIX = "-fixed"

StrategyChoice = StrEnum("StrategyChoice", {s.upper().replace("-", "_"): s for s in STRATEGIES})  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class FixJob:
    """What every checkpoint of one run shares: the resolved run (T, runtimes, settings), strategy, write mode."""

    run: Run
    strategy: str | None
    out: Path | None
    in_place: bool
    dry_run: bool
    safe_only: bool
    exit_non_zero_on_fix: bool
    json: bool
    deploy: DeployPlan | None = None  # --speculative-config, paired with the checkpoints as check pairs them


def default_out(checkpoint: str) -> Path:
    """`<parent>/<name>-fixed`: beside the draft, never inside it."""
    folder = Path(os.path.abspath(checkpoint))
    if not folder.name:
        raise UsageError(f"{checkpoint}: no folder name to derive the default destination from", code="DSP-E074",
                         hint="pass --out DIR or --in-place")
    return folder.with_name(folder.name + DEFAULT_OUT_SUFFIX)


def fix(
    checkpoints: Annotated[list[str], typer.Argument(help="Draft checkpoint folder(s), or org/repo[@rev] with --push.")],
    target: o.Target = None,
    target_vocab_size: o.TargetSize = None,
    for_: Annotated[list[str] | None, typer.Option(
        "--runtime", "--for", metavar="SELECTOR",
        help="Runtime the result must load on: vllm==X.Y.Z, 'vllm>=X.Y' (repeatable), vllm, sglang, or all; "
             "--for is the same option (default: the settings file's `runtime`, else all: every known vLLM "
             "version and SGLang, as for check).")] = None,
    strategy: Annotated[StrategyChoice | None, typer.Option("--strategy", help="Force one repair.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the complete fixed checkpoint here [default: NAME-fixed beside the checkpoint].")] = None,
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite only the files that change.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and JSON diffs; write nothing.")] = False,
    safe_only: Annotated[bool, typer.Option(
        "--safe-only", help="Apply only metadata-only repairs (JSON edits, small new shards); skip any that "
                            "rewrites tensor data, and exit 1.")] = False,
    exit_non_zero_on_fix: Annotated[bool, typer.Option(
        "--exit-non-zero-on-fix", help="Exit 1 when a repair was written (for hooks: stage it, then commit).")] = False,
    checkpoint_folders: o.CheckpointFolders = False,
    settings_file: o.SettingsFile = None,
    isolated: o.Isolated = False,
    output_format: o.Doc = o.DOC_TEXT,
    quiet: o.Quiet = False,
    verbose: o.Verbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
    push: Annotated[bool, typer.Option("--push", help="Hub repo: open a pull request with the fix.")] = False,
    token: o.Token = None,
    revision: o.Revision = None,
    speculative_config: o.SpeculativeConfig = None,
) -> None:
    """Repair drafts for the runtimes they will run on.

    Plan from check's analysis, write atomically (NAME-fixed beside the checkpoint unless --out or --in-place),
    then re-check the result; --dry-run shows the plan and writes nothing.
    """
    checkpoints = o.with_revision(checkpoints, revision)
    common = Common(target, target_vocab_size, for_, None, settings_file, isolated, quiet=quiet, verbose=verbose,
                    color=o.color_choice(color, no_color), token=token)
    chosen = strategy.value if strategy else None
    if push:  # Hub repos: the repair goes to a pull request (dspark_ckpt/repair/hub.py)
        raise typer.Exit(_push(checkpoints, common, chosen, output_format.value, out=out, in_place=in_place,
                               dry_run=dry_run, refused=safe_only or checkpoint_folders or exit_non_zero_on_fix,
                               speculative_config=speculative_config))
    from dspark_ckpt.repair.apply import destination_conflict

    if out is not None and in_place:
        raise destination_conflict()
    run = resolve_run(common)
    specs = hook_folders(checkpoints) if checkpoint_folders else checkpoints
    if out is not None and len(specs) > 1:
        raise UsageError(f"--out names one folder, but {len(specs)} checkpoints were given", code="DSP-E073",
                         hint="omit --out (each gets NAME-fixed beside it) or use --in-place")
    from dspark_ckpt.cli.deploy import paired_plan

    job = FixJob(run, chosen, out, in_place, dry_run, safe_only, exit_non_zero_on_fix,
                 output_format is o.DOC_JSON, paired_plan(run, speculative_config, specs, hook=checkpoint_folders))
    if verbose:
        diagnose(run, 0)
    from dspark_ckpt.sources.hub_push import is_hub_checkpoint

    if dry_run and len(specs) == 1 and is_hub_checkpoint(specs[0]):  # the plan at the pinned commit, nothing pushed
        from dspark_ckpt.cli.push import dry_run_command

        raise typer.Exit(dry_run_command(specs[0], run, job.strategy, output_format=output_format.value,
                                         served=job.deploy.request_for(specs[0]) if job.deploy else None))
    try:
        code = run_all(specs, job)
    except KeyboardInterrupt as exc:  # Ctrl-C: say what it left (apply removed its staging), exit 130
        Console(stderr=True, highlight=False).print(
            f"dspark-ckpt: interrupted: {getattr(exc, 'message', 'nothing was changed')}"
            + ("; checkpoints finished before it keep their fix" if len(specs) > 1 else ""), markup=False)
        raise typer.Exit(130) from None
    raise typer.Exit(code)


def _push(checkpoints: list[str], common: Common, strategy: str | None, output_format: str, *, out: Path | None,
          in_place: bool, dry_run: bool, refused: bool, speculative_config: str | None = None) -> int:
    """`fix --push`: the usage errors first (DSP-E072, DSP-E059), then the run resolved as for any fix."""
    from dspark_ckpt.cli.push import push_command, push_target

    if len(checkpoints) != 1 or refused:
        raise UsageError("--push takes one Hub repo, without --safe-only, --checkpoint-folders or "
                         "--exit-non-zero-on-fix", code="DSP-E072", hint="those are for local folders")
    spec = push_target(checkpoints[0], target=common.target, target_vocab_size=common.target_vocab_size,
                       runtimes=common.runtime, strategy=strategy, out=out, in_place=in_place, dry_run=dry_run)
    run = resolve_run(common)
    if common.verbose:
        diagnose(run, 0)
    from dspark_ckpt.cli.deploy import paired_plan

    deploy = paired_plan(run, speculative_config, checkpoints)
    return push_command(checkpoints[0], spec, run, strategy, output_format=output_format,
                        served=deploy.request_for(checkpoints[0]) if deploy is not None else None)


def run_all(specs: list[str], job: FixJob) -> int:
    """Fix each checkpoint in turn; one that fails operationally is reported and the others still run."""
    console = stdout_console(job.run.common.color.value)
    docs: list[dict[str, Any]] = []
    worst = EXIT_OK
    runs = Runs(job.run)  # each checkpoint's nearest settings file, as check reads it (issue 41)
    for n, spec in enumerate(specs):
        if n and not job.json and not job.run.common.quiet:
            console.print()
        try:
            code, doc = fix_one(spec, replace(job, run=runs.for_checkpoint(spec)), console)
        except DsparkCkptError as exc:
            if len(specs) == 1:
                raise
            report_error(exc)
            code, doc = exc.exit_code, fix_error_entry(spec, exc.code, str(exc), exc.hint)
        docs.append(doc)
        worst = max(worst, code)
    if job.json:
        console.file.write(json.dumps(fix_document(docs), indent=2) + "\n")
    return worst


def fix_one(spec: str, job: FixJob, console: Console) -> tuple[int, dict[str, Any]]:
    """Plan, then (unless dry run, refused, or skipped by --safe-only) apply; render; return (exit code, JSON)."""
    from dspark_ckpt.repair.render import fix_record
    from dspark_ckpt.sources.resolve import hub_repo, missing_path

    if not os.path.lexists(spec):
        if hub_repo(spec) is None:  # a mistyped path: DSP-E010 saying what is there
            raise missing_path(spec)
        raise UsageError(f"{spec} is no local path but a Hub repo id, and fix writes a local folder", code="DSP-E062",
                         hint="add --dry-run to see the plan, or --push to open a pull request with it")
    plan, result, skipped = _plan_and_apply(spec, job)
    broken = job.run.stays_broken(plan.not_repaired_for, plan.older_than_architecture) if plan.refusal is None else ()
    record = fix_record(plan, result, in_place=job.in_place, dry_run=job.dry_run, skipped=skipped,
                        stays_broken=broken)
    if not job.json:
        _render_text(record, console, quiet=job.run.common.quiet, dry_run=job.dry_run)
    code = _exit_code(plan, result, job, bool(skipped))
    return (EXIT_NOT_FIXED if broken else code), fix_entry(record)


REPLANS = 3  # how often a fix plans again when another fix committed between its plan and its write


def _plan_and_apply(spec: str, job: FixJob) -> tuple[Any, Any, list[str]]:
    """Plan, then (unless dry run, refused, or skipped by --safe-only) apply. A plan whose source files are no
    longer the ones it was made from is refused before anything is written (binding.StalePlan), and made again
    from what is there now: after another fix committed, that plan finds what is left to do, often nothing."""
    from dspark_ckpt.repair import apply_fix, plan_for
    from dspark_ckpt.repair.apply import out_exists, out_taken
    from dspark_ckpt.repair.binding import StalePlan
    from dspark_ckpt.repair.safety import unsafe_reasons

    replanned = None
    for attempt in range(REPLANS + 1):
        plan = plan_for(spec, job.run.target, job.run.repair_runtimes, job.strategy,
                        selectors=job.run.repair_selectors, hints=job.run.hints,
                        served=job.deploy.request_for(spec) if job.deploy is not None else None)
        plan = replace(plan, replanned=replanned) if replanned else plan
        skipped = unsafe_reasons(plan) if job.safe_only else []
        out = job.out
        if out is None and not job.in_place and not job.dry_run:
            out = default_out(spec)
            if plan.changes_anything and not skipped and out_taken(out):
                raise out_exists(out, f"{out.name} is fix's default destination, maybe left by an earlier fix: "
                                      "remove it, or pass --out DIR or --in-place")
        if not plan.changes_anything or job.dry_run or skipped:
            return plan, None, skipped
        bars = Console(stderr=True) if wanted(job.run.common.quiet) else None  # a terminal, and not -q
        try:
            return plan, apply_fix(plan, out=None if job.in_place else out, in_place=job.in_place,
                                   console=bars), skipped
        except StalePlan as exc:
            if attempt == REPLANS:
                raise
            replanned = (f"{', '.join(exc.names[:3])} changed after fix planned (another fix committed?); "
                         "planned again from what is there now")
    raise AssertionError("unreachable")


def _render_text(record: FixRecord, console: Console, *, quiet: bool, dry_run: bool) -> None:
    from dspark_ckpt.output.fix_text import quiet_line, render_plan_text, render_result_text, render_skip_text

    if quiet:  # -q: one line, or nothing when there is nothing to do
        if (line := quiet_line(record)) is not None:
            console.print(line, markup=False, highlight=False)
        return
    render_plan_text(record, console, diff=dry_run)
    if record.skipped:
        render_skip_text(record, console)
    elif record.result is not None:
        render_result_text(record.result, console)
    elif dry_run and record.status == "planned":
        console.print("dry run: nothing was written", style="dim")


def _exit_code(plan: object, result: object, job: FixJob, skipped: bool) -> int:
    from dspark_ckpt.repair import FixPlan, FixResult

    assert isinstance(plan, FixPlan)
    if plan.refusal is not None or skipped or (job.dry_run and plan.changes_anything):
        return EXIT_NOT_FIXED
    if isinstance(result, FixResult):
        return EXIT_NOT_FIXED if result.errors or job.exit_non_zero_on_fix else EXIT_OK
    return EXIT_OK
