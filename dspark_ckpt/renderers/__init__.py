"""The renderer table: format name -> function(Report, Console, RenderContext). Renderers never decide the exit code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from dspark_ckpt.findings import Severity
from dspark_ckpt.render import render_json, render_text, render_text_quiet
from dspark_ckpt.report import Report


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a renderer may know beyond the report: the policy's threshold (to label pass/fail) and where paths start."""

    fail_on: Severity = Severity.ERROR
    tool_version: str = "0"
    root: Path = Path(".")  # relative locations are written relative to this folder (the working directory)
    quiet: bool = False


Renderer = Callable[[Report, Console, RenderContext], None]


def _text(report: Report, console: Console, ctx: RenderContext) -> None:
    (render_text_quiet if ctx.quiet else render_text)(report, console)


def _json(report: Report, console: Console, ctx: RenderContext) -> None:
    render_json(report, console)


def _table() -> dict[str, Renderer]:
    from dspark_ckpt.renderers import github, junit, markdown, sarif

    return {"text": _text, "json": _json, "sarif": sarif.render, "github": github.render,
            "junit": junit.render, "markdown": markdown.render}


RENDERERS: dict[str, Renderer] = _table()
FORMATS = tuple(RENDERERS)
