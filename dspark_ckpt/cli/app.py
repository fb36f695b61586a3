"""The typer app: a table of commands loaded on first use, and every failure turned into one line and an exit code.

Start-up is a budget (bench/bench_startup.py): `--help` and `--version` import no command module, and a command
imports only its own module; what that module needs beyond the check path (repair, renderers other than text, the
Hub client, torch) it imports when it runs.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, Self, runtime_checkable

import typer
from typer.core import TyperCommand, TyperGroup

from dspark_ckpt.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.version import __version__


@dataclass(frozen=True, slots=True)
class CommandEntry:
    """One command: where its function lives, and its summary (its docstring's first line; a test holds them
    equal) so that `--help` lists every command without importing any."""

    module: str
    function: str
    summary: str
    aliases: tuple[str, ...] = ()


COMMANDS: dict[str, CommandEntry] = {
    "check": CommandEntry("dspark_ckpt.cli.check", "check",
                   "Check drafts from config.json and safetensors headers, per runtime."),
    "fix": CommandEntry("dspark_ckpt.cli.fix", "fix", "Repair drafts for the runtimes they will run on."),
    "verify": CommandEntry("dspark_ckpt.cli.verify", "verify", "Load drafts with torch as each runtime would."),
    "rules": CommandEntry("dspark_ckpt.cli.rules", "rules", "List the finding and error codes, or those under a prefix."),
    "explain": CommandEntry("dspark_ckpt.cli.rules", "explain", "Show the documentation of a code, or of a prefix's codes."),
    "diff": CommandEntry("dspark_ckpt.cli.releases", "diff",
                  "Print what changes in behaviour from one release to another."),
    "version": CommandEntry("dspark_ckpt.cli.version", "version", "Print the versions a bug report needs.",
                     aliases=("env",)),
}
# A command is one short run that keeps what it builds (modules, tables, the analysis) to the end: collecting the
# youngest objects every 700 allocations only walks them again and again (mypy raises the threshold likewise).
_GC_THRESHOLDS = (50_000, 20, 20)
ALIASES = {alias: name for name, entry in COMMANDS.items() for alias in entry.aliases}
CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"]}  # -h everywhere: subcommands inherit it


# click's names for a value's type, as its help has always shown them (typer 0.28 prints `<str>`, `{name}`).
_METAVARS = {"str": "TEXT", "text": "TEXT", "int": "INTEGER", "integer": "INTEGER", "int range": "INTEGER",
             "integer range": "INTEGER", "float": "FLOAT", "float range": "FLOAT", "path": "PATH",
             "filename": "FILE", "boolean": "BOOLEAN"}


def conventional_metavar(param: Any) -> str | None:
    """The metavar of a parameter that names none: [a|b] for a choice, TEXT/INTEGER/PATH, NAME... for arguments
    (None: a typer whose parameters carry no click type, such as 0.29, keeps its own)."""
    if param.param_type_name == "argument":
        var = (param.name or "").upper()
        return var + ("..." if param.nargs != 1 else "")
    kind = getattr(param, "type", None)
    if kind is None:
        return None
    choices = getattr(kind, "choices", None)
    if choices:
        return "[" + "|".join(str(c) for c in choices) + "]"
    name = str(getattr(kind, "name", "text"))
    return _METAVARS.get(name, name.upper())


class ConventionalCommand(TyperCommand):
    """typer's command with click's usage line: `[OPTIONS] CHECKPOINTS...`, brackets only around what may be
    left out (typer 0.28 writes `{checkpoints}...`)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                var = param.metavar or conventional_metavar(param) or (param.name or "").upper()
                pieces.append(var if param.required or var.startswith("[") else f"[{var}]")
        return pieces


def build_command(name: str) -> Any:
    """The click command of one entry: its module is imported now, not before."""
    entry = COMMANDS[name]
    function = getattr(importlib.import_module(entry.module), entry.function)
    single = typer.Typer(add_completion=False, rich_markup_mode=None, context_settings=CONTEXT)
    single.command(name, cls=ConventionalCommand)(function)
    command = typer.main.get_command(single)
    for param in command.params:
        if param.metavar is None and not getattr(param, "is_flag", False):
            param.metavar = conventional_metavar(param)
    return command


class _LazyCommands(MutableMapping[str, Any]):
    """The group's command mapping: names (and aliases) known up front, each command built on first lookup."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        name = ALIASES.get(name, name)
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = build_command(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the command table is fixed")

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in ALIASES


class LazyGroup(TyperGroup):
    """typer's group, with commands from the table; `--help` lists the table's summaries, importing nothing."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [(name, entry.summary if not entry.aliases
                 else f"{entry.summary.rstrip('.')} (alias: {', '.join(entry.aliases)}).")
                for name, entry in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(cls=LazyGroup, no_args_is_help=True, rich_markup_mode=None, context_settings=CONTEXT,
                  help="Check and repair speculative-decoding draft checkpoints before you deploy them.")


def _version(value: bool) -> None:
    if value:
        print(f"dspark-ckpt {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True,
                                          help="Print the version and exit (`version` prints more).")] = False,
) -> None:
    """dspark-ckpt: finds what breaks a draft on each runtime, from headers alone."""


def _exception_types(*names: str) -> tuple[type[BaseException], ...]:
    """typer 0.28 vendors click (typer._click); older ones raise click's own classes: accept both."""
    found: list[object] = [getattr(typer, n, None) for n in names]
    for module in ("typer._click.exceptions", "click.exceptions"):
        if module.split(".")[0] == "click" and "click" not in sys.modules:
            continue  # click is not installed, or not what typer uses: nothing of it can be raised
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            continue
        found += [getattr(loaded, n, None) for n in names]
    return tuple(dict.fromkeys(t for t in found if isinstance(t, type) and issubclass(t, BaseException)))


@runtime_checkable
class _ShowsUsage(Protocol):
    message: str

    def show(self) -> None:
        """Print `Error: ...` with the usage line, as click's ClickException does."""


def _errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    return _exception_types("ClickException", "TyperException"), (KeyboardInterrupt, *_exception_types("Abort"))


def _close_options(name: str, possibilities: list[str]) -> list[str]:
    """click's candidates (difflib on whole words, dashes and all, so `--fix` came out as `--config`) kept only
    where the names themselves are close: `--fomat` -> `--format`, `--fix` -> none."""
    bare = name.lstrip("-")
    import difflib  # here: only a usage error suggests names

    return [p for p in possibilities if difflib.get_close_matches(bare, [p.lstrip("-")])]


def _suggest(exc: BaseException) -> None:
    """An unknown option's suggestion: the command of that name where there is one (`check --fix`: `dspark-ckpt
    fix`), else only the options whose names are close to it."""
    if not isinstance(exc, _exception_types("NoSuchOption")):
        return
    name = str(getattr(exc, "option_name", ""))
    bare = name.lstrip("-")
    ctx = getattr(exc, "ctx", None)
    if name.startswith("--") and bare in (COMMANDS.keys() | ALIASES.keys()) and bare != getattr(ctx, "info_name", None):
        exc.possibilities = None  # type: ignore[attr-defined]
        exc.message = f"No such option: {name} ({bare} is a command: did you mean `dspark-ckpt {bare}`?)"  # type: ignore[attr-defined]
    else:
        exc.possibilities = _close_options(name, list(getattr(exc, "possibilities", None) or ()))  # type: ignore[attr-defined]


def _usage(exc: BaseException) -> None:
    """click's `Error: ...` with its usage line; pydantic's "Value error, " (typer 0.29) never reaches the user."""
    _suggest(exc)
    if isinstance(exc, _exception_types("NoArgsIsHelpError")):  # bare `dspark-ckpt`: the help, as --help lays it out
        exc.show()  # type: ignore[attr-defined]
    elif isinstance(exc, _ShowsUsage):
        exc.message = " ".join(str(exc.message).replace("Value error, ", "").split())
        exc.show()
    else:
        from dspark_ckpt.output.write import stderr_console

        stderr_console().print(f"dspark-ckpt: error: {exc}", markup=False)


class _Interrupts:
    """SIGINT for the length of a command: raised as KeyboardInterrupt, and remembered, so that an interrupt that
    lands where Python only prints "Exception ignored" (a finalizer, an import's cleanup) still ends the run 130."""

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self) -> Self:
        try:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread: signals cannot be handled here anyway
            self._previous = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _run(argv: list[str] | None) -> int:
    """The command's exit code; every failure is one line (or click's usage) and a code, never a traceback."""
    usage_errors, interrupts = _errors()
    try:
        code = app(args=argv, standalone_mode=False, prog_name="dspark-ckpt")  # returns the Exit code
    except typer.Exit as done:
        return int(done.exit_code)
    except DsparkCkptError as exc:
        from dspark_ckpt.output.streams import report_error

        report_error(exc)
        return exc.exit_code
    except interrupts:
        return EXIT_INTERRUPTED
    except usage_errors as exc:
        _usage(exc)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a bare traceback
        from dspark_ckpt.output.streams import say

        say(f"dspark-ckpt: internal error: {exc.__class__.__name__}: {exc}")
        if os.environ.get("DSPARK_CKPT_DEBUG"):
            traceback.print_exc()
        else:
            say("please report this (with `dspark-ckpt version`); set DSPARK_CKPT_DEBUG=1 for details")
        return EXIT_INTERNAL
    return code if isinstance(code, int) else EXIT_OK


def main(argv: list[str] | None = None) -> None:
    """CommandEntry point: usage and operational errors exit 2, Ctrl-C 130, internal errors 3.

    A closed or failing stdout/stderr is DSP-E036/DSP-E037 (exit 2); a broken pipe ends the output quietly and
    the run keeps the exit code it would have had; an interrupt is 130 wherever it landed.
    """
    from dspark_ckpt.output.streams import finish, install, report_error, say

    process = argv is None  # the console script or `python -m`: the process ends with this command
    if process:
        gc.set_threshold(*_GC_THRESHOLDS)
    install()
    with _Interrupts() as sigint:
        try:
            code = _run(argv)
        except KeyboardInterrupt:  # landed in an except clause above
            code = EXIT_INTERRUPTED
        failed = finish()
        if failed is not None:
            report_error(failed)
            code = failed.exit_code
    if sigint.seen or code == EXIT_INTERRUPTED:
        say("dspark-ckpt: interrupted")
        code = EXIT_INTERRUPTED
    if process:
        gc.freeze()  # what is left is freed with the process: no collection pass over it on the way out
    sys.exit(code)
