"""Focused tests of output/escape.py, output/locations.py and output/runs.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dspark_ckpt.check.batch import unavailable_report
from dspark_ckpt.errors import SourceError
from dspark_ckpt.model.findings import finding
from dspark_ckpt.model.report import Compatibility
from dspark_ckpt.output import escape
from dspark_ckpt.output.locations import artifact_uri, finding_path, relative_to
from dspark_ckpt.output.runs import runs

# --- escape.py ---


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),  # an OSC title sequence: ESC and BEL made visible
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
    ("\u202eevil", "\\u202eevil"),  # right-to-left override
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("\x7f\x85", "\\x7f\\x85"),  # DEL and a C1 control
    ("tag\U000e0041", "tag\\U000e0041"),  # a language tag character
    ("bad\udc80byte", "bad\\x80byte"),  # surrogateescape: the file system's byte 0x80
    ("plain café 日本", "plain café 日本"),  # printable non-ASCII passes
])
def test_visible(raw: str, shown: str) -> None:
    assert escape.visible(raw) == shown


def test_visible_keep_lines_passes_tab_lf_cr_only() -> None:
    assert escape.visible_keep_lines("a\tb\nc\rd") == "a\tb\nc\rd"
    assert escape.visible_keep_lines("a\x1b[31m\x0bb") == "a\\x1b[31m\\x0bb"


def test_cut_says_how_long_the_value_was() -> None:
    assert escape.cut("short", 10) == "short"
    text = "x" * 25
    out = escape.cut(text, 10)
    assert out.startswith("x" * 10 + "...") and "25 characters" in out and "x" * 11 not in out


def test_terminal_breaks_workflow_commands_and_cuts_before_escaping() -> None:
    assert "::" not in escape.terminal("::error::boom")
    assert escape.terminal("::set-output name=x::1").startswith(":\\x3a")
    # a value of 3000 escapes is cut to the limit first: its shown form is bounded by the limit's escapes
    shown = escape.terminal("\x1b" * 3000, limit=5)
    assert shown.startswith("\\x1b" * 5 + "...") and "3,000 characters" in shown


def test_json_string_keeps_text_and_escapes_only_lone_surrogates() -> None:
    assert escape.json_string("ascii") == "ascii"
    assert escape.json_string("\x1b and \u202e") == "\x1b and \u202e"  # JSON escapes controls itself
    fixed = escape.json_string("name\udcff")
    assert fixed == "name\\xff"
    json.dumps(fixed).encode("utf-8")  # strict: encodable


def test_json_safe_walks_keys_and_nested_values() -> None:
    doc = {"k\udc80": ["v\udc81", ("t\udc82",), 3, None], "n": {"inner\udc83": True}}
    assert escape.json_safe(doc) == {"k\\x80": ["v\\x81", ["t\\x82"], 3, None], "n": {"inner\\x83": True}}
    json.dumps(escape.json_safe(doc)).encode("utf-8")


# --- locations.py ---

def _report(source: str):  # type: ignore[no-untyped-def]
    return unavailable_report(source, SourceError("x", code="DSP-E110"))


def test_finding_path_of_a_folder_and_of_a_single_file() -> None:
    folder = _report("models/draft")
    assert finding_path(folder, finding("DSP301", "m", file="model-00002-of-00002.safetensors")) == \
        "models/draft/model-00002-of-00002.safetensors"
    assert finding_path(folder, finding("DSP301", "m")) == "models/draft/config.json"
    single = _report("models/draft/model.safetensors")
    assert finding_path(single, finding("DSP301", "m")) == "models/draft/model.safetensors"
    assert finding_path(single, finding("DSP301", "m", file="config.json")) == "models/draft/model.safetensors"
    assert finding_path(single, finding("DSP301", "m", file="d2t.safetensors")) == "models/draft/d2t.safetensors"
    windows = _report("models\\draft")
    assert finding_path(windows, finding("DSP301", "m")) == "models/draft/config.json"


def test_relative_to_and_artifact_uri(tmp_path: Path) -> None:
    inside = str(tmp_path / "a b" / "config.json")
    assert relative_to(inside, tmp_path) == "a b/config.json"
    assert relative_to("/elsewhere/config.json", tmp_path) == "/elsewhere/config.json"
    assert relative_to("org/repo/config.json", tmp_path) == "org/repo/config.json"
    assert artifact_uri(inside, tmp_path) == ("a%20b/config.json", True)
    uri, relative = artifact_uri("/elsewhere/x y.json", tmp_path)
    assert uri == "file:///elsewhere/x%20y.json" and not relative


# --- runs.py ---

def _c(runtime: str, version: str, loads: bool = True, code: str | None = None) -> Compatibility:
    return Compatibility(runtime, version, loads, f"error {code}" if code else None, code, (), (), True, "src")


def test_consecutive_sglang_releases_with_one_verdict_fold_into_one_row() -> None:
    entries = [_c("vllm", "0.29.0"), _c("vllm", "0.30.0"),
               _c("sglang", "0.5.14", False, "DSP309"), _c("sglang", "0.5.15", False, "DSP309"),
               _c("sglang", "0.5.16"), _c("sglang", "0.5.17"), _c("sglang", "0.5.18"),
               _c("sglang", "0.5.19", False, "DSP340"), _c("sglang", "0.5.20")]
    found = runs(entries)
    assert [r.label for r in found] == ["vllm 0.29.0-0.30.0", "sglang 0.5.14-0.5.15", "sglang 0.5.16-0.5.18",
                                        "sglang 0.5.19", "sglang 0.5.20"]
    assert found[0].entry is entries[0] and found[1].entry is entries[2] and found[2].entry is entries[4]


def test_vllm_releases_with_the_same_verdict_fold_as_sglang_ones() -> None:
    """Consecutive vLLM releases with one verdict are one row (`vllm 0.20.0-0.24.0`); another verdict between them
    breaks the run."""
    entries = [_c("vllm", v) for v in ("0.31.0", "0.32.0", "0.33.0")]
    assert [r.label for r in runs(entries)] == ["vllm 0.31.0-0.33.0"]
    broken = [_c("vllm", "0.31.0"), _c("vllm", "0.32.0", False, "DSP302"), _c("vllm", "0.33.0")]
    assert [r.label for r in runs(broken)] == ["vllm 0.31.0", "vllm 0.32.0", "vllm 0.33.0"]
    assert runs([]) == []


def test_a_vllm_entry_between_sglang_ones_breaks_the_run() -> None:
    entries = [_c("sglang", "0.5.16"), _c("vllm", "0.30.0"), _c("sglang", "0.5.17")]
    assert [r.label for r in runs(entries)] == ["sglang 0.5.16", "vllm 0.30.0", "sglang 0.5.17"]
