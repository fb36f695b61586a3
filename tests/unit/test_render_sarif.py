"""SARIF output: valid against the official 2.1.0 schema, rules documented, results located and fingerprinted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.sarif import FINGERPRINT_KEY, sarif_log
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target

SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def report_of(*paths: Path, target: int | None = 96, runtimes: tuple[str, ...] = ("all",)) -> Report:
    rts = parse_selectors(list(runtimes))
    t = explicit_target(target) if target else None
    return Report(tuple(inspect_checkpoint(local_source(p), target=t, runtimes=rts) for p in paths),
                  runtimes=tuple(str(r) for r in rts))


def validate(log: dict[str, Any]) -> None:
    errors = sorted(VALIDATOR.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


@pytest.fixture
def drafts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.chdir(tmp_path)
    return [
        make_checkpoint(Path("clean"), vocab=96, draft_vocab=96, target_vocab=96),
        make_checkpoint(Path("padded"), vocab=96, draft_vocab=120, target_vocab=96),
        make_checkpoint(Path("pruned"), vocab=96, draft_vocab=48, target_vocab=96, d2t="zeros", shards=2),
    ]


def test_schema_file_is_the_official_one() -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert {"run", "result", "reportingDescriptor", "location"} <= set(SCHEMA["definitions"])
    assert len(SCHEMA["definitions"]) == 52


def test_log_validates_and_schema_rejects_a_broken_one(drafts: list[Path], tmp_path: Path) -> None:
    log = sarif_log(report_of(*drafts), RenderContext(tool_version="0.1.0", root=tmp_path))
    validate(log)
    assert log["runs"][0]["results"], "the padded and pruned drafts must produce results"
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert list(VALIDATOR.iter_errors(broken)), "the validator must be able to fail"


def test_rules_carry_the_catalog(drafts: list[Path], tmp_path: Path) -> None:
    rules = sarif_log(report_of(*drafts), RenderContext(root=tmp_path))["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    for r in rules:
        doc = RULES[r["id"]]
        assert r["shortDescription"]["text"] == doc.summary and r["fullDescription"]["text"] == doc.what
        assert doc.fix in r["help"]["text"] and doc.why in r["help"]["markdown"]
        assert r["name"] and " " not in r["name"]
        level = {"error": "error", "warning": "warning", "info": "note"}[doc.severity]
        assert r["defaultConfiguration"]["level"] == level


def test_results_point_at_files_with_line_one(drafts: list[Path], tmp_path: Path) -> None:
    report = report_of(*drafts)
    log = sarif_log(report, RenderContext(root=tmp_path))
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    results = log["runs"][0]["results"]
    assert len(results) == len(report.findings)
    for result, f in zip(results, report.findings):
        assert result["ruleId"] == f.code and rules[result["ruleIndex"]]["id"] == f.code
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity.value]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["region"] == {"startLine": 1}
        uri = physical["artifactLocation"]["uri"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert (tmp_path / uri).exists(), f"{uri} is not a file of the checkpoint"
        if f.file:
            assert uri.endswith(f.file)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "padded/config.json" in uris  # contract findings name no file: they point at the config


def test_fingerprints_are_unique_and_stable(drafts: list[Path], tmp_path: Path) -> None:
    first = sarif_log(report_of(*drafts), RenderContext(root=tmp_path))["runs"][0]["results"]
    again = sarif_log(report_of(*drafts), RenderContext(root=tmp_path))["runs"][0]["results"]
    prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in first]
    assert len(set(prints)) == len(prints)
    assert prints == [r["partialFingerprints"][FINGERPRINT_KEY] for r in again]


def test_absolute_paths_outside_root_become_file_uris(drafts: list[Path], tmp_path: Path) -> None:
    elsewhere = tmp_path / "root-elsewhere"
    elsewhere.mkdir()
    report = report_of(drafts[1].absolute())
    log = sarif_log(report, RenderContext(root=elsewhere))
    validate(log)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"].startswith("file:///") and "uriBaseId" not in artifact


def test_hostile_text_stays_valid(tmp_path: Path) -> None:
    report = report_of(make_checkpoint(tmp_path / "we ird,%:dir", vocab=96, draft_vocab=120, target_vocab=96))
    hostile = Finding("DSP406", Severity.WARNING, "bad \x00 name \ud800 and\nnewline", file="a b%.safetensors",
                      tensor="t\x01\n::error::x")
    c = report.checkpoints[0]
    report = Report((c.__class__(**{**{k: getattr(c, k) for k in c.__slots__}, "findings": (hostile,)}),))
    log = sarif_log(report, RenderContext(root=tmp_path))
    validate(log)
    text = json.dumps(log)  # ensure_ascii escapes control characters and lone surrogates
    assert "\x00" not in text and "we%20ird%2C%25%3Adir/a%20b%25.safetensors" in text
