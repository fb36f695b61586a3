"""GitHub workflow commands: escaping as @actions/core does it, one command per line whatever the text holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.github import annotation, escape_data, escape_property
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target

COMMAND = re.compile(r"^::(?P<cmd>error|warning|notice) (?P<props>[^:]*)::(?P<msg>.*)$")


def unescape(text: str) -> str:
    """The runner's decoding: each escape back to its character, %25 last so it cannot create new escapes."""
    for escape, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escape, char)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, f"not a workflow command: {line!r}"
    props = dict(p.split("=", 1) for p in match["props"].split(","))
    return match["cmd"], {k: unescape(v) for k, v in props.items()}, unescape(match["msg"])


@pytest.mark.parametrize(("raw", "data", "prop"), [
    ("100%", "100%25", "100%25"),
    ("a\rb", "a%0Db", "a%0Db"),
    ("a\nb", "a%0Ab", "a%0Ab"),
    ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
    ("k:v", "k:v", "k%3Av"),
    ("a,b", "a,b", "a%2Cb"),
    ("%0A", "%250A", "%250A"),  # an escape-looking input is not decoded into a newline by the runner
    ("x::error::y", "x::error::y", "x%3A%3Aerror%3A%3Ay"),
])
def test_escaping(raw: str, data: str, prop: str) -> None:
    assert escape_data(raw) == data
    assert escape_property(raw) == prop
    assert unescape(prop) == raw


def _checkpoint(tmp_path: Path, name: str) -> CheckpointReport:
    path = make_checkpoint(tmp_path / name, vocab=96, draft_vocab=120, target_vocab=96)
    return inspect_checkpoint(local_source(path), target=explicit_target(96), runtimes=parse_selectors(["all"]))


def test_annotations_round_trip_hostile_text(tmp_path: Path) -> None:
    c = _checkpoint(tmp_path, "odd, name: 100%")
    hostile = Finding("DSP406", Severity.WARNING, "line one\r\nline two\n::error::injected 50%",
                      file="model.safetensors", tensor="w,1:x", hint="a\nb")
    line = annotation(c, hostile, RenderContext(root=tmp_path))
    assert "\n" not in line and "\r" not in line
    cmd, props, message = parse(line)
    assert cmd == "warning"
    assert props == {"file": "odd, name: 100%/model.safetensors", "line": "1", "title": "DSP406 mapping-unreadable"}
    assert message == "w,1:x: line one\r\nline two\n::error::injected 50%\nhint: a\nb"


def test_severity_maps_to_command_and_contract_findings_point_at_config(tmp_path: Path) -> None:
    c = _checkpoint(tmp_path, "padded")
    ctx = RenderContext(root=tmp_path)
    lines = [annotation(c, f, ctx) for f in c.findings]
    assert lines, "a padded draft has findings"
    for f, line in zip(c.findings, lines):
        cmd, props, _ = parse(line)
        assert cmd == {"error": "error", "warning": "warning", "info": "notice"}[f.severity.value]
        assert props["file"] == ("padded/" + (f.file or "config.json"))
        assert props["title"].startswith(f.code)
