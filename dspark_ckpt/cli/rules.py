"""`dspark-ckpt rules` and `explain`: the registries, as the user reads them."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.repair.strategies import repairs_for


def stdout_console() -> Console:
    return Console(soft_wrap=False, highlight=False)  # rich honours COLUMNS and NO_COLOR


def rules() -> None:
    """List every finding code with its severity and a one-line summary."""
    console = stdout_console()
    for code, r in sorted(RULES.items()):
        console.print(f"{code}  {r.severity:<7}  {r.slug:<34} {r.summary}", overflow="fold")


def explain(code: Annotated[str, typer.Argument(help="A finding code, e.g. DSP301.")]) -> None:
    """Show the full documentation of one finding code."""
    r = RULES.get(code.upper())
    if r is None:
        raise UsageError(f"unknown finding code {code!r}", code="DSP-E005", hint="`dspark-ckpt rules` lists them")
    repairs = repairs_for(r.code)
    console = stdout_console()
    console.print(f"{r.code} {r.slug} ({r.severity})\n{r.summary}\n", style="bold")
    for title, body in (("What it means", r.what), ("Why it matters", r.why), ("Example", r.example),
                        ("How to fix", r.fix + (f" [repair: {', '.join(repairs)}]" if repairs else ""))):
        console.print(title, style="bold")
        console.print(f"  {body}\n")
