"""Report -> counts per finding code, most frequent first (ruff's `--statistics`): text lines or a JSON list."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from dspark_ckpt.model.report import Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.context import RenderContext, Sink


def statistics(report: Report, ctx: RenderContext) -> list[dict[str, Any]]:
    """One entry per code shown: its count and how many of them are at or above --fail-on yet outside the gate (they
    do not fail the run), sorted by count, then code."""
    counts: Counter[str] = Counter()
    not_gated: Counter[str] = Counter()
    severity: dict[str, str] = {}
    for c in report.checkpoints:
        for f in c.findings:
            counts[f.code] += 1
            not_gated[f.code] += ctx.not_gated_note(c, f)
            severity[f.code] = f.severity.value
    return [{"code": code, "name": RULES[code].slug if code in RULES else None, "severity": severity[code],
             "count": n, "not_gated": not_gated[code]} for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def render(report: Report, console: Sink, ctx: RenderContext, *, as_json: bool = False) -> None:
    rows = statistics(report, ctx)
    if as_json:
        console.file.write(json.dumps(rows, indent=2) + "\n")
        return
    width = max((len(str(r["count"])) for r in rows), default=1)
    for r in rows:
        note = "" if not r["not_gated"] else " (not gated)" if r["not_gated"] == r["count"] \
            else f" ({r['not_gated']} not gated)"
        console.file.write(f"{r['count']:>{width}}  {r['code']}  [{r['severity']}] {r['name'] or ''}{note}\n")
