"""The typer app: parse options, build sources, call the core, render, and return an exit code."""

from __future__ import annotations

import io
import os
import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Protocol, runtime_checkable

import typer
from rich.console import Console

from dspark_ckpt import __version__
from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.check.batch import report_failures, run_checks
from dspark_ckpt.check.policy import Layer, Policy, hidden_count, normalize, resolve
from dspark_ckpt.check.policy import apply as apply_policy
from dspark_ckpt.cli.settings import Settings, load_settings
from dspark_ckpt.errors import DsparkCkptError, SourceError, UsageError
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.render import summary_line
from dspark_ckpt.output.table import RENDERERS
from dspark_ckpt.output.write import (
    append_step_summary,
    make_console,
    stream_facts,
    write_atomic,
    write_stdout,
)
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME
from dspark_ckpt.sources.resolve import open_source, with_source_notes
from dspark_ckpt.sources.target import resolve_target

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Check and repair speculative-decoding draft checkpoints before you deploy them.")


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"
    GITHUB = "github"
    JUNIT = "junit"
    MARKDOWN = "markdown"


class ColorChoice(StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


def _version(value: bool) -> None:
    if value:
        print(f"dspark-ckpt {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """dspark-ckpt: finds what breaks a draft on each runtime, from headers alone."""


def stdout_console() -> Console:
    return Console(soft_wrap=False, highlight=False)  # rich honours COLUMNS and NO_COLOR


def exit_code(report: Report, fail_on: Severity) -> int:
    return EXIT_FINDINGS if any(f.severity.rank >= fail_on.rank for f in report.findings) else EXIT_OK


TargetOpt = Annotated[str | None, typer.Option("--target", help="Target model folder (or its config.json).")]
TargetSizeOpt = Annotated[int | None, typer.Option("--target-vocab-size", help="Target vocab T, if no --target.")]
RuntimeOpt = Annotated[list[str] | None, typer.Option(
    "--runtime", help="vllm==X.Y.Z, vllm, sglang or all (repeatable; default: every known version).")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help="Output format.")]
FailOnOpt = Annotated[Severity | None, typer.Option("--fail-on", help="Exit 1 at or above this severity "
                                                                           "[default: error].")]
CodesOpt = Annotated[list[str] | None, typer.Option(help="Finding codes or prefixes (repeatable, or comma-separated).")]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="config.json for a single .safetensors file; a *.toml file here is read as --settings.")]


def _settings(config: Path | None, settings_file: Path | None, isolated: bool) -> tuple[Settings, Path | None]:
    """Settings from the file, and the draft config.json path left for the source. A `.toml` --config is settings:
    a draft config is JSON, so the suffix cannot be ambiguous."""
    if config is not None and config.suffix.lower() == ".toml":
        if settings_file is not None:
            raise UsageError("give the settings file once: --settings or a .toml --config", code="DSP-E024")
        settings_file, config = config, None
    return load_settings(Path.cwd(), explicit=settings_file, isolated=isolated), config


def _cli_layer(select: list[str] | None, extend_select: list[str] | None, ignore: list[str] | None,
               fail_on: Severity | None, exit_zero: bool | None) -> Layer:
    return Layer(select=normalize(select, "--select") if select is not None else None,
                 extend_select=normalize(extend_select or [], "--extend-select"),
                 ignore=normalize(ignore, "--ignore") if ignore is not None else None,
                 fail_on=fail_on, exit_zero=exit_zero)


def _target(target: str | None, size: int | None, settings: Settings,
            token: str | None = None) -> TargetVocab | None:
    if target is None and size is None:  # either flag replaces both settings keys: they are one choice
        target, size = settings.target, settings.target_vocab_size
    return resolve_target(target, size, token=token)


def hook_folders(paths: list[str]) -> list[str]:
    """For hooks that pass changed file names: each checkpoint file's folder, once. Other files are skipped, and so
    is a config.json in a folder with no weights and no index: it is some other tool's config, not a draft's."""
    folders: list[str] = []
    for raw in paths:
        path = Path(raw)
        folder = path if path.is_dir() else path.parent
        has_weights = (folder / INDEX_NAME).exists() or any(folder.glob("*.safetensors"))
        if not path.is_dir() and not (path.name.endswith(".safetensors") or path.name == INDEX_NAME
                                      or (path.name == CONFIG_NAME and has_weights)):
            continue
        if str(folder) not in folders:
            folders.append(str(folder))
    return folders


def _inspect(spec: str, config: Path | None, target: TargetVocab | None,
             runtimes: list[RuntimeVersion], token: str | None = None) -> CheckpointReport:
    path = Path(spec)
    if path.exists() and not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise SourceError(f"{spec}: permission denied", code="DSP-E011")
    source = open_source(spec, config=config, token=token)
    return with_source_notes(inspect_checkpoint(source, target=target, runtimes=runtimes), source)


def refuse_non_checkpoints(report: Report) -> None:
    """Neither a config.json nor any weights: a mistyped path, never a green gate, whatever the policy says."""
    for c in report.checkpoints:
        if {"DSP101", "DSP201"} <= {f.code for f in c.findings}:
                raise SourceError(f"{c.source}: not a checkpoint (no config.json and no *.safetensors)", code="DSP-E012",
                              hint="give the draft's folder, a .safetensors file, or org/repo[@rev]")


def emit(report: Report, fmt: OutputFormat, output: Path | None, ctx: RenderContext, color: ColorChoice) -> None:
    """Render once into a string, then write it to stdout or atomically to --output; github also fills the summary."""
    terminal, width = stream_facts(sys.stdout) if output is None else (False, int(os.environ.get("COLUMNS", "100")))
    buffer = io.StringIO()
    console = make_console(buffer, color=color.value if output is None else "never", terminal=terminal, width=width)
    RENDERERS[fmt.value](report, console, ctx)
    if output is None:
        write_stdout(buffer.getvalue())
    else:
        write_atomic(output, buffer.getvalue())
    if fmt is OutputFormat.GITHUB and os.environ.get("GITHUB_STEP_SUMMARY"):
        summary = io.StringIO()
        RENDERERS["markdown"](report, make_console(summary, color="never", terminal=False, width=width), ctx)
        append_step_summary(os.environ["GITHUB_STEP_SUMMARY"], summary.getvalue())


def _diagnose(settings: Settings, policy: Policy, hidden: int, isolated: bool) -> None:
    """-v: what shaped this run, on stderr so machine output on stdout stays clean."""
    err = Console(stderr=True, highlight=False)
    source = "ignored (--isolated)" if isolated else str(settings.path) if settings.path else "none found"
    err.print(f"settings: {source}", markup=False)
    err.print(f"policy: select {','.join(policy.select)}; ignore {','.join(policy.ignore) or '-'}; "
              f"fail on {policy.fail_on.value}{'; exit-zero' if policy.exit_zero else ''}", markup=False)
    err.print(f"{hidden} finding(s) hidden by select/ignore", markup=False)


@app.command()
def check(
    checkpoints: Annotated[list[str], typer.Argument(help="Draft folder, .safetensors file, or org/repo[@rev].")],
    target: TargetOpt = None,
    target_vocab_size: TargetSizeOpt = None,
    runtime: RuntimeOpt = None,
    config: ConfigOpt = None,
    output_format: FormatOpt = OutputFormat.TEXT,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here, not stdout.")] = None,
    fail_on: FailOnOpt = None,
    select: CodesOpt = None,
    extend_select: CodesOpt = None,
    ignore: CodesOpt = None,
    exit_zero: Annotated[bool | None, typer.Option(
        "--exit-zero/--no-exit-zero", help="Exit 0 even with failing findings (errors still exit 2).")] = None,
    settings_file: Annotated[Path | None, typer.Option(
        "--settings", help="A dspark-ckpt.toml or pyproject.toml to use instead of the one found upward.")] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help="Ignore every settings file.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Text: only findings; no stderr notes.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say which settings and policy applied.")] = False,
    color: Annotated[ColorChoice, typer.Option("--color", help="Colour the text output.")] = ColorChoice.AUTO,
    checkpoint_folders: Annotated[bool, typer.Option(
        "--checkpoint-folders", help="Check the folder of each file given (for pre-commit).")] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Check this many checkpoints at once.")] = 1,
    token: Annotated[str | None, typer.Option(
        "--token", help="Hugging Face token (default: HF_TOKEN or the login file); never printed.")] = None,
) -> None:
    """Inspect drafts from config.json and safetensors headers: classification, compatibility, findings."""
    settings, config = _settings(config, settings_file, isolated)
    policy = resolve(settings.policy, _cli_layer(select, extend_select, ignore, fail_on, exit_zero))
    runtimes = parse_selectors(runtime or (list(settings.runtime) if settings.runtime is not None else None))
    target_vocab = _target(target, target_vocab_size, settings, token)
    specs = hook_folders(checkpoints) if checkpoint_folders else checkpoints
    batch = run_checks(specs, lambda spec: _inspect(spec, config, target_vocab, runtimes, token), jobs=jobs)
    report_failures(batch)
    full = Report(batch.reports, runtimes=tuple(str(r) for r in runtimes))
    report = apply_policy(full, policy)
    ctx = RenderContext(fail_on=policy.fail_on, tool_version=__version__, root=Path.cwd(), quiet=quiet)
    emit(report, output_format, output, ctx, color)
    if verbose and not quiet:
        _diagnose(settings, policy, hidden_count(full, report), isolated)
    if not quiet and (output is not None or output_format not in (OutputFormat.TEXT, OutputFormat.GITHUB)):
        Console(stderr=True, highlight=False).print(f"dspark-ckpt: {summary_line(report)}"
                                                    + (f" (report written to {output})" if output else ""),
                                                    markup=False)
    refuse_non_checkpoints(full)
    if batch.failures:
        raise typer.Exit(EXIT_USAGE)  # a checkpoint that could not be checked is never a pass
    raise typer.Exit(EXIT_OK if policy.exit_zero else exit_code(report, policy.fail_on))


@app.command("rules")
def rules_command() -> None:
    """List every finding code with its severity and a one-line summary."""
    console = stdout_console()
    for code, r in sorted(RULES.items()):
        console.print(f"{code}  {r.severity:<7}  {r.slug:<34} {r.summary}", overflow="fold")


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A finding code, e.g. DSP301.")]) -> None:
    """Show the full documentation of one finding code."""
    r = RULES.get(code.upper())
    if r is None:
        raise UsageError(f"unknown finding code {code!r}", code="DSP-E005", hint="`dspark-ckpt rules` lists them")
    console = stdout_console()
    console.print(f"{r.code} {r.slug} ({r.severity})\n{r.summary}\n", style="bold")
    for title, body in (("What it means", r.what), ("Why it matters", r.why), ("Example", r.example),
                        ("How to fix", r.fix + (f" [repair: {r.repair}]" if r.repair else ""))):
        console.print(title, style="bold")
        console.print(f"  {body}\n")


def _register_commands() -> None:
    from dspark_ckpt.cli import fix as cli_fix
    from dspark_ckpt.cli import verify as cli_verify

    for module in (cli_fix, cli_verify):
        module.register(app)


_register_commands()


def _exception_types(*names: str) -> tuple[type[BaseException], ...]:
    """Typer >= 0.29 vendors click; older ones raise click's own classes: accept both."""
    import click

    found = [getattr(click.exceptions, n, None) for n in names] + [getattr(typer, n, None) for n in names]
    return tuple(t for t in found if isinstance(t, type))


@runtime_checkable
class _ShowsUsage(Protocol):
    def show(self) -> None:
        """Print `Error: ...` with the usage line, as click's ClickException does."""


_USAGE_ERRORS = _exception_types("ClickException", "TyperException")
_ABORTS = _exception_types("Abort")


def main(argv: list[str] | None = None) -> None:
    """Entry point: typer's exit codes for usage errors are 2; operational errors 2; internal errors 3."""
    err = Console(stderr=True, highlight=False)
    try:
        code = app(args=argv, standalone_mode=False)  # click returns the Exit code instead of exiting
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except DsparkCkptError as exc:
        err.print(f"dspark-ckpt: error [{exc.code}]: {exc}", markup=False)
        if exc.hint:
            err.print(f"hint: {exc.hint}", markup=False)
        sys.exit(exc.exit_code)
    except _ABORTS:
        sys.exit(130)
    except _USAGE_ERRORS as exc:
        if isinstance(exc, _ShowsUsage):  # click's exceptions print `Error: ...` with the usage line
            exc.show()
        else:
            err.print(f"dspark-ckpt: error: {exc}", markup=False)
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a bare traceback
        err.print(f"dspark-ckpt: internal error: {exc.__class__.__name__}: {exc}", markup=False)
        if os.environ.get("DSPARK_CKPT_DEBUG"):
            traceback.print_exc()
        else:
            err.print("please report this; set DSPARK_CKPT_DEBUG=1 for details", markup=False)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
