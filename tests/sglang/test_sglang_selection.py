"""`--runtime sglang[==X]`: the known releases, post releases ordered, unknown ones answered by the nearest row with
a DSP220 warning; the first-step verdict in text and JSON, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from sglang_support import DSPARK_READY, Drafts, T, check

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, contract_for, covers
from dspark_ckpt.sources.local import local_source


@pytest.fixture
def drafts(tmp_path: Path) -> Drafts:
    return Drafts(tmp_path)


def test_sglang_selects_every_known_release_in_order() -> None:
    chosen = [rv.version for rv in parse_selectors(["sglang"])]
    assert chosen == list(SGLANG_VERSIONS) and len(chosen) == 37
    assert chosen[:6] == ["0.4.2", "0.4.3", "0.4.3.post1", "0.4.4", "0.4.4.post2", "0.4.5"] and chosen[-1] == "0.5.23"
    assert chosen[13:19] == ["0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.4.post2", "0.5.5"]
    assert [rv.version for rv in parse_selectors(["sglang>=0.5.20"])] == ["0.5.20", "0.5.21", "0.5.22", "0.5.23"]
    assert [str(rv) for rv in parse_selectors(["sglang==0.5.4.post2"])] == ["sglang==0.5.4.post2"]
    every = [str(rv) for rv in parse_selectors(["all"])]
    assert every[-len(SGLANG_VERSIONS):] == [f"sglang=={v}" for v in SGLANG_VERSIONS]


def test_post_releases_are_ordered_within_their_base_release() -> None:
    """0.5.4.post1 still has 0.5.4's EAGLE-3 code; 0.5.4.post2 already has 0.5.5's."""
    before = contract_for("sglang", "0.5.4.post1", Family.EAGLE3_LLAMA)
    after = contract_for("sglang", "0.5.4.post2", Family.EAGLE3_LLAMA)
    assert before is not None and after is not None
    assert (before.first, before.last, after.first, after.last) == ("0.5.2", "0.5.4.post1", "0.5.4.post2", "0.5.11")
    assert covers(after, "0.5.4.post3") and covers(after, "0.5.11.post1") and not covers(after, "0.5.12")


def _assumed(path: Path, selector: str) -> tuple[list[str], str | None]:
    analysis = analyze(local_source(path), target=TargetVocab(T, "test"), runtimes=parse_selectors([selector]))
    warning = next((f.message for f in analysis.findings if f.code == "DSP220"), None)
    return [v.contract.source for v in analysis.verdicts], warning


def test_unknown_releases_take_the_nearest_row_with_a_warning(drafts: Drafts) -> None:
    path = drafts(vocab=128, draft_vocab=128, config_extra=DSPARK_READY)
    sources, warning = _assumed(path, "sglang==0.5.24")
    assert sources[0].startswith("sglang 0.5.23:") and "; assumed for 0.5.24" in sources[0]
    assert warning == ("sglang==0.5.24: verdict assumed from SGLang 0.5.23 (newer than every release dspark-ckpt "
                       "has read; its loader may differ).")
    _, older = _assumed(path, "sglang==0.4.1")  # registers no draft: not listed (0.4.2 is the first)
    assert older is not None and "sglang==0.4.1: verdict assumed from SGLang 0.4.2 (older than every" in older
    for read in ("sglang==0.4.9", "sglang==0.4.6.post3"):  # listed, or a post read as its base
        assert _assumed(path, read)[1] is None, read
    _, unread = _assumed(path, "sglang==0.5.7.post1")
    assert unread is not None and "not a release dspark-ckpt has read" in unread
    for read in ("sglang==0.5.10.post1", "sglang==0.5.4.post3", "sglang==0.5.23"):
        assert _assumed(path, read)[1] is None, read
    assert check(path, ["sglang==0.5.24"])["0.5.24"].first_step_error == "AssertionError"  # as 0.5.23 says


def test_the_first_step_kind_in_json_and_text(drafts: Drafts, tmp_path: Path) -> None:
    path = drafts(vocab=128, draft_vocab=128, config_extra=DSPARK_READY)
    result = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", "sglang", "--format", "json",
                     "--isolated", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    [doc] = json.loads(result.stdout)["checkpoints"]
    entries = {e["version"]: e for e in doc["compatibility"]}
    assert list(entries) == list(SGLANG_VERSIONS)
    first = entries["0.5.16"]
    assert first["loads"] is True and first["error"] is None and first["first_step_error_code"] == "DSP340"
    assert first["first_step_error"].startswith("The size of tensor a (96) must match the size of tensor b (128)")
    assert first["first_step_error_verbatim"] is True
    assert entries["0.5.15"]["first_step_error"] is None and entries["0.5.15"]["error_code"] == "DSP309"
    finding = next(f for f in doc["findings"] if f["code"] == "DSP340")
    assert finding["severity"] == "error"
    assert finding["message"].startswith("loads on sglang 0.5.16-0.5.21, then fails at the first draft step: ")
    text = run_cli("check", str(path), "--target-vocab-size", str(T), "--runtime", "sglang", "--isolated", "-v",
                   cwd=tmp_path)  # the matrix: the long form
    assert text.returncode == 1
    # the DSP309 releases split where the refusal's words change (models/registry.py before 0.4.7)
    assert "sglang 0.4.2-0.4.6.post5" in text.stdout and "sglang 0.4.7-0.5.15" in text.stdout
    assert "sglang 0.5.16-0.5.21" in text.stdout
    assert "1st step" in text.stdout and "fails at the first draft step" in text.stdout
