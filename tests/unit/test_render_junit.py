"""JUnit XML: parsed back with a real XML parser; one test case per (checkpoint, check)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import make_checkpoint
from rich.console import Console

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import Report
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.junit import CHECKED, junit_tree, xml_safe
from dspark_ckpt.output.table import RENDERERS
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target


def _report(tmp_path: Path, runtimes: list[str]) -> Report:
    rts = parse_selectors(runtimes)
    clean = make_checkpoint(tmp_path / "clean", vocab=96, draft_vocab=96, target_vocab=96)
    padded = make_checkpoint(tmp_path / "padded", vocab=96, draft_vocab=120, target_vocab=96)
    return Report(tuple(inspect_checkpoint(local_source(p), target=explicit_target(96), runtimes=rts)
                        for p in (clean, padded)), runtimes=tuple(str(r) for r in rts))


def _xml(report: Report, fail_on: Severity = Severity.ERROR) -> ET.Element:
    buffer = io.StringIO()
    RENDERERS["junit"](report, Console(file=buffer, width=100), RenderContext(fail_on=fail_on))
    text = buffer.getvalue()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text.encode("utf-8"))


def test_one_case_per_family_and_runtime_range(tmp_path: Path) -> None:
    """One case per rule family, then one per run of consecutive releases of a runtime with the same outcome:
    the runs cover every compatibility entry once, in order, and two neighbouring runs differ in outcome."""
    report = _report(tmp_path, ["vllm==0.29.0", "sglang"])
    root = _xml(report)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [c.source for c in report.checkpoints]
    families = [category.value for category in CHECKED]
    for suite, c in zip(suites, report.checkpoints):
        names = [case.get("name") for case in suite.findall("testcase")]
        assert names[:len(families)] == families
        runs, entries = names[len(families):], list(c.compatibility)
        covered: list[list[object]] = []
        for name in runs:
            runtime, _, span = name.removeprefix("runtime ").partition(" ")
            if span:  # "sglang 0.5.16-0.5.23": from the entry of its first release to that of its last
                low, high = span.split("-")
                first = next(i for i, e in enumerate(entries) if e.runtime == runtime and e.version == low)
                last = next(i for i, e in enumerate(entries) if e.runtime == runtime and e.version == high)
                covered.append(entries[first:last + 1])
            else:
                covered.append([entries[len(sum(covered, []))]])
        assert sum(covered, []) == entries
        outcome = [{(e.loads, e.error_code, e.first_step_error_code, e.silent_codes) for e in run} for run in covered]
        assert all(len(o) == 1 for o in outcome)
        assert all(a != b or x[0].runtime != y[0].runtime
                   for (a, b, x, y) in zip(outcome, outcome[1:], covered, covered[1:]))
        assert suite.get("tests") == str(len(names))
    assert root.get("tests") == str(sum(len(s.findall("testcase")) for s in suites))


def test_failures_follow_findings_and_fail_on(tmp_path: Path) -> None:
    # SGLang releases that register Qwen3DSparkModel (0.5.16+), with the markov_head_type/mask_token_id they need.
    ready = {"markov_head_type": "vanilla", "mask_token_id": 0}
    rts = parse_selectors(["vllm==0.29.0", "sglang>=0.5.16"])
    report = Report(tuple(inspect_checkpoint(local_source(make_checkpoint(tmp_path / name, vocab=96, draft_vocab=d,
                                                                          target_vocab=96, config_extra=ready)),
                                             target=explicit_target(96), runtimes=rts)
                          for name, d in (("clean", 96), ("padded", 120))), runtimes=tuple(str(r) for r in rts))
    root = _xml(report)
    clean, padded = root.findall("testsuite")
    assert clean.get("failures") == "0" and not clean.findall(".//failure")
    failed = {case.get("name"): case.find("failure") for case in padded.findall("testcase")
              if case.find("failure") is not None}
    # markov_w2 has D = 120 rows, SGLang wants V: the same failure in every release 0.5.16-0.5.23 is one case.
    assert set(failed) == {"runtime vllm==0.29.0", "runtime sglang 0.5.16-0.5.23"}
    assert failed["runtime vllm==0.29.0"].get("type") == "DSP302"
    assert failed["runtime sglang 0.5.16-0.5.23"].get("type") == "DSP323"
    assert padded.get("failures") == "2" and root.get("failures") == "2"
    # Every finding is reported in some test case, as a failure or as output.
    text = ET.tostring(padded, encoding="unicode")
    assert all(f.code in text for f in report.checkpoints[1].findings)


def test_below_fail_on_is_output_not_failure(tmp_path: Path) -> None:
    c = _report(tmp_path, ["sglang"]).checkpoints[0]
    warning = Finding("DSP305", Severity.WARNING, "nothing masks rows")
    report = Report((c.__class__(**{**{k: getattr(c, k) for k in c.__slots__}, "findings": (warning,)}),))
    assert not _xml(report).findall(".//failure")
    assert "DSP305" in (_xml(report).find(".//system-out").text or "")
    assert _xml(report, Severity.WARNING).find(".//failure").get("type") == "DSP305"


def test_control_characters_and_surrogates_still_parse(tmp_path: Path) -> None:
    c = _report(tmp_path, ["sglang"]).checkpoints[0]
    hostile = Finding("DSP406", Severity.ERROR, "name \x00\x1b[31m \ud800 <tag> & ]]>", tensor="t\x07")
    report = Report((c.__class__(**{**{k: getattr(c, k) for k in c.__slots__}, "findings": (hostile,)}),))
    failure = _xml(report).find(".//failure")
    assert failure is not None
    assert "\\x00\\x1b[31m \\ud800 <tag> & ]]>" in failure.get("message")
    assert xml_safe("tab\tok\nnew") == "tab\tok\nnew"


def test_tree_counts_add_up(tmp_path: Path) -> None:
    root = junit_tree(_report(tmp_path, ["all"]), RenderContext())
    cases = root.findall(".//testcase")
    assert int(root.get("tests")) == len(cases)
    assert int(root.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
