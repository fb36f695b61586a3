"""The report's records as plain data (JSON-ready dicts, byte counts, the verdict line): no rich, so every format
that writes text without a rich console (json, sarif, junit, json-lines, gitlab, concise, github) starts without it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.output.context import RenderContext

if TYPE_CHECKING:
    from dspark_ckpt.model.deploy import Deploy

# The text report shows this many findings per checkpoint, each message cut after MAX_TEXT_MESSAGE characters, and
# then says how many more there are; the JSON report keeps every finding, whole.
MAX_TEXT_FINDINGS = 200
MAX_TEXT_MESSAGE = 2000


def finding_json(f: Finding) -> dict[str, Any]:
    return {"code": f.code, "severity": f.severity.value, "message": f.message, "file": f.file,
            "tensor": f.tensor, "hint": f.hint}


def checkpoint_json(c: CheckpointReport) -> dict[str, Any]:
    return {
        "source": c.source,
        "revision": c.revision,
        "family": c.family,
        "architecture": c.architecture,
        "draft_vocab_size": c.draft_vocab_size,
        "input_vocab_size": c.input_vocab_size,
        "target_vocab_size": c.target_vocab_size,
        "target_vocab_source": c.target_vocab_source,
        "vocab_kind": c.vocab_kind,
        "input_kind": c.input_kind,
        "hidden_size": c.hidden_size,
        "tensors": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "file": t.file} for t in c.tensors],
        "compatibility": [
            {"runtime": e.runtime, "version": e.version, "loads": e.loads_or_none, "error": e.error,
             "error_code": e.error_code, "error_verbatim": e.verbatim if e.error else None,
             "silent": list(e.silent), "silent_codes": list(e.silent_codes), "source": e.source,
             "first_step_error": e.first_step_error, "first_step_error_code": e.first_step_error_code,
             "first_step_error_verbatim": e.first_step_verbatim if e.first_step_error else None,
             "first_step": e.first_step, "first_step_not_modelled_why": e.first_step_not_modelled_why,
             "first_step_not_modelled": e.first_step_not_modelled}
            for e in c.compatibility
        ],
        "findings": [finding_json(f) for f in c.findings],
        **({"deploy": deploy_json(c.deploy)} if c.deploy is not None else {}),
    }


def deploy_json(d: Deploy) -> dict[str, Any]:
    """The effective speculative config each selected vLLM release builds (check --speculative-config)."""
    return {"source": d.source, "speculative_config": dict(d.speculative_config) if d.speculative_config is not None
            else None, "model": d.model,
            "runtimes": [{"runtime": r.runtime, "version": r.version, "starts": r.error is None, "method": r.method,
                          "method_from": r.method_from, "architecture": r.architecture, "model_class": r.model_class,
                          "num_speculative_tokens": r.num_speculative_tokens,
                          "num_speculative_tokens_from": r.num_speculative_tokens_from,
                          "draft_vocab_size": r.draft_vocab_size, "error": r.error, "error_code": r.error_code,
                          "notes": list(r.notes), "note_codes": list(r.note_codes), "source": r.source}
                         for r in d.runtimes]}


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB': byte counts as people read them (the JSON keeps exact integers)."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.1f} {unit}"


LEGEND = ("T: target vocab; V: draft input vocab (embed_tokens rows); D: draft output vocab (lm_head rows); "
          "yes*: loads, but misbehaves silently as described; 1st step: loads, then fails at the first draft step")


def summary_line(report: Report, ctx: RenderContext | None = None) -> str:
    """The verdict line: the counts of the findings in the gate (the ones that can decide the exit code), then how
    many are shown apart because no gated runtime has them, and where they are."""
    apart = [f for c in report.checkpoints for f in c.findings if ctx is not None and ctx.is_outside(c, f)]
    counts = {s: sum(1 for f in report.findings if f.severity is s) - sum(1 for f in apart if f.severity is s)
              for s in Severity}
    line = (f"{len(report.checkpoints)} checkpoint(s): {counts[Severity.ERROR]} error(s), "
            f"{counts[Severity.WARNING]} warning(s), {counts[Severity.INFO]} info")
    if apart and ctx is not None:
        runtimes = " or on ".join(ctx.ungated_runtimes) or "runtimes outside the gate"
        line += f"; {len(apart)} not gated (only on {runtimes})"
    return line
