"""Markdown summary: tables that hostile text cannot break, and the policy's verdict in the heading."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.markdown import cell, markdown
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target


def _report(tmp_path: Path) -> Report:
    path = make_checkpoint(tmp_path / "padded", vocab=96, draft_vocab=120, target_vocab=96)
    rts = parse_selectors(["vllm==0.29.0", "sglang"])
    return Report((inspect_checkpoint(local_source(path), target=explicit_target(96), runtimes=rts),))


def test_cell_escapes_what_would_break_a_row() -> None:
    assert cell("a|b") == "a\\|b"
    assert cell("x\ny\r") == "x<br>y "
    assert cell("<script>&") == "&lt;script&gt;&amp;"
    assert cell("`code`") == "\\`code\\`"


def test_summary_lists_runtimes_and_findings(tmp_path: Path) -> None:
    report = _report(tmp_path)
    text = markdown(report, RenderContext())
    # SGLang: not registered before 0.5.16 (DSP309), then no markov_head_type in this config (DSP344).
    assert text.startswith("## dspark-ckpt: ❌ 3 finding(s) at or above error")
    assert "| vllm 0.29.0 | ❌ no | DSP302:" in text
    # (before 0.4.7 models/registry.py refuses the name in other words: a row of its own)
    assert "| sglang 0.4.2-0.4.6.post5 | ❌ no | DSP309:" in text and "| sglang 0.4.7-0.5.15 | ❌ no | DSP309:" in text
    assert "| sglang 0.5.16-0.5.23 | ❌ no | DSP344:" in text
    rows = [line for line in text.splitlines() if line.startswith("| 🔴") or line.startswith("| 🟡")]
    assert len(rows) == len(report.findings)
    assert "✅ no finding at or above error" in markdown(Report(()), RenderContext())


def test_hostile_finding_stays_in_one_row(tmp_path: Path) -> None:
    c = _report(tmp_path).checkpoints[0]
    hostile = Finding("DSP406", Severity.WARNING, "a | b\n| c | d |", tensor="x|y")
    report = Report((c.__class__(**{**{k: getattr(c, k) for k in c.__slots__}, "findings": (hostile,)}),))
    rows = [line for line in markdown(report, RenderContext()).splitlines() if "DSP406" in line]
    assert len(rows) == 1
    assert len(re.findall(r"(?<!\\)\|", rows[0])) == 5  # four cells; every pipe from the text is escaped
