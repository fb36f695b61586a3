"""Report -> SARIF 2.1.0, the format code-scanning services (GitHub, Azure DevOps) read."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.hint_template import Command, documented
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES, Rule
from dspark_ckpt.output.context import RenderContext, Sink
from dspark_ckpt.output.escape import json_safe, visible, visible_keep_lines
from dspark_ckpt.output.locations import artifact_uri, finding_path, fingerprint

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "dsparkCkptFinding/v1"


def _rule(r: Rule) -> dict[str, Any]:
    named = r.repair is not None and f"--strategy {r.repair}`" in r.fix  # the fix text already shows the command
    fix = r.fix + (f" (repair: {documented(Command('fix', r.repair))})" if r.repair and not named else "")
    sections = (("What it means", r.what), ("Why it matters", r.why), ("Example", r.example), ("How to fix", fix))
    return {
        "id": r.code,
        "name": "".join(part.capitalize() for part in r.slug.split("-")),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.what},
        "help": {"text": "\n\n".join(f"{title}: {body}" for title, body in sections),
                 "markdown": "\n\n".join(f"**{title}**\n\n{body}" for title, body in sections)},
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": ["dspark-ckpt", r.slug]},
    }


def _result(c: CheckpointReport, f: Finding, ctx: RenderContext, index: dict[FindingCode, int],
            seen: Counter[tuple[str, str, str | None]]) -> dict[str, Any]:
    uri, relative = artifact_uri(finding_path(c, f), ctx.root)
    artifact: dict[str, Any] = {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if relative else {})}
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": artifact, "region": {"startLine": 1}}}
    if f.tensor:
        location["logicalLocations"] = [{"name": visible(f.tensor), "kind": "member"}]
    seen[(f.code, uri, f.tensor)] += 1
    gated = ctx.is_gated(c, f)
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": LEVEL[f.severity] if gated or f.severity is not Severity.ERROR else "warning",
        "message": {"text": visible_keep_lines(f.message + (f"\nhint: {f.hint}" if f.hint else ""))},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f.code, uri, f.tensor, seen[(f.code, uri, f.tensor)])},
        "properties": {"checkpoint": c.source, **({"revision": c.revision} if c.revision else {}), "gated": gated},
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    return result


def sarif_log(report: Report, ctx: RenderContext) -> dict[str, Any]:
    rules = [RULES[code] for code in sorted(RULES)]
    index = {r.code: i for i, r in enumerate(rules)}
    seen: Counter[tuple[str, str, str | None]] = Counter()
    results = [_result(c, f, ctx, index, seen) for c in report.checkpoints for f in c.findings]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "dspark-ckpt", "version": ctx.tool_version,
                            "semanticVersion": ctx.tool_version, "rules": [_rule(r) for r in rules]}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": ctx.root.absolute().as_uri() + "/"}},
        "results": results,
        "properties": {"runtimes": list(report.runtimes), **({"policy": ctx.policy} if ctx.policy else {})},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report, console: Sink, ctx: RenderContext) -> None:
    console.file.write(json.dumps(json_safe(sarif_log(report, ctx)), indent=2) + "\n")
