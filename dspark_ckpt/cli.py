"""The typer app: parse options, build sources, call the core, render, and return an exit code."""

from __future__ import annotations

import os
import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from dspark_ckpt import __version__
from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.findings import Severity
from dspark_ckpt.inspect import TargetVocab, inspect_checkpoint
from dspark_ckpt.render import RENDERERS
from dspark_ckpt.report import Report
from dspark_ckpt.rule_catalog import RULES
from dspark_ckpt.runtimes import parse_selectors
from dspark_ckpt.sources.resolve import open_source
from dspark_ckpt.target import resolve_target

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Check and repair speculative-decoding draft checkpoints before you deploy them.")


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


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


TargetOpt = Annotated[Optional[str], typer.Option("--target", help="Target model folder (or its config.json).")]
TargetSizeOpt = Annotated[Optional[int], typer.Option("--target-vocab-size", help="Target vocab T, if no --target.")]
RuntimeOpt = Annotated[Optional[list[str]], typer.Option(
    "--runtime", help="vllm==X.Y.Z, vllm, sglang or all (repeatable; default: every known version).")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help="Output format.")]
FailOnOpt = Annotated[Severity, typer.Option("--fail-on", help="Exit 1 at or above this severity.")]


@app.command()
def check(
    checkpoints: Annotated[list[str], typer.Argument(help="Draft folder, .safetensors file, or org/repo[@rev].")],
    target: TargetOpt = None,
    target_vocab_size: TargetSizeOpt = None,
    runtime: RuntimeOpt = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="config.json for a single .safetensors file.")] = None,
    output_format: FormatOpt = OutputFormat.TEXT,
    fail_on: FailOnOpt = Severity.ERROR,
) -> None:
    """Inspect drafts from config.json and safetensors headers: classification, compatibility, findings."""
    runtimes = parse_selectors(runtime)
    target_vocab = resolve_target(target, target_vocab_size)
    reports = tuple(inspect_checkpoint(open_source(spec, config=config), target=target_vocab, runtimes=runtimes)
                    for spec in checkpoints)
    report = Report(reports, runtimes=tuple(str(r) for r in runtimes))
    RENDERERS[output_format.value](report, stdout_console())
    raise typer.Exit(exit_code(report, fail_on))


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
        from dspark_ckpt.errors import UsageError
        raise UsageError(f"unknown finding code {code!r}", code="DSP-E005", hint="`dspark-ckpt rules` lists them")
    console = stdout_console()
    console.print(f"{r.code} {r.slug} ({r.severity})\n{r.summary}\n", style="bold")
    for title, body in (("What it means", r.what), ("Why it matters", r.why), ("Example", r.example),
                        ("How to fix", r.fix + (f" [repair: {r.repair}]" if r.repair else ""))):
        console.print(title, style="bold")
        console.print(f"  {body}\n")


def _register_commands() -> None:
    from dspark_ckpt import cli_fix, cli_verify

    for module in (cli_fix, cli_verify):
        module.register(app)


_register_commands()


def _exception_types(*names: str) -> tuple[type[BaseException], ...]:
    """Typer >= 0.29 vendors click; older ones raise click's own classes: accept both."""
    import click

    found = [getattr(click.exceptions, n, None) for n in names] + [getattr(typer, n, None) for n in names]
    return tuple(t for t in found if isinstance(t, type))


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
        exc.show()
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a bare traceback
        err.print(f"dspark-ckpt: internal error: {exc.__class__.__name__}: {exc}", markup=False)
        if os.environ.get("DSPARK_CKPT_DEBUG"):
            traceback.print_exc()
        else:
            err.print("please report this; set DSPARK_CKPT_DEBUG=1 for details", markup=False)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
