"""The typer app: registers each command module, and turns every failure into one line and an exit code."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated, Protocol, runtime_checkable

import typer
from rich.console import Console

from dspark_ckpt import __version__
from dspark_ckpt.cli import check, fix, rules, verify
from dspark_ckpt.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from dspark_ckpt.errors import DsparkCkptError

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Check and repair speculative-decoding draft checkpoints before you deploy them.")


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


app.command("check")(check.check)
app.command("fix")(fix.fix)
app.command("verify")(verify.verify)
app.command("rules")(rules.rules)
app.command("explain")(rules.explain)


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
_INTERRUPTS: tuple[type[BaseException], ...] = (KeyboardInterrupt, *_exception_types("Abort"))


def report_error(exc: DsparkCkptError) -> None:
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"dspark-ckpt: error [{exc.code}]: {exc}", markup=False)
    if exc.hint:
        err.print(f"hint: {exc.hint}", markup=False)


def main(argv: list[str] | None = None) -> None:
    """Entry point: usage and operational errors exit 2, Ctrl-C 130, internal errors 3."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        code = app(args=argv, standalone_mode=False)  # click returns the Exit code instead of exiting
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except DsparkCkptError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except _INTERRUPTS:
        err.print("dspark-ckpt: interrupted", markup=False)
        sys.exit(EXIT_INTERRUPTED)
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
