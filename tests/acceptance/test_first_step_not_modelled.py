"""Through the CLI: a row that loads says what is known of its first draft step (`first_step`: fails, ran or
not_modelled, with a registered reason where nothing executed the release's step), in every format that shows the
row; it is not a failure (the exit code is the same as without it). The modelled verify reports the same vLLM first
step (DSP371) check does for the same draft and release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.runtimes.step_reasons import REASONS

T = 96


def rows(result: Any) -> dict[str, dict[str, Any]]:
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    return {f"{c['runtime']}=={c['version']}": c for c in checkpoint["compatibility"]}


def check_json(tmp_path: Path, draft: Path, *runtimes: str) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run_cli("check", str(draft), "--target-vocab-size", str(T), *(a for r in runtimes for a in
                                                                          ("--runtime", r)),
                     "--format", "json", cwd=tmp_path)
    return result.returncode, rows(result)


def test_each_loading_row_says_ran_fails_or_not_modelled_and_why(tmp_path: Path) -> None:
    """A pruned EAGLE-3 draft with its head and d2t: 0.34.0's recorded step ran; 0.20.0's was never run (before
    the probe's releases); the step of a relation no file holds (V < T < D) is not modelled on 0.34.0."""
    draft = make_checkpoint(tmp_path / "pruned", family="eagle3-llama", vocab=96, draft_vocab=64, target_vocab=T,
                            d2t=True, markov=False)
    code, found = check_json(tmp_path, draft, "vllm==0.34.0", "vllm==0.20.0")
    assert code == 0, found
    ran, old = found["vllm==0.34.0"], found["vllm==0.20.0"]
    assert ran["loads"] and ran["first_step"] == "ran" and ran["first_step_not_modelled_why"] is None, ran
    assert old["loads"] and old["first_step"] == "not_modelled", old
    assert old["first_step_not_modelled_why"] == "vllm-release-not-run" and old["first_step_error"] is None
    assert old["first_step_not_modelled"] == REASONS["vllm-release-not-run"].words
    text = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.20.0", "-v",
                   cwd=tmp_path)
    assert text.returncode == 0
    assert "first step not modelled: this release's first step is not run by the probe (vllm-release-not-run)" \
        in text.stdout
    quiet = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.20.0", cwd=tmp_path)
    assert quiet.returncode == 0 and "not modelled" not in quiet.stdout  # the default report: findings only
    md = run_cli("check", str(draft), "--target-vocab-size", str(T), "--runtime", "vllm==0.20.0", "--format",
                 "markdown", cwd=tmp_path)
    assert "✅ yes | first step not modelled:" in md.stdout and md.returncode == 0


def test_a_relation_no_release_recorded_is_not_modelled_and_exits_as_before(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "odd", family="eagle3-llama", vocab=64, draft_vocab=128, target_vocab=T,
                            markov=False)
    code, found = check_json(tmp_path, draft, "vllm==0.34.0")
    row = found["vllm==0.34.0"]
    if not row["loads"]:
        pytest.skip(f"0.34.0 refuses this draft at load: {row['error_code']}")
    assert row["first_step"] == "not_modelled" and row["first_step_not_modelled_why"] == "vllm-relation-not-recorded"
    assert "V = 64, D = 128, T = 96" in row["first_step_not_modelled"]
    assert code == (1 if any(c["error_code"] or c["first_step_error_code"] for c in found.values()) else 0)


def test_a_row_that_does_not_load_has_no_first_step(tmp_path: Path) -> None:
    draft = make_checkpoint(tmp_path / "d2t", family="eagle3-llama", vocab=96, draft_vocab=96, target_vocab=T,
                            d2t=True, markov=False)  # 0.30+: no d2t parameter where D == T
    code, found = check_json(tmp_path, draft, "vllm==0.34.0")
    row = found["vllm==0.34.0"]
    assert code == 1 and not row["loads"] and row["first_step"] is None and row["first_step_not_modelled_why"] is None


def test_sglang_rows_say_whether_their_step_was_recorded(tmp_path: Path) -> None:
    """EAGLE-3: recorded from SGLang 0.5.12; an older release's row says its step was not recorded."""
    draft = make_checkpoint(tmp_path / "pruned", family="eagle3-llama", vocab=96, draft_vocab=64, target_vocab=T,
                            d2t=True, markov=False)
    _, found = check_json(tmp_path, draft, "sglang==0.5.23", "sglang==0.5.10")
    new, old = found["sglang==0.5.23"], found["sglang==0.5.10"]
    assert new["loads"] and new["first_step"] in ("ran", "fails") and new["first_step_not_modelled_why"] is None
    assert old["loads"] and old["first_step"] == "not_modelled", old
    assert old["first_step_not_modelled_why"] == "sglang-step-not-recorded"


def test_the_modelled_verify_reports_the_first_step_check_reports(tmp_path: Path) -> None:
    """An expanded EAGLE-3 draft (V > D = T): vLLM 0.34.0 loads it, then compute_logits asserts (the recorded
    execution, DSP371); `verify` without --engine reports that row as check does, and the not-modelled flag of a
    release the probe never ran."""
    draft = make_checkpoint(tmp_path / "expanded", family="eagle3-llama", vocab=128, draft_vocab=T, target_vocab=T,
                            markov=False)
    runtimes = ("--runtime", "vllm==0.34.0", "--runtime", "vllm==0.20.0")
    checked = run_cli("check", str(draft), "--target-vocab-size", str(T), *runtimes, "--format", "json",
                      cwd=tmp_path)
    verified = run_cli("verify", str(draft), "--target-vocab-size", str(T), *runtimes, "--probe", "0",
                       "--device", "cpu", "--format", "json", cwd=tmp_path)
    assert checked.returncode == verified.returncode == 1, verified.stderr
    said, seen = rows(checked), rows(verified)
    keys = ("loads", "first_step", "first_step_error", "first_step_error_code", "first_step_not_modelled_why")
    for name in ("vllm==0.34.0", "vllm==0.20.0"):
        assert {k: seen[name][k] for k in keys} == {k: said[name][k] for k in keys}, name
    assert seen["vllm==0.34.0"]["first_step_error_code"] == "DSP371"
    assert seen["vllm==0.34.0"]["first_step_error"] == ("AssertionError: Expected logits to have shape (*, 128), "
                                                         "but got torch.Size([2, 96])")
    assert seen["vllm==0.20.0"]["first_step"] == "not_modelled"
    (checkpoint,) = json.loads(verified.stdout)["checkpoints"]
    assert "DSP371" in {f["code"] for f in checkpoint["findings"]}


def test_every_reason_is_registered_with_its_words() -> None:
    """The keys are published; each has a short line and words that format with the fields its callers give."""
    fields = {"family": "dflash", "relation": "V = 1, D = 2, T = 3", "step": "eagle3"}
    for key, reason in REASONS.items():
        assert key == key.lower() and " " not in key and reason.short and len(reason.short) <= 70, key
        assert "{" not in reason.words.format_map(fields), key
