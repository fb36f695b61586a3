"""The renderer table: format name -> function(Report, Sink, RenderContext). Renderers never decide the exit code."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import RenderContext, Sink

if TYPE_CHECKING:
    from rich.console import Console

Renderer = Callable[[Report, Sink, RenderContext], None]


def _text(report: Report, console: Console, ctx: RenderContext) -> None:
    from dspark_ckpt.output.render import render_text, render_text_quiet

    (render_text_quiet if ctx.quiet else render_text)(report, console, ctx)


def _json(report: Report, sink: Sink, ctx: RenderContext) -> None:
    from dspark_ckpt.output.documents import render_json

    render_json(report, sink, ctx.policy)


# Each format's module is imported when its format is asked for: a text `check` never loads the XML, SARIF
# (hashlib) or Markdown code, and only `text` loads rich (bench/bench_startup.py measures start-up).
_MODULES = {"sarif": "dspark_ckpt.output.sarif", "github": "dspark_ckpt.output.github",
            "junit": "dspark_ckpt.output.junit", "markdown": "dspark_ckpt.output.markdown",
            "concise": "dspark_ckpt.output.concise", "json-lines": "dspark_ckpt.output.jsonlines",
            "gitlab": "dspark_ckpt.output.gitlab"}
# The formats rendered through a rich console; every other one writes text to the sink's file (write.PlainSink).
RICH_FORMATS = frozenset({"text"})


class _Renderers(Mapping[str, Renderer]):
    def __getitem__(self, name: str) -> Renderer:
        if name == "text":
            return _text  # type: ignore[return-value]  # rich text: emit hands it a rich console (RICH_FORMATS)
        if name == "json":
            return _json
        render: Renderer = importlib.import_module(_MODULES[name]).render
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(("text", "json", *_MODULES))

    def __len__(self) -> int:
        return 2 + len(_MODULES)


RENDERERS: Mapping[str, Renderer] = _Renderers()
FORMATS = tuple(RENDERERS)  # the CLI's --format choices (cli/options.py) derive from this table
# The formats of a command whose output is one document, not a report (fix, rules, explain, version): its own
# text, or its JSON document (output/documents.py).
DOCUMENT_FORMATS = tuple(f for f in FORMATS if f in {"text", "json"})
