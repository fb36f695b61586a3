"""Report -> a GitLab Code Quality report: a JSON array of issues (`artifacts: reports: codequality:`).

Each issue has description, check_name, fingerprint (stable across runs: code, file, tensor, occurrence, as SARIF's),
severity and location.path / location.lines.begin (1: shards are binary). A finding that does not decide the exit
code is at most `minor`, so a merge request never shows a blocking issue on a green pipeline.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import json_safe
from dspark_ckpt.output.locations import finding_path, fingerprint, relative_to

# Gated: what fails the run is at least `major`; DSP702 (the checkpoint could not be checked at all) is `blocker`.
GATED = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "major"}
NOT_GATED = {Severity.ERROR: "minor", Severity.WARNING: "minor", Severity.INFO: "info"}
UNCHECKED: Final[FindingCode] = "DSP702"


def severity(c: CheckpointReport, f: Finding, ctx: RenderContext) -> str:
    if not ctx.is_gated(c, f):
        return NOT_GATED[f.severity]
    return "blocker" if f.code == UNCHECKED else GATED[f.severity]


def issue(c: CheckpointReport, f: Finding, ctx: RenderContext, occurrence: int) -> dict[str, Any]:
    path = relative_to(finding_path(c, f), ctx.root)
    where = f"{f.tensor}: " if f.tensor else ""
    slug = RULES[f.code].slug if f.code in RULES else ""
    return {"type": "issue", "check_name": f"{f.code} {slug}".strip(), "description": f"{f.code}: {where}{f.message}",
            "content": {"body": f.hint} if f.hint else None, "categories": ["Bug Risk"],
            "fingerprint": fingerprint(f.code, path, f.tensor, occurrence), "severity": severity(c, f, ctx),
            "location": {"path": path, "lines": {"begin": 1}}}


def issues(report: Report, ctx: RenderContext) -> list[dict[str, Any]]:
    out, seen = [], Counter[tuple[str, str, str | None]]()
    for c in report.checkpoints:
        for f in c.findings:
            key = (f.code, relative_to(finding_path(c, f), ctx.root), f.tensor)
            seen[key] += 1
            out.append({k: v for k, v in issue(c, f, ctx, seen[key]).items() if v is not None})
    return out


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    console.file.write(json.dumps(json_safe(issues(report, ctx)), indent=2) + "\n")
