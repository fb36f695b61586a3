"""The renderer table: format name -> function(Report, Console, RenderContext). Renderers never decide the exit code."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.render import render_json, render_text, render_text_quiet

Renderer = Callable[[Report, Console, RenderContext], None]


def _text(report: Report, console: Console, ctx: RenderContext) -> None:
    (render_text_quiet if ctx.quiet else render_text)(report, console)


def _json(report: Report, console: Console, ctx: RenderContext) -> None:
    render_json(report, console)


def _table() -> dict[str, Renderer]:
    from dspark_ckpt.output import github, junit, markdown, sarif

    return {"text": _text, "json": _json, "sarif": sarif.render, "github": github.render,
            "junit": junit.render, "markdown": markdown.render}


RENDERERS: dict[str, Renderer] = _table()
FORMATS = tuple(RENDERERS)
