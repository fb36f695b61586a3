"""fix checks twice, never three times: the analysis it plans from, and one re-check of the staged copy, whose report
is the one printed (the committed copy is proven to be those files by their identity, not checked again)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.check import analysis
from dspark_ckpt.check.analysis import Analysis
from dspark_ckpt.output.records import finding_json
from dspark_ckpt.repair import recheck

PADDED = dict(vocab=100, draft_vocab=100, target_vocab=96)
VLLM = "vllm>=0.25.0"  # the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first)


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Analysis]]]:
    """Every analysis the command makes: (the folder it read, the Analysis), through the one entry point."""
    seen: list[tuple[str, Analysis]] = []
    real = analysis.analyze_loaded

    def counted(source: Any, loaded: Any, **kwargs: Any) -> Analysis:
        result = real(source, loaded, **kwargs)
        seen.append((str(source.local_folder), result))
        return result

    monkeypatch.setattr(analysis, "analyze_loaded", counted)
    yield seen


@pytest.mark.parametrize("mode", ["out", "in-place"])
def test_fix_analyses_the_draft_once_and_the_staged_copy_once(tmp_path: Path, mode: str,
                                                              analyses: list[tuple[str, Analysis]]) -> None:
    draft = make_checkpoint(tmp_path / "draft", **PADDED)
    out = tmp_path / "out"
    where = ["--out", str(out)] if mode == "out" else ["--in-place"]
    r = run_cli("fix", str(draft), "--target-vocab-size", "96", "--for", VLLM, *where, "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(analyses) == 2, [folder for folder, _ in analyses]
    (planned, _), (staged_at, staged) = analyses
    dest = out if mode == "out" else draft
    assert planned == str(draft.absolute())
    assert staged_at != str(dest.resolve()) and Path(staged_at).parent in (dest.resolve().parent, dest.resolve())
    result = json.loads(r.stdout)["checkpoints"][0]["result"]
    assert result["check_findings"] == [finding_json(f) for f in staged.report.findings]
    assert staged.report.source == str(dest.resolve())  # reported under the destination, not the staging folder
    assert result["check_errors"] == []


def test_the_text_report_is_the_staged_check(tmp_path: Path, analyses: list[tuple[str, Analysis]]) -> None:
    draft = make_checkpoint(tmp_path / "draft", **PADDED)
    r = run_cli("fix", str(draft), "--target-vocab-size", "96", "--for", VLLM, "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(analyses) == 2
    staged = analyses[1][1].report
    loads = [c for c in staged.compatibility if c.loads and not c.first_step_error]
    assert loads and r.stdout.rstrip().splitlines()[-1].startswith("check passes; loads on ")


def test_a_folder_written_after_the_commit_is_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            analyses: list[tuple[str, Analysis]]) -> None:
    """The proof is the identity of the files check read: when one is not the staged file, the report comes from
    a check of what is there."""
    draft = make_checkpoint(tmp_path / "draft", **PADDED)
    out = tmp_path / "out"
    real = recheck.committed_report

    def rewritten(dest: Path, staged: recheck.StagedCheck, plan: Any) -> Any:
        config = dest / "config.json"
        text = config.read_text()
        os.unlink(config)
        config.write_text(text)  # the same bytes, another file
        return real(dest, staged, plan)

    monkeypatch.setattr("dspark_ckpt.repair.apply.committed_report", rewritten)
    r = run_cli("fix", str(draft), "--target-vocab-size", "96", "--for", VLLM, "--out", str(out), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [folder for folder, _ in analyses][2] == str(out.resolve())
    assert len(analyses) == 3
