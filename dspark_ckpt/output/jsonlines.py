"""Report -> JSON Lines: one JSON object per finding per line (ruff's `json-lines`), for `jq -c` and log shippers.

The keys are a contract like the JSON document's (docs/json.md): `severity` is the registered one, `gated` says
whether the finding decides the exit code.
"""

from __future__ import annotations

import json
from typing import Any

from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import json_safe
from dspark_ckpt.output.locations import finding_path, relative_to, runtimes_of


def record(c: CheckpointReport, f: Finding, ctx: RenderContext) -> dict[str, Any]:
    return {"checkpoint": c.source, "revision": c.revision, "code": f.code,
            "name": RULES[f.code].slug if f.code in RULES else None, "severity": f.severity.value,
            "gated": ctx.is_gated(c, f), "message": f.message, "path": relative_to(finding_path(c, f), ctx.root),
            "file": f.file, "tensor": f.tensor, "runtimes": runtimes_of(c, f), "hint": f.hint}


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    for c in report.checkpoints:
        for f in c.findings:
            console.file.write(json.dumps(json_safe(record(c, f, ctx)), separators=(",", ":")) + "\n")
