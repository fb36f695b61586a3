"""Each command's JSON document, built from data: its own schema_version, one shape for one checkpoint or many."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import Sink
from dspark_ckpt.output.escape import json_safe
from dspark_ckpt.output.records import checkpoint_json, finding_json

if TYPE_CHECKING:  # fix's and verify's records are created only by those commands, never on a check run
    from dspark_ckpt.output.fix_records import FixRecord, FixState, FixWritten

# Bump a command's version when a key changes meaning or goes away; adding keys keeps it.
CHECK_SCHEMA_VERSION = 1
VERIFY_SCHEMA_VERSION = 1  # check's document, each checkpoint with a `verify` object
FIX_SCHEMA_VERSION = 2  # 2: always {"checkpoints": [...]}; runtime states are objects, not rendered strings
PUSH_SCHEMA_VERSION = 1  # `fix --push`: one Hub repo, one pull request


def check_document(report: Report) -> dict[str, Any]:
    return {"schema_version": CHECK_SCHEMA_VERSION, "command": "check", "runtimes": list(report.runtimes),
            "checkpoints": [checkpoint_json(c) for c in report.checkpoints]}


def verify_document(report: Report, verify: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`verify` holds each checkpoint's torch observations (verify.result.verify_json), in report order."""
    return {"schema_version": VERIFY_SCHEMA_VERSION, "command": "verify", "runtimes": list(report.runtimes),
            "checkpoints": [{**checkpoint_json(c), "verify": v} for c, v in zip(report.checkpoints, verify,
                                                                                 strict=True)]}


def fix_document(checkpoints: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each entry is fix_entry of one checkpoint, or fix_error_entry for one that could not be fixed."""
    return {"schema_version": FIX_SCHEMA_VERSION, "command": "fix", "checkpoints": list(checkpoints)}


def _state(s: FixState) -> dict[str, Any]:
    return {"loads": s.loads, "error_code": s.error_code, "silent_codes": list(dict.fromkeys(s.silent_codes))}


def _written(r: FixWritten) -> dict[str, Any]:
    return {
        "destination": r.destination, "in_place": r.in_place, "atomic": r.atomic,
        "written": [{"file": f, "bytes": n} for f, n in r.written],
        "copied": [{"file": f, "bytes": n} for f, n in r.copied], "linked": r.linked,
        "removed": list(r.removed), "bytes_written": r.bytes_written,
        "check_findings": [finding_json(f) for f in r.report.findings] if r.report else [],
        "check_errors": [f.code for f in r.errors],
        "via_link": r.via_link, "recovered": r.recovered,
    }


def fix_entry(fix: FixRecord) -> dict[str, Any]:
    """One checkpoint of fix's `checkpoints` (and the `plan` of `fix --push`), from what repair/render.py filled."""
    from dspark_ckpt.output.fix_records import file_rows, json_diffs  # start-up: not loaded for check's JSON

    doc: dict[str, Any] = {
        "source": fix.source, "status": fix.status,
        "target_vocab_size": fix.target_vocab_size, "runtimes": list(fix.runtimes), "strategy": fix.strategy,
        "actions": [dict(a.record) for a in fix.actions], "files": file_rows(fix.changes),
        "refusal": ({"code": fix.refusal.code, "message": fix.refusal.message, "hint": fix.refusal.hint}
                    if fix.refusal else None),
        "note": fix.note,
        "compatibility": [{"runtime": r.runtime, "before": _state(r.before), "after": _state(r.after)}
                          for r in fix.compatibility],
        "steps": list(fix.steps),
        "diff": json_diffs(fix.changes),
        "skipped": list(fix.skipped),
        "warnings": [finding_json(w) for w in fix.warnings],
        "not_repaired_for": list(fix.not_repaired_for),
        "recovered": fix.recovered,
    }
    if fix.result is not None:
        doc["result"] = _written(fix.result)
    return doc


def fix_error_entry(source: str, code: str, message: str, hint: str | None) -> dict[str, Any]:
    """An entry of fix's `checkpoints` for a checkpoint that could not be fixed (an operational error)."""
    return {"source": source, "status": "error", "error": {"code": code, "message": message, "hint": hint}}


def push_document(status: str, *, parent: str, pr_url: str | None, pr_revision: str | None, commit: str | None,
                  files: Sequence[str], deleted: Sequence[str], plan: dict[str, Any],
                  check: dict[str, Any] | None) -> dict[str, Any]:
    """`fix --push`: `plan` is fix_entry of the plan made on `parent`, `check` the checkpoint_json of
    the pull request's revision (None when nothing was pushed)."""
    return {"schema_version": PUSH_SCHEMA_VERSION, "command": "fix --push", "status": status,
            "parent_commit": parent, "pr_url": pr_url, "pr_revision": pr_revision, "commit": commit,
            "files": list(files), "deleted": list(deleted), "plan": plan, "check": check}


def version_document(packages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`version --format json`: each package's row (cli/version.py environment()); `schema` is its version."""
    return {"schema": 1, "packages": list(packages)}


def codes_document(codes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rules` and `explain --format json`: a list, one object per code (model's CodeDoc.as_json)."""
    return list(codes)


def report_json(report: Report) -> dict[str, Any]:
    return check_document(report)


def render_json(report: Report, sink: Sink, policy: dict[str, Any] | None = None) -> None:
    """`policy`: what select/ignore/fail-on/exit-zero and the settings file did to this run (docs/json.md)."""
    document = report_json(report)
    if policy is not None:
        document = {**document, "policy": policy}
    sink.file.write(json.dumps(json_safe(document), indent=2) + "\n")
