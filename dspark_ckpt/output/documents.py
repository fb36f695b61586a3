"""Each command's JSON document, built from data: its own schema_version, one shape for one checkpoint or many."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import Sink
from dspark_ckpt.output.escape import json_safe
from dspark_ckpt.output.interval import wilson
from dspark_ckpt.output.records import checkpoint_json, finding_json

if TYPE_CHECKING:  # fix's and verify's records are created only by those commands, never on a check run
    from dspark_ckpt.model.report import FixState
    from dspark_ckpt.output.fix_records import FixRecord, FixWritten
    from dspark_ckpt.output.verify_records import (
        MappingCheck,
        ProbeReport,
        ProbeStats,
        VerifiedCheckpoint,
        VerifyResult,
    )
    from dspark_ckpt.runtimes.release_diff import ReleaseDiff

# Bump a command's version when a key changes meaning or goes away; adding keys keeps it.
CHECK_SCHEMA_VERSION = 1
VERIFY_SCHEMA_VERSION = 1  # check's document, each checkpoint with a `verify` object
FIX_SCHEMA_VERSION = 2  # 2: always {"checkpoints": [...]}; runtime states are objects, not rendered strings
PUSH_SCHEMA_VERSION = 1  # `fix --push`: one Hub repo, one pull request
RELEASE_DIFF_SCHEMA_VERSION = 1  # `diff`: what changes in behaviour between two runtime releases


def check_document(report: Report) -> dict[str, Any]:
    return {"schema_version": CHECK_SCHEMA_VERSION, "command": "check", "runtimes": list(report.runtimes),
            "checkpoints": [checkpoint_json(c) for c in report.checkpoints]}


def verify_document(runtimes: Sequence[str], checkpoints: Sequence[VerifiedCheckpoint]) -> dict[str, Any]:
    """Check's document, each checkpoint with its `verify` object (its torch observations and the engine's answer)."""
    return {"schema_version": VERIFY_SCHEMA_VERSION, "command": "verify", "runtimes": list(runtimes),
            "checkpoints": [{**checkpoint_json(c.report), "verify": verify_json(c.result)
                             | ({"engine": c.engine} if c.engine else {})} for c in checkpoints]}


def _mapping_json(m: MappingCheck) -> dict[str, Any]:
    return {"runtimes": list(m.runtimes), "source": m.source, "width": m.width,
            "target_vocab_size": m.target_vocab_size, "out_of_range": m.out_of_range,
            "first_out_of_range": list(m.first_out_of_range) if m.first_out_of_range else None,
            "strictly_increasing": m.strictly_increasing, "first_not_increasing": m.first_not_increasing,
            "t2d_consistent": m.t2d_consistent, "all_zero_identity_on_pruned": m.all_zero_identity_on_pruned,
            "failures": list(m.failures)}


def _stats_json(s: ProbeStats) -> dict[str, Any]:
    def share(n: int) -> float | None:
        return n / s.probes if s.probes else None

    def interval(n: int) -> list[float] | None:  # the 95% Wilson score interval of share(n)
        return [round(x, 6) for x in wilson(n, s.probes)] if s.probes else None

    return {"source": s.source, "logits": s.logits, "probes": s.probes, "top_k": s.top_k,
            "argmax_illegal": s.argmax_illegal, "argmax_illegal_fraction": share(s.argmax_illegal),
            "argmax_illegal_ci95": interval(s.argmax_illegal),
            "topk_any_illegal": s.topk_any_illegal, "topk_any_illegal_fraction": share(s.topk_any_illegal),
            "topk_any_illegal_ci95": interval(s.topk_any_illegal),
            "topk_illegal_slots": s.topk_illegal_slots, "max_margin": s.max_margin,
            "max_margin_row": s.max_margin_row, "max_margin_probe": s.max_margin_probe, "tied": s.tied}


def probe_json(p: ProbeReport) -> dict[str, Any]:
    return {"ran": p.ran, "reason": p.reason, "runtime": p.runtime, "illegal_rows": p.illegal_rows,
            "lm_head_dtype": p.lm_head_dtype, "logit_scale": p.logit_scale, "seed": p.seed,
            "markov_pairing": p.markov_pairing, "probes": p.probes, "probes_why": p.probes_why,
            "stats": [_stats_json(s) for s in p.stats]}


def verify_json(r: VerifyResult) -> dict[str, Any]:
    return {
        "device": r.device, "torch": r.torch_version, "skipped": r.skipped,
        "timings_ms": {k: round(v, 3) for k, v in r.timings_ms.items()},
        "tensors_read": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "nbytes": t.nbytes}
                         for t in r.tensors_read],
        "runtimes": [{"runtime": s.runtime, "version": s.version, "loads": s.loads, "error": s.error,
                      "error_code": s.error_code, "d2t_param": s.d2t_param, "d2t_loaded": s.d2t_loaded,
                      "lm_head": s.lm_head, "embed_tokens": s.embed_tokens,
                      "first_step_error_code": s.first_step_code} for s in r.runtimes],
        "mapping": [_mapping_json(m) for m in r.mappings],
        "probe": probe_json(r.probe),
        "check_disagreements": list(r.check_disagreements),
        "landing": [{"runtime": x.runtime, "version": x.version, "architecture": x.architecture, "tensors": x.tensors,
                     "parameters": x.parameters, "rows": x.rows, "refused": list(x.refused), "cut": list(x.cut),
                     "unfilled": list(x.unfilled), "missing": list(x.missing)} for x in r.landing],
    }


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
        "stays_broken": list(fix.stays_broken),
        "recovered": fix.recovered,
        "replanned": fix.replanned,
        "serving_method": ({"method": fix.serving_method[0], "method_from": fix.serving_method[1]}
                           if fix.serving_method is not None else None),
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


def release_diff_document(found: ReleaseDiff) -> dict[str, Any]:
    """`diff --format json`: the two releases (and whose data answers each), every fact that differs."""
    return {"schema_version": RELEASE_DIFF_SCHEMA_VERSION, "command": "diff", "runtime": found.runtime,
            "from": found.old, "to": found.new, "from_data": found.old_data, "to_data": found.new_data,
            "architectures": found.architectures, "changed": list(found.changed), "alike": list(found.alike),
            "changes": [c.as_json() for c in found.changes]}


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
